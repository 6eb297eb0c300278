// `workbench-cli synth --shape NAME --type TYPE OUT`: writes a random-weight
// model in the shape of a published one (TinyLlama-1.1B, Llama-2-7B,
// Mistral-7B, Llama-3-8B, Qwen2.5-0.5B/1.5B) in any file type `quantize`
// writes, with llama-quantize's per-tensor types (engine/quant/
// synth_model.h), so `bench` measures real matrix sizes without a download.
// Progress and the summary go to stderr.

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "ggml/types.h"
#include "quant/synth_model.h"

namespace wb::cli {

namespace {

std::string shape_help() {
    std::string s;
    for (const quant::SynthShape& x : quant::synth_shapes()) {
        char line[200];
        std::snprintf(line, sizeof line,
                      "  %-15s %-16s %-6s vocab %6u, n_embd %4u, %2u layers, %2u heads, %2u KV "
                      "heads, n_ff %5u%s\n",
                      x.name.c_str(), x.like.c_str(), x.arch.c_str(), x.n_vocab, x.n_embd,
                      x.n_layer, x.n_head, x.n_head_kv, x.n_ff, x.tied ? ", tied" : "");
        s += line;
    }
    return s;
}

std::string accepted_types() {
    std::string s;
    for (const quant::TargetInfo& t : quant::all_targets())
        s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

const CommandSpec& spec() {
    static const CommandSpec s{
        "synth",
        "OUT",
        "Write a random-weight model in a real model's shape (for benchmarks).",
        "Writes OUT, a GGUF model with the hyperparameters and tensor shapes of a\n"
        "published model and random weights, directly in file type TYPE: the\n"
        "tensor types follow llama-quantize's mix rules (a synthesized Q4_K_M has\n"
        "the tensor types and sizes of a downloaded Q4_K_M). Weights are\n"
        "approximately normal (--std), norms 1; the vocabulary is a placeholder,\n"
        "so generated text is meaningless. Same --seed, same file. --layers and\n"
        "--vocab shrink a shape for quick runs.\n"
        "\n"
        "Shapes (aliases: tinyllama, 7b, mistral, 8b, 0.5b, 1.5b):\n" +
            shape_help(),
        {
            {"shape", 's', "NAME", "model shape (required): " + quant::synth_shape_names()},
            {"type", 't', "TYPE", "file type (default: f16): " + accepted_types()},
            {"seed", 0, "N", "random seed (default: 1)"},
            {"std", 0, "X", "standard deviation of the matrix weights (default: 0.02)"},
            {"threads", 0, "N", "quantizer threads (default: all cores)"},
            {"layers", 0, "N", "override the shape's layer count"},
            {"vocab", 0, "N", "override the shape's vocabulary size (at least 259)"},
            {"quiet", 'q', "", "print only the summary, no per-tensor lines"},
        },
        1,
        1,
    };
    return s;
}

}  // namespace

int cmd_synth(const std::vector<std::string>& argv) {
    const CommandSpec& kSpec = spec();
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const auto shape_name = args.get("shape");
    if (!shape_name)
        throw UsageError("synth: --shape is required (" + quant::synth_shape_names() + ")");
    const quant::SynthShape* found = quant::find_synth_shape(*shape_name);
    if (!found) {
        throw UsageError("synth: --shape: unknown shape '" + *shape_name +
                         "' (known: " + quant::synth_shape_names() + ")");
    }
    quant::SynthShape shape = *found;
    shape.n_layer = static_cast<uint32_t>(args.get_int("layers", shape.n_layer, 1, 1024));
    shape.n_vocab = static_cast<uint32_t>(args.get_int("vocab", shape.n_vocab, 259, 1 << 20));
    quant::Target target = quant::Target::F16;
    if (const auto type = args.get("type")) {
        try {
            target = quant::parse_target(*type);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("synth: --type: ") + e.what());
        }
    }
    quant::SynthOptions opts;
    opts.seed = static_cast<uint64_t>(args.get_int("seed", 1, 0, INT64_MAX));
    opts.threads = static_cast<unsigned>(args.get_int("threads", 0, 0, 256));
    opts.weight_std = static_cast<float>(args.get_double("std", 0.02, 1e-6, 10.0));
    const bool quiet = args.has("quiet");
    const std::string& out = args.positional[0];

    const quant::QuantizeReport report = quant::synth_model(
        shape, target, out,
        [&](size_t i, size_t n, const quant::TensorPlan& p) {
            if (quiet) return;
            std::fprintf(stderr, "[%3zu/%zu] %-28s %-14s %-6s%s%s\n", i + 1, n, p.name.c_str(),
                         p.shape.c_str(), ggml::type_upper_name(p.dst_type).c_str(),
                         p.note.empty() ? "" : "  ", p.note.c_str());
        },
        opts);

    const std::string mix = report.type_mix();
    uint64_t n_params = 0;
    for (const quant::TensorPlan& p : report.tensors) n_params += p.n_elements;
    std::fprintf(stderr,
                 "wrote %s: %s shape (%u layers, vocab %u), %s, %.2f bpw, %.3fB parameters, %zu "
                 "tensors (%s), %" PRIu64 " bytes\n",
                 out.c_str(), shape.like.c_str(), shape.n_layer, shape.n_vocab,
                 quant::target_info(target).upper, report.bpw(),
                 static_cast<double>(n_params) * 1e-9, report.tensors.size(), mix.c_str(),
                 report.output_bytes);
    return 0;
}

}  // namespace wb::cli
