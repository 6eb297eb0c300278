#pragma once
// Dot products of one weight row (ggml block layout, read in place from the
// GGUF mapping) with up to kMaxTile activation rows at once, per weight
// type and ISA. Quantized weights meet int8 activations (act_quant.h) and
// are multiplied in integers within a block, scaled in f32 per block, as
// ggml's CPU backend does (ggml-cpu quants: vec_dot_<type>_q8_<0|K>); each
// weight block is decoded once for all the tile's tokens. Types without a
// kernel here go through the dequantize-row fallback in matmul.cpp. Types
// with an interleaved form (cpu/interleave.h) also have a kernel for groups
// of 8 rows, which sums the 8 rows in the lanes of one register.

#include <cstddef>
#include <cstdint>

#include "exec/cpu/act_quant.h"
#include "exec/cpu/isa.h"

namespace wb::cpu {

/// Tokens one kernel call multiplies with the same weight row.
inline constexpr int kMaxTile = 4;
/// Tokens one dot_x16 call multiplies with the same 16 rows (its 32
/// registers hold more sums).
inline constexpr int kMaxTile16 = 8;
/// Tokens one dot_x32 call multiplies with the same 32 rows (24 of its 32
/// registers hold sums).
inline constexpr int kMaxTile32 = 6;

/// out[t * out_stride] = sum_k W[k] * A_t[k] for t < n_tok (1..kMaxTile).
/// w: one weight row of n values (ggml layout, any alignment); act: n_tok
/// activation rows of the kernel's ActKind, act_stride bytes apart (4-byte
/// aligned). n: a multiple of the weight type's block size.
using DotFn = void (*)(int64_t n, const uint8_t* w, const uint8_t* act, size_t act_stride,
                       int n_tok, float* out, size_t out_stride);

/// out[t * out_stride + r] = sum_k W_r[k] * A_t[k] for the 8 rows r < 8 of
/// one interleaved group (cpu/interleave.h) and t < n_tok (1..kMaxTile).
/// group: 8 * row_bytes bytes (any alignment); act, n: as DotFn.
using DotX8Fn = void (*)(int64_t n, const uint8_t* group, const uint8_t* act, size_t act_stride,
                         int n_tok, float* out, size_t out_stride);

/// How rows of one weight type are multiplied.
struct WeightKernel {
    ActKind act;  ///< the activations' form
    DotFn dot;    ///< rows in ggml's layout
    /// Groups of 8 interleaved rows; nullptr for a type without that form.
    DotX8Fn dot_x8;
    /// Two adjacent groups (16 rows: `group` and the next, 8 * row_bytes
    /// further; out rows 0..15) and n_tok 1..kMaxTile16 in one call, with
    /// per-row sums bit for bit dot_x8's (called on each group, kMaxTile
    /// tokens a call); nullptr where the ISA has none (only Avx512 has
    /// some).
    DotX8Fn dot_x16;
    /// Four adjacent groups (32 rows, out rows 0..31) and n_tok
    /// 1..kMaxTile32, bit for bit dot_x8's likewise; nullptr where the ISA
    /// has none (Avx512 has F16 and BF16). Needs dot_x16 too (matmul takes
    /// a chunk's last 16 rows with it).
    DotX8Fn dot_x32 = nullptr;
};

/// The kernel for ggml type id `type` on `isa`, or nullptr when the type
/// has none (the caller dequantizes the row and uses the F32 kernel).
/// Kernels exist for F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
/// Q2_K, Q3_K, Q4_K, Q5_K and Q6_K on every ISA.
const WeightKernel* weight_kernel(uint32_t type, Isa isa) noexcept;

namespace detail {
// Per-ISA lookups (dot_scalar.cpp, dot_avx2.cpp, dot_avxvnni.cpp), each
// built from the rows of cpu/kernels.def: nullptr for a type without a row.
// avx512_kernel (dot_avx512.cpp) is AVX-VNNI's (or AVX2's) table with the
// 512-bit dot_x16 and dot_x32 kernels added.
const WeightKernel* scalar_kernel(uint32_t type) noexcept;
const WeightKernel* avx2_kernel(uint32_t type) noexcept;
const WeightKernel* avxvnni_kernel(uint32_t type) noexcept;
const WeightKernel* avx512_kernel(uint32_t type) noexcept;
}  // namespace detail

}  // namespace wb::cpu
