#pragma once
// IEEE 754 binary16 and bfloat16 <-> binary32 conversions, bit-exact and
// portable (no F16C needed). Rounding is round-to-nearest-even, as ggml's
// GGML_FP32_TO_FP16 and the hardware conversions do.

#include <cstdint>

namespace wb::ggml {

/// binary16 bits -> float. Exact (every half is representable as a float);
/// handles subnormals, infinities and NaN.
float fp16_to_fp32(uint16_t h);

/// float -> binary16 bits, round-to-nearest-even; overflow gives +-inf, NaN
/// stays NaN (quiet).
uint16_t fp32_to_fp16(float f);

/// bfloat16 bits -> float (the upper 16 bits of a binary32). Exact.
float bf16_to_fp32(uint16_t b);

/// float -> bfloat16 bits, round-to-nearest-even as ggml's
/// ggml_compute_fp32_to_bf16 does (NaN kept quiet).
uint16_t fp32_to_bf16(float f);

}  // namespace wb::ggml
