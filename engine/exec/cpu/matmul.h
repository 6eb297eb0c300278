#pragma once
// y = x W^T on the CPU with the weights in their GGUF types, threaded over
// output rows. x's rows are quantized once per call into the activation
// form each weight type's kernel reads (act_quant.h); every thread then
// takes chunks of output rows and multiplies each row with up to kMaxTile
// tokens per kernel call, so in a prefill each weight block is decoded once
// for several tokens while the chunk's rows stay in cache. Interleaved
// parts (cpu/interleave.h) are multiplied 8 rows at a time.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/cpu/interleave.h"
#include "exec/cpu/isa.h"
#include "exec/cpu/thread_pool.h"

namespace wb::cpu {

/// Consecutive rows of a weight matrix of one ggml type, in ggml's block
/// layout (any alignment; read in place, e.g. from a GGUF mapping) or in
/// groups of 8 interleaved rows (cpu/interleave.h; repacked at load).
struct WeightPart {
    uint32_t type = 0;              ///< ggml type id
    const uint8_t* data = nullptr;  ///< rows * row_bytes bytes
    uint64_t rows = 0;              ///< a multiple of 8 when interleaved
    size_t row_bytes = 0;           ///< ggml::row_bytes(type, ne0)
    Layout layout = Layout::Rows;
};

/// A weight matrix [rows, ne0]: its parts stacked by rows, in order.
struct Weight {
    std::vector<WeightPart> parts;
    uint64_t ne0 = 0;
    uint64_t rows = 0;
};

/// Buffers one thread pool's matmuls reuse between calls (activations in
/// kernel form, per-thread dequantized rows).
struct MatmulScratch {
    std::vector<uint64_t> act[3];          // by ActKind, 8-byte aligned rows
    std::vector<std::vector<float>> rows;  // [threads][ne0] dequantize fallback
};

/// y[t * ldy + r] = sum_k W[r, k] x[t * ldx + k] for t < n_tok, r < W.rows.
/// x: [n_tok, ldx] f32 (first W.ne0 columns read); y: [n_tok, ldy] (first
/// W.rows columns written). Types without a kernel (dot.h) are dequantized
/// row by row (ggml::dequantize_row) and multiplied in f32. The result does
/// not depend on the number of threads (each output is one thread's sum).
/// int8_acts false: every quantized type through the f32 fallback (the
/// activations unrounded; to separate activation rounding from the rest in
/// tests). Throws ggml::UnsupportedType for a type the engine cannot
/// compute with.
void matmul(ThreadPool& pool, Isa isa, const Weight& w, const float* x, size_t ldx, size_t n_tok,
            float* y, size_t ldy, MatmulScratch& scratch, bool int8_acts = true);

}  // namespace wb::cpu
