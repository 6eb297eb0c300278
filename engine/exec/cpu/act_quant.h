#pragma once
// Activations as the integer dot kernels read them: each row of f32
// activations quantized per block to int8 with one f32 scale, as ggml's CPU
// backend does before a quantized mat x vec (its block_q8_0 / block_q8_K;
// the layouts here are our own and never stored in files).
//  - ActKind::Q8_0: blocks of 32 for the 32-value weight types (Q4_0, Q4_1,
//    Q5_0, Q5_1, IQ4_NL, Q8_0).
//  - ActKind::Q8_K: blocks of 256 with 16-value partial sums for the
//    k-quants (Q2_K to Q6_K), whose sub-block minimums and offsets need them.
//  - ActKind::F32: the row unchanged (F32/F16 weights, dequantize fallback).
// Quantization: d = max|x| / 127 over the block, q = round(x / d) (ties to
// even), so |x - d q| <= d / 2 for every element. A block with a NaN or an
// infinity gets d = NaN (and zero quants): the dot products that read it are
// NaN, so non-finite activations reach the logits as on the f32 reference.

#include <cstddef>
#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

enum class ActKind { F32, Q8_0, Q8_K };

/// 32 activations as int8 with one scale: x ~= d * qs[i]; sum = sum of qs.
struct ActQ8_0 {
    float d;
    int32_t sum;
    int8_t qs[32];
};
static_assert(sizeof(ActQ8_0) == 40);

/// 256 activations as int8 with one scale; bsums[j] = sum of qs[16j..16j+15].
struct ActQ8_K {
    float d;
    int16_t bsums[16];
    int8_t qs[256];
};
static_assert(sizeof(ActQ8_K) == 292);

/// Values per block of `kind` (1, 32, 256).
int act_block_size(ActKind kind) noexcept;

/// Bytes of one quantized row of n activations (n a multiple of the block
/// size; checked by the caller). Rounded up to 8 bytes so that rows placed
/// one after another keep the blocks' 4-byte alignment.
size_t act_row_bytes(ActKind kind, int64_t n) noexcept;

/// Quantizes x[n] into dst (act_row_bytes(kind, n) bytes, 4-byte aligned).
/// n must be a multiple of act_block_size(kind). Never fails: a block with a
/// non-finite value gets the scale NaN (see above); F32 copies x unchanged.
/// `isa` (one this CPU has) picks the scalar or the AVX2 quantizer; both
/// write the same bytes (the same f32 products, rounded
/// to nearest even).
void quantize_act(ActKind kind, const float* x, void* dst, int64_t n, Isa isa) noexcept;

}  // namespace wb::cpu
