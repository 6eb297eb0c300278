// `workbench-cli info [MODEL]`: what a GGUF model is, whether this engine
// can run it (and why not), and what it costs to run: architecture,
// hyperparameters, tokenizer, tensor table, parameter count and memory for
// weights plus KV cache. Memory and "fits" are only printed for files the
// engine can run.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "loader/devices.h"
#include "model/hparams.h"
#include "model/model_desc.h"
#include "quant/file_info.h"
#include "runnable.h"
#include "tokenizer/vocab.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "info",
    "[MODEL]",
    "Show whether the engine can run a model, and its architecture, hyperparameters,\n"
    "tokenizer, tensors and memory.",
    "MODEL is a GGUF file (default: the bundled stories260K.gguf). 'can run' names\n"
    "the --backend values that can run it (cpu: threaded, quantized kernels;\n"
    "cpu-ref: the f32 reference; vulkan) or lists what the engine does not support\n"
    "(architecture or option, tokenizer, tensor types, weight table); memory and\n"
    "device fit follow only when it can. Memory is the\n"
    "weights as stored in the file plus the KV cache for the context size:\n"
    "KV bytes = 2 * n_layer * n_ctx * n_head_kv * head_dim * bytes per element.",
    {
        {"model", 'm', "FILE", "model file (alternative to the MODEL argument)"},
        {"ctx-size", 'c', "N",
         "context size in tokens for the KV figure (default: training context)"},
        kv_type_option(),
        {"device", 0, "SEL",
         "Vulkan device (index or name substring) to check the model fits on "
         "(default: first discrete GPU)"},
    },
    0,
    1,
};

std::string human_bytes(uint64_t b) {
    char buf[64];
    if (b >= (uint64_t{1} << 30)) {
        std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1u << 30));
    } else if (b >= (uint64_t{1} << 20)) {
        std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1u << 20));
    } else if (b >= 1024) {
        std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(b) / 1024);
    } else {
        std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
    }
    return buf;
}

