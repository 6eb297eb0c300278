#pragma once
// Row quantizers that reproduce ggml's REFERENCE quantizers bit for bit
// (ggml-quants.c quantize_row_q8_0_ref / quantize_row_q4_0_ref, the ones
// llama-quantize's ggml_quantize_chunk uses for these types), so a Q8_0 or
// Q4_0 block we write equals llama.cpp's for the same float32 input.
//
// The Q4_0 rounding step `x*id + 8.5f` is evaluated UNFUSED (multiply
// rounded to float, then add rounded): that is what libggml-base built
// without FMA produces and what the golden vectors pin. quantize_row.cpp is
// compiled with -ffp-contract=off so no compiler fuses it.

#include <cstdint>

#include "ggml/types.h"

namespace wb::quant {

/// Quantizes `n` floats (n a multiple of 32) from `x[n]` into n/32 Q8_0
/// blocks `y[n/32]`. Per block: amax = max |x|, d = amax/127,
/// id = d ? 1/d : 0, qs = roundf(x*id) (half away from zero), d stored as
/// binary16 (round to nearest even). Throws std::invalid_argument when n is
/// not a multiple of 32.
void quantize_row_q8_0(const float* x, ggml::BlockQ8_0* y, int64_t n);

/// Quantizes `n` floats (n a multiple of 32) from `x[n]` into n/32 Q4_0
/// blocks `y[n/32]`. Per block: max = the element of largest |x| (first on a
/// tie, sign kept), d = max/-8, id = d ? 1/d : 0,
/// q = min(15, (int8_t)(x*id + 8.5f)) truncating toward zero; byte j holds
/// q[j] in its low nibble and q[j+16] in its high nibble. Throws
/// std::invalid_argument when n is not a multiple of 32.
void quantize_row_q4_0(const float* x, ggml::BlockQ4_0* y, int64_t n);

/// Converts `n` floats to IEEE binary16 bits `y[n]`, round to nearest even
/// (ggml_fp32_to_fp16).
void quantize_row_f16(const float* x, uint16_t* y, int64_t n);

/// Converts one row of `n` floats to ggml type `type` (F32, F16, Q8_0 or
/// Q4_0) into `dst`, which must hold ggml::row_bytes(type, n) bytes. Throws
/// ggml::UnsupportedType for other types and std::invalid_argument for an n
/// that is not a multiple of the block size.
void quantize_row(uint32_t type, const float* x, void* dst, int64_t n);

}  // namespace wb::quant
