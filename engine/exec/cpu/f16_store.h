#pragma once
// Rows of f32 stored as IEEE half (binary16), as the f16 KV cache holds
// them: round to nearest even, ggml::fp32_to_fp16's bits on every ISA.

#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

/// out[i] = half(x[i]) for i < n: n f32 values in, 2 n bytes out (any
/// alignment). Rounding to nearest even with overflow to +-inf and
/// subnormal halves, and NaN as the quiet NaN sign | 0x7E00, bit for bit
/// ggml::fp32_to_fp16 (IEEE 754-2008 binary16). No errors.
using F16StoreFn = void (*)(const float* x, uint8_t* out, int64_t n);

/// The store kernel for `isa`: F16C's vcvtps2ph on AVX2 levels, the
/// portable loop otherwise. Never nullptr.
F16StoreFn f16_store_kernel(Isa isa) noexcept;

}  // namespace wb::cpu
