#pragma once
// The value half of attention on the CPU: out += p_j * V_j over the cached
// value rows, V stored as f32 or IEEE half (the KV cache's KvType). A
// portable scalar version and an AVX2 + FMA + F16C one (eight halves
// converted per instruction), picked at run time like the dot kernels;
// the scalar version converted one half per call and was a fifth of a
// decode step's time at a few hundred cached tokens.

#include <cstddef>
#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

/// Outputs one AxpyFn call updates at most.
inline constexpr int kMaxAxpyOutputs = 8;

/// y_h[i] += a[h] * x[i] for i < n and h < n_y (1..kMaxAxpyOutputs), with
/// y_h = y + h * y_stride floats: one cached value row added into the
/// outputs of the n_y query heads that share it (grouped-query attention),
/// each x element converted once. x: n values, f32 or f16 bits by the
/// kernel (any alignment); y_h: n floats each. Each y_h gets exactly what
/// a call with n_y = 1 gives it. Never throws.
using AxpyFn = void (*)(int64_t n, const float* a, int n_y, const uint8_t* x, float* y,
                        size_t y_stride);

/// The kernel for x of f16 (`x_f16`) or f32 on `isa` (Scalar when `isa`
/// is not available on this CPU). The AVX2 kernel rounds a * x[i] + y[i]
/// once (FMA); the scalar one twice.
AxpyFn axpy_kernel(bool x_f16, Isa isa) noexcept;

}  // namespace wb::cpu
