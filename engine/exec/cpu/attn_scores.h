#pragma once
// The score half of attention on the CPU: s[h][j] = q_h . K_j for the query
// heads that share one kv head (grouped-query attention) against the cached
// keys of a span of cells, K stored as f32 or IEEE half (the KV cache's
// KvType). A portable version, an AVX2 + FMA + F16C one (sixteen keys
// converted to f32 once for all the heads, then two heads and four keys a
// pass, eight dims an instruction, the four keys' sums reduced together)
// and an AVX-512 one (two keys a register, the AVX2 one's sums bit for
// bit), picked at run time; one call of the weight dot kernel per cached
// key was a quarter of a 512-token prefill's attention.

#include <cstddef>
#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

/// Longest head the kernels take (n); longer heads use the dot kernels.
inline constexpr int64_t kMaxScoresDim = 256;

/// s[h * s_stride + j] = sum_{i < n} q[h * q_stride + i] * K_j[i] for
/// h < n_q and j < n_keys, K_j = k + rows[j] * k_stride bytes (n f16 or f32
/// values by the kernel, any alignment). q, s: f32. n: a multiple of 8, at
/// most kMaxScoresDim. Never throws.
using ScoresFn = void (*)(int64_t n, const float* q, size_t q_stride, int n_q, const uint8_t* k,
                          size_t k_stride, const uint32_t* rows, uint32_t n_keys, float* s,
                          size_t s_stride);

/// The kernel for keys of f16 (`k_f16`) or f32 on `isa`: the AVX-512 one on
/// Avx512, the AVX2 one on the other AVX2 levels, else the portable one.
ScoresFn scores_kernel(bool k_f16, Isa isa) noexcept;

}  // namespace wb::cpu
