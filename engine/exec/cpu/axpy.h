#pragma once
// The value half of attention on the CPU: out += p_j * V_j over the cached
// value rows, V stored as f32 or IEEE half (the KV cache's KvType). A
// portable scalar version, an AVX2 + FMA + F16C one (eight halves
// converted per instruction) and an AVX-512 one (sixteen, the AVX2 one's
// sums bit for bit), picked at run time like the dot kernels;
// the scalar version converted one half per call and was a fifth of a
// decode step's time at a few hundred cached tokens.

#include <cstddef>
#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

/// Outputs one AxpyFn call updates at most.
inline constexpr int kMaxAxpyOutputs = 8;

/// y_h[i] += sum over j < n_rows of a[h * a_stride + j] * X_j[i], for
/// i < n and h < n_y (1..kMaxAxpyOutputs): the cached value rows X_j
/// (X_j = x + rows[j] * x_stride bytes; X_j = x + j * x_stride when rows is
/// null) weighted by the attention probabilities a of the n_y query heads
/// that share them (grouped-query attention), y_h = y + h * y_stride floats.
/// X_j: n values, f32 or f16 bits by the kernel (any alignment). The terms
/// are added in order of j, one rounding each on AVX2 (FMA), two in scalar,
/// so the result is bit for bit that of n_rows calls of one row each; the
/// AVX2 kernel keeps blocks of y in registers across all rows instead of
/// loading and storing them per row. Never throws.
using AxpyFn = void (*)(int64_t n, const float* a, size_t a_stride, int n_y, const uint8_t* x,
                        size_t x_stride, const uint32_t* rows, uint32_t n_rows, float* y,
                        size_t y_stride);

/// The kernel for x of f16 (`x_f16`) or f32 on `isa`: AVX-512 on Avx512,
/// AVX2 on the other AVX2 levels, else (or when `isa` is not available on
/// this CPU) the portable one.
AxpyFn axpy_kernel(bool x_f16, Isa isa) noexcept;

}  // namespace wb::cpu
