// `workbench-cli quantize IN OUT --type TYPE`: writes a quantized copy of a
// GGUF model with llama.cpp's per-tensor mix rules (engine/quant/
// quantize_model.h says exactly what is kept, converted and why), through
// the same quantize::QuantizeJob as the GUI's quantize dialog. The type
// chosen for each tensor, the reason where it is not the file type's main
// type, and the summary (bits per weight, tensors per type) go to stderr;
// stdout stays empty so scripts can pipe.

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "ggml/types.h"
#include "quantize/quantize_job.h"

namespace wb::cli {

namespace {

std::string accepted_types() {
    std::string s;
    for (const quant::TargetInfo& t : quant::all_targets())
        s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

std::string type_help() {
    std::string s;
    for (const quant::TargetInfo& t : quant::all_targets()) {
        char line[160];
        std::snprintf(line, sizeof line, "  %-7s %s\n", t.name, t.summary);
        s += line;
    }
    return s;
}

const CommandSpec& spec() {
    static const CommandSpec s{
        "quantize",
        "IN OUT",
        "Write a quantized copy of a GGUF model (F16, Q8_0, K-quant mixes, Q4_0/Q4_1/Q5_0/Q5_1, "
        "IQ4_NL).",
        "Copies IN's metadata, sets general.file_type (llama.cpp's LLAMA_FTYPE) and\n"
        "general.quantization_version = 2, and converts the weight matrices with\n"
        "ggml's reference quantizers, choosing each tensor's type by llama.cpp's mix\n"
        "rules (llama-quantize without an importance matrix): output / tied\n"
        "embeddings get Q6_K, the K mixes give some attn_v, ffn_down and\n"
        "attn_output more bits, and a row length a type's blocks do not divide\n"
        "falls back (Q4_K -> Q5_0, Q6_K -> Q8_0, ...). The blocks and the tensor\n"
        "types equal llama-quantize's. 1-D tensors (norms) are copied as stored. A\n"
        "row length that is not a multiple of 32 is written as F16 (llama-quantize\n"
        "refuses such a model). Tensor data is streamed, so memory use stays small.\n"
        "A source value (or block scale) that is NaN or infinite is refused, naming\n"
        "the tensor and the block, and no output is left.\n"
        "\n"
        "Types:\n" +
            type_help(),
        {
            {"type", 't', "TYPE", "target file type (required): " + accepted_types()},
            {"pure", 0, "",
             "every weight at TYPE's tensor type, no mix rules (llama-quantize --pure)"},
            {"quiet", 'q', "", "print only the summary, no per-tensor lines"},
        },
        2,
        2,
    };
    return s;
}

}  // namespace

int cmd_quantize(const std::vector<std::string>& argv) {
    const CommandSpec& kSpec = spec();
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const auto type = args.get("type");
    if (!type) throw UsageError("quantize: --type is required (" + accepted_types() + ")");
    quant::Target target;
    try {
        target = quant::parse_target(*type);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("quantize: --type: ") + e.what());
    }
    const std::string& in = args.positional[0];
    const std::string& out = args.positional[1];
    const bool quiet = args.has("quiet");
    quantize::Request req;
    req.input = in;
    req.output = out;
    req.target = target;
    req.options.pure = args.has("pure");
    const quant::QuantizeOptions opts = req.options;  // a copy: req is moved into the job

    // Errors leave as the job throws them (quantize::Error, its message
    // naming the file); main prints them. No partial output is left.
    quantize::QuantizeJob job(std::move(req));
    const quant::QuantizeReport report = job.run([&](const quantize::Progress& pr) {
        if (quiet) return;
        const quant::TensorPlan& p = pr.plan;
        std::fprintf(stderr, "[%3zu/%zu] %-28s %-12s %6s -> %-6s%s%s\n", pr.index + 1, pr.count,
                     p.name.c_str(), p.shape.c_str(), ggml::type_upper_name(p.src_type).c_str(),
                     ggml::type_upper_name(p.dst_type).c_str(), p.note.empty() ? "" : "  ",
                     p.note.c_str());
    });

    const std::string mix = report.type_mix();
    std::fprintf(
        stderr,
        "wrote %s: %s%s, %.2f bpw, %zu tensors (%s), %" PRIu64 " -> %" PRIu64 " bytes (%.1f%%)\n",
        out.c_str(), quant::target_info(target).upper, opts.pure ? " (pure)" : "", report.bpw(),
        report.tensors.size(), mix.c_str(), report.input_bytes, report.output_bytes,
        report.input_bytes ? 100.0 * static_cast<double>(report.output_bytes) /
                                 static_cast<double>(report.input_bytes)
                           : 0.0);
    return 0;
}

}  // namespace wb::cli
