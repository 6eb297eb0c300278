// `workbench-cli quantize IN OUT --type q8_0|q4_0|f16`: writes a quantized
// copy of a GGUF model (engine/quant/quantize_model.h says exactly what is
// kept, converted and why). Progress and the tensors that are not stored at
// the target type go to stderr; stdout stays empty so scripts can pipe.

#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "args.h"
#include "ggml/types.h"
#include "quant/quantize_model.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "quantize",
    "IN OUT",
    "Write a quantized copy (F16, Q8_0 or Q4_0) of a GGUF model.",
    "Copies IN's metadata, sets general.file_type (LLAMA_FTYPE: 1 = F16, 7 = Q8_0,\n"
    "2 = Q4_0) and general.quantization_version = 2, and converts the weight\n"
    "matrices with ggml's reference rounding, so Q8_0/Q4_0 blocks equal\n"
    "llama.cpp's. 1-D tensors (norms) are copied as stored. A matrix whose row\n"
    "length is not a multiple of 32 cannot hold Q8_0/Q4_0 blocks and is written\n"
    "as F16 (llama-quantize refuses such a model); every such tensor is listed\n"
    "on stderr. Tensor data is streamed, so memory use stays small.",
    {
        {"type", 't', "TYPE", "target type: q8_0, q4_0 or f16 (required)"},
        {"quiet", 'q', "", "print only the summary, no per-tensor progress"},
    },
    2,
    2,
};

}  // namespace

int cmd_quantize(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const auto type = args.get("type");
    if (!type) throw UsageError("quantize: --type is required (q8_0, q4_0 or f16)");
    quant::Target target;
    try {
        target = quant::parse_target(*type);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("quantize: --type: ") + e.what());
    }
    const std::string& in = args.positional[0];
    const std::string& out = args.positional[1];
    const bool quiet = args.has("quiet");

    const quant::QuantizeReport report =
        quant::quantize_file(in, out, target, [&](size_t i, size_t n, const quant::TensorPlan& p) {
            if (quiet) return;
            std::fprintf(stderr, "[%3zu/%zu] %-28s %-12s %5s -> %-5s\n", i + 1, n, p.name.c_str(),
                         p.shape.c_str(), ggml::type_name(p.src_type).c_str(),
                         ggml::type_name(p.dst_type).c_str());
        });

    size_t kept = 0;
    for (const quant::TensorPlan& p : report.tensors) {
        if (p.note.empty()) continue;
        ++kept;
        std::fprintf(stderr, "note: %s: %s\n", p.name.c_str(), p.note.c_str());
    }
    std::fprintf(stderr,
                 "wrote %s: %s, %zu tensors (%zu at %s, %zu kept or F16), %" PRIu64 " -> %" PRIu64
                 " bytes (%.1f%%)\n",
                 out.c_str(), quant::target_name(target), report.tensors.size(),
                 report.tensors.size() - kept, quant::target_name(target), kept, report.input_bytes,
                 report.output_bytes,
                 report.input_bytes ? 100.0 * static_cast<double>(report.output_bytes) /
                                          static_cast<double>(report.input_bytes)
                                    : 0.0);
    return 0;
}

}  // namespace wb::cli