// "<id> '<text>'", or "none" for -1.
std::string token_text(const tokenizer::Vocab& v, int32_t id) {
    if (id < 0) return "none";
    return std::to_string(id) + " '" + v.text(id) + "'";
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
    ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    std::optional<std::string> given = args.get("model");
    if (!args.positional.empty()) {
        if (given) throw UsageError("info: give the model either as MODEL or with -m, not both");
        given = args.positional[0];
    }
    const std::string path = resolve_model_path(given);
    const model::KvType kv_type = kv_type_from_args(args);
    const std::string kv_name = model::kv_type_name(kv_type);

    gguf::File f = gguf::File::open(path);
    const RunVerdict verdict = check_runnable(f);

    std::printf("file:            %s\n", path.c_str());
    std::printf("gguf version:    %u, %zu metadata keys, %zu tensors, %" PRIu64 " bytes\n",
                f.version(), f.metadata().size(), f.tensors().size(), f.file_size());
    const quant::QuantizationInfo quant_info = quant::describe_quantization(f);
    std::printf("file type:       %s%s\n", quant_info.summary().c_str(),
                quant_info.file_type_from_key
                    ? ""
                    : " (no general.file_type: the type holding most bytes)");
    std::printf("tensor types:    %s\n", quant_info.tensor_types_text().c_str());
    // The verdict first: a reader must not find "fits" below for a file the
    // engine then refuses to load.
    std::printf("can run:         %s\n", verdict_text(verdict, "                   ").c_str());
    if (!verdict.runs_cpu()) {
        // What can still be read without a supported architecture.
        std::printf("\narchitecture:    %s\n",
                    f.get_string("general.architecture").value_or("(none)").c_str());
        std::printf("tokenizer:       %s\n",
                    f.get_string("tokenizer.ggml.model").value_or("(none)").c_str());
        std::printf("\n%-28s %-7s %-16s %12s\n", "tensor", "type", "shape", "bytes");
        for (const gguf::TensorInfo& t : f.tensors())
            std::printf("%-28s %-7s %-16s %12" PRIu64 "\n", t.name.c_str(),
                        ggml::type_upper_name(t.type).c_str(), t.shape_string().c_str(), t.nbytes);
        std::printf("\nmemory:          not estimated (the engine cannot run this file)\n");
        return 0;
    }
    model::HParams hp = model::HParams::from_gguf(f);
    const uint64_t n_ctx =
        static_cast<uint64_t>(args.get_int("ctx-size", hp.n_ctx_train, 1, int64_t{1} << 24));

    std::printf("\narchitecture:    %s\n", hp.arch.c_str());
    std::printf("name:            %s\n", hp.name.empty() ? "(none)" : hp.name.c_str());
    std::printf("n_vocab:         %u\n", hp.n_vocab);
    std::printf("n_ctx_train:     %u\n", hp.n_ctx_train);
    std::printf("n_embd:          %u\n", hp.n_embd);
    std::printf("n_layer:         %u\n", hp.n_layer);
    std::printf("n_head:          %u\n", hp.n_head);
    std::printf("n_head_kv:       %u (GQA group %u)\n", hp.n_head_kv, hp.n_head / hp.n_head_kv);
    std::printf("head_dim:        %u\n", hp.head_dim);
    std::printf("n_ff:            %u\n", hp.n_ff);
    std::printf("n_rot:           %u\n", hp.n_rot);
    std::printf("rope:            %s, freq_base %g\n",
                hp.rope_mode == model::RopeMode::Normal ? "normal" : "neox",
                static_cast<double>(hp.rope_freq_base));
    std::printf("rms_eps:         %g\n", static_cast<double>(hp.rms_eps));
    std::printf("output:          %s\n",
                hp.tied_embeddings ? "tied to token_embd" : "output.weight");

    // The special tokens as the engine reads them (a runnable file's
    // vocabulary loads: check_runnable loaded it), so info says what
    // generate and tokenize do; what the loader did not use is a warning.
    const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(f);
    print_warnings(vocab.load_warnings());
    std::printf("\ntokenizer:       %s, %d tokens\n", vocab.model().c_str(), vocab.n_tokens());
    std::printf("bos:             %s\n", token_text(vocab, vocab.bos()).c_str());
    std::printf("eos:             %s\n", token_text(vocab, vocab.eos()).c_str());
    std::printf("add_bos:         %s%s\n", vocab.add_bos() ? "yes" : "no",
                f.find("tokenizer.ggml.add_bos_token") ? "" : " (the tokenizer's default)");

    std::printf("\n%-28s %-6s %-16s %12s\n", "tensor", "type", "shape", "bytes");
    uint64_t n_params = 0, weight_bytes = 0;
    for (const gguf::TensorInfo& t : f.tensors()) {
        std::printf("%-28s %-6s %-16s %12" PRIu64 "\n", t.name.c_str(),
                    ggml::type_name(t.type).c_str(), t.shape_string().c_str(), t.nbytes);
        n_params += t.n_elements();
        weight_bytes += t.nbytes;
    }
    // A block type the head dimension does not divide has no size: say why.
    const std::string kv_problem = model::kv_type_problem(kv_type, hp.head_dim);
    const uint64_t kv_bytes =
        kv_problem.empty() ? 2ull * hp.n_layer * n_ctx *
                                 model::kv_row_bytes(kv_type, uint64_t{hp.n_head_kv} * hp.head_dim)
                           : 0;
    std::printf("\nparameters:      %" PRIu64 "\n", n_params);
    std::printf("weights:         %" PRIu64 " bytes (%s)\n", weight_bytes,
                human_bytes(weight_bytes).c_str());
    if (!kv_problem.empty()) {
        std::printf("kv cache:        not possible: %s\n", kv_problem.c_str());
    } else {
        std::printf("kv cache:        %" PRIu64 " bytes (%s) at n_ctx %" PRIu64 ", %s\n", kv_bytes,
                    human_bytes(kv_bytes).c_str(), n_ctx, kv_name.c_str());
        std::printf("total:           %" PRIu64 " bytes (%s)\n", weight_bytes + kv_bytes,
                    human_bytes(weight_bytes + kv_bytes).c_str());
    }

    // The backend generate, batch, bench and compare use without --backend.
    std::printf("backend:         %s\n", default_backend_line().c_str());

    // Where it would run: the Vulkan device and whether the model fits its
    // largest device-local heap (VkModel's own estimate, activations included).
    if (!verdict.runs_vulkan()) {
        std::printf(
            "vulkan device:   not checked (the Vulkan engine cannot run this file; see "
            "'can run')\n");
        return 0;
    }
    try {
        const std::vector<model::GpuDevice> devs = model::list_gpu_devices();
        const uint32_t pick = model::choose_gpu_device(devs, args.get("device").value_or(""));
        const model::GpuDevice& d =
            *std::find_if(devs.begin(), devs.end(), [&](const auto& g) { return g.index == pick; });
        model::ContextParams cp;
        cp.n_ctx = static_cast<uint32_t>(n_ctx);
        cp.kv_type = kv_type;
        const model::MemoryNeed need =
            model::plan_gpu_memory(model::ModelDesc::from_gguf(f), cp, model::PlanShape{}, d);
        const uint64_t heap = d.largest_device_local_heap();
        std::printf("vulkan device:   %u: %s (%s)\n", d.index, d.name.c_str(), d.type_name.c_str());
        std::printf("device memory:   %" PRIu64
                    " bytes needed (%s), largest device-local heap %s: %s\n",
                    need.total(), human_bytes(need.total()).c_str(), human_bytes(heap).c_str(),
                    need.total() <= heap ? "fits" : "does NOT fit");
    } catch (const std::exception& e) {
        if (args.get("device")) throw;  // asked for a device: say why it is not there
        std::printf("vulkan device:   none usable (%s)\n", e.what());
    }
    return 0;
}

}  // namespace wb::cli
