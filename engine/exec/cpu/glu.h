#pragma once
// The SwiGLU feed-forward's gate on the CPU: y = silu(g) * u, silu(x) =
// x / (1 + exp(-x)) (Shazeer 2020, "GLU Variants Improve Transformer"; the
// Llama, Qwen, Mistral and Phi-3 FFN). A portable version (the reference
// executor's formula, std::exp) and an AVX2 + FMA one (eight values an
// instruction, exp of -|x| only, so nothing overflows), picked at run time.

#include <cstdint>

#include "exec/cpu/isa.h"

namespace wb::cpu {

/// y[i] = silu(g[i]) * u[i] for i < n (f32; y may alias g or u). A NaN in g
/// or u gives a NaN in y. Never throws.
using SiluGluFn = void (*)(int64_t n, const float* g, const float* u, float* y);

/// The kernel for `isa` (Scalar when `isa` does not run the AVX2 kernels).
SiluGluFn silu_glu_kernel(Isa isa) noexcept;

}  // namespace wb::cpu
