#pragma once
// Whole-file quantizer: reads a GGUF model, writes a copy for a target file
// type (quant/file_types.h: F16, Q8_0, Q6_K, Q5_K_M, ..., Q2_K, Q4_0, Q4_1,
// Q5_0, Q5_1, IQ4_NL) the way llama-quantize does (llama.cpp
// src/llama-quant.cpp) without an importance matrix, so the tensor types and
// bytes equal llama-quantize's:
//
//  - metadata: every pair copied in file order with its type; then
//    general.quantization_version = 2 and general.file_type (LLAMA_FTYPE)
//    set, both u32 (overwritten in place if present, appended otherwise);
//  - tensor order: tensors without a layer number first, then layer by
//    layer (blk.N. numerically), sorted by name within each group, the
//    order of llama.cpp's weight map (weight_name_comparer);
//  - tensor types: llama.cpp's mix rules (quant/mix_rules.h): norms and
//    other non-weights kept, output / tied embeddings at Q6_K, more bits for
//    some attn_v / ffn_down / attn_output in the K mixes, fallbacks for rows
//    that do not split into a type's blocks; a tensor already stored in its
//    output type is copied, not re-rounded. One deliberate difference: a
//    row length that no fallback fits (not a multiple of 32, e.g.
//    stories260K's ffn_down, rows of 172) is written as F16 where
//    llama-quantize stops, and the caller is told which tensors that hit;
//  - data: each row dequantized to f32 (ggml's dequantizers) and quantized
//    with ggml's reference quantizers (ggml/quants.h), streamed to the
//    output, so memory stays at a few rows whatever the model size.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "quant/file_types.h"

namespace wb::quant {

/// What happened to one tensor.
struct TensorPlan {
    std::string name;
    uint32_t src_type = 0;  ///< ggml type id in the input
    uint32_t dst_type = 0;  ///< ggml type id written
    std::string shape;      ///< "[172, 64]" (ggml order)
    uint64_t src_bytes = 0;
    uint64_t dst_bytes = 0;
    uint64_t n_elements = 0;
    /// Why dst_type is not the target's default type: "" when it is, else
    /// the rule, e.g. "1-D tensor, kept as stored", "output tensor",
    /// "attn_v #2 of 2 (use_more_bits)" or "row length 172 is not a
    /// multiple of Q4_0's block of 32, fell back to F16".
    std::string note;
};

/// Summary of a finished run.
struct QuantizeReport {
    Target target = Target::F16;
    std::vector<TensorPlan> tensors;  ///< in output order
    uint64_t input_bytes = 0;         ///< size of the input file
    uint64_t output_bytes = 0;        ///< size of the written file
    /// Bits per weight of the output: tensor data bytes * 8 / elements over
    /// all tensors (what llama.cpp's loader prints as BPW).
    double bpw() const;
    /// The output's tensor types with their counts, by type name:
    /// "F32 x45, Q4_0 x155, Q6_K x1" (what quantize and synth print).
    std::string type_mix() const;
};

/// Choices beyond the target.
struct QuantizeOptions {
    /// llama-quantize --pure: every quantizable tensor at the target's type,
    /// none of the mix rules (row-length fallbacks still apply). What
    /// gguf-py's plain quantization writes.
    bool pure = false;
};

/// Progress: called before each tensor with (index, count, plan of that
/// tensor); index counts from 0.
using QuantizeProgress = std::function<void(size_t, size_t, const TensorPlan&)>;

/// The tensor plan of quantizing `in_path` to `target` without writing
/// anything (llama-quantize --dry-run). Throws as quantize_file.
std::vector<TensorPlan> plan_file(const std::string& in_path, Target target,
                                  const QuantizeOptions& options = {});

/// Quantizes `in_path` into `out_path` as described at the top of this file.
/// Throws gguf::Error for a malformed input (naming file, offset, field),
/// including a source value that is NaN or infinite, in a tensor quantized
/// or copied (the field names the tensor; the problem its type, block index
/// and row; nothing is written), ggml::UnsupportedType when a matrix has a
/// type the engine cannot
/// dequantize, gguf::WriteError when the output cannot be written (no
/// partial output file is left behind), std::invalid_argument when in and
/// out name the same file.
QuantizeReport quantize_file(const std::string& in_path, const std::string& out_path, Target target,
                             const QuantizeProgress& progress = {},
                             const QuantizeOptions& options = {});

/// The output order of tensor names (see top of file). Exposed for tests.
std::vector<std::string> llama_quantize_order(std::vector<std::string> names);

}  // namespace wb::quant
