#pragma once
// The softmax numerator of attention on the CPU: one query head's scores
// over the cells it attends to, scaled, shifted by their maximum and
// exponentiated in place. A portable version (std::exp per value) and an
// AVX2 + FMA one (eight values an instruction, exp by range reduction to
// [-ln2/2, ln2/2] and a degree-7 polynomial, within 2 ulp of expf), picked
// at run time like the dot kernels; the scalar loop was a tenth of a
// 512-token prefill.

#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

/// s[j] = exp(s[j] * scale - m) for j < n, m = max_j s[j] * scale; returns
/// sum_j s[j] (after the update, f32). n >= 1. A NaN among the scores makes
/// the sum NaN. Softcapping (Gemma 2) is the caller's: pass capped scores
/// and scale 1. Never throws.
using SoftmaxFn = float (*)(float* s, uint32_t n, float scale);

/// The kernel for `isa` (Scalar when `isa` does not run the AVX2 kernels).
SoftmaxFn softmax_kernel(Isa isa) noexcept;

}  // namespace wb::cpu
