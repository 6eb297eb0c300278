#pragma once
// Whole-file quantizer: reads a GGUF model, writes a copy whose weight
// matrices are F16, Q8_0 or Q4_0. Mirrors llama-quantize (llama.cpp
// src/llama-quant.cpp) where it can, with one deliberate difference: a
// matrix whose row length is not a multiple of the 32-value block (e.g.
// stories260K's ffn_down, rows of 172) is written as F16 instead of making
// the whole run fail, and the caller is told which tensors that hit.
//
//  - metadata: every pair copied in file order with its type; then
//    general.quantization_version = 2 and general.file_type (LLAMA_FTYPE)
//    set, both u32 (overwritten in place if present, appended otherwise);
//  - tensor order: tensors without a layer number first, then layer by
//    layer (blk.N. numerically), sorted by name within each group, the
//    order of llama.cpp's weight map (weight_name_comparer);
//  - tensor types: 1-D tensors (norms, biases) are copied byte for byte;
//    matrices go to the target type (rows not a multiple of 32 -> F16); a
//    tensor already stored in its output type is copied, not re-rounded;
//  - data is converted row by row from the source mapping and streamed to
//    the output, so memory stays at a few rows whatever the model size.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wb::quant {

/// Target of a quantization run.
enum class Target { F16, Q8_0, Q4_0 };

/// Parses "f16" / "q8_0" / "q4_0" (case-insensitive). Throws
/// std::invalid_argument listing the accepted names otherwise.
Target parse_target(const std::string& name);
/// "f16", "q8_0", "q4_0".
const char* target_name(Target t);
/// llama.cpp's LLAMA_FTYPE for `t`: MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2,
/// MOSTLY_Q8_0 = 7 (llama.h enum llama_ftype).
uint32_t file_type_of(Target t);
/// ggml type id of `t` (ggml::Type::F16 / Q8_0 / Q4_0).
uint32_t ggml_type_of(Target t);

/// What happened to one tensor.
struct TensorPlan {
    std::string name;
    uint32_t src_type = 0;  ///< ggml type id in the input
    uint32_t dst_type = 0;  ///< ggml type id written
    std::string shape;      ///< "[172, 64]" (ggml order)
    uint64_t src_bytes = 0;
    uint64_t dst_bytes = 0;
    /// Why dst_type is not the target: "" when it is, else e.g.
    /// "1-D tensor, kept as stored" or "row length 172 is not a multiple of 32, written as F16".
    std::string note;
};

/// Summary of a finished run.
struct QuantizeReport {
    std::vector<TensorPlan> tensors;  ///< in output order
    uint64_t input_bytes = 0;         ///< size of the input file
    uint64_t output_bytes = 0;        ///< size of the written file
};

/// Progress: called before each tensor with (index, count, plan of that
/// tensor); index counts from 0.
using QuantizeProgress = std::function<void(size_t, size_t, const TensorPlan&)>;

/// Quantizes `in_path` into `out_path` as described at the top of this file.
/// Throws gguf::Error for a malformed input (naming file, offset, field),
/// ggml::UnsupportedType when a matrix has a type the engine cannot
/// dequantize, gguf::WriteError when the output cannot be written (no
/// partial output file is left behind), std::invalid_argument when in and
/// out name the same file.
QuantizeReport quantize_file(const std::string& in_path, const std::string& out_path, Target target,
                             const QuantizeProgress& progress = {});

/// The output order of tensor names (see top of file). Exposed for tests.
std::vector<std::string> llama_quantize_order(std::vector<std::string> names);

}  // namespace wb::quant
