#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Attention over the KV cache for one (head h, token t) per workgroup:
//   o = softmax(q K^T * scale) V  over the cells of token t's span
// with GQA (query head h reads KV head h / (n_head / n_head_kv)). The span
// (first, count) of token t indexes a cell table listing its own
// sequence's cells by position 0..pos (built on the host by
// KvCells::cell_table; vLLM's block table with one-cell blocks), so the
// causal mask is implicit and a token reads only its own sequence's cells:
// a batch of B decoding sequences costs O(B), not O(B^2) as a mask over
// all cells would. Softmax in f32 with max subtraction done online over
// tiles of BLOCK_SIZE cells (flash-attention style running max and sum),
// so any span length works with fixed shared memory.
// q: [n_tok, q_stride] f32 (heads of head_dim <= 256 at h * head_dim);
// K, V cache: [n_ctx cells, kv_stride] f32 or packed f16 (KV_F16);
// table: [n_entries] u32 cell indices; spans: [n_tok, 2] u32 (first, count);
// o: [n_tok, o_stride] f32.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n_tok, n_head, n_head_kv, head_dim;
    uint kv_stride, q_stride, o_stride;
    float scale;
} p;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
#if defined(KV_F16)
layout(std430, binding = 1) readonly buffer K { uint kc[]; };
layout(std430, binding = 2) readonly buffer V { uint vc[]; };
float k_at(uint i) { return unpackHalf2x16((i & 1u) != 0u ? (kc[i >> 1] >> 16) : kc[i >> 1]).x; }
float v_at(uint i) { return unpackHalf2x16((i & 1u) != 0u ? (vc[i >> 1] >> 16) : vc[i >> 1]).x; }
#else
layout(std430, binding = 1) readonly buffer K { float kc[]; };
layout(std430, binding = 2) readonly buffer V { float vc[]; };
float k_at(uint i) { return kc[i]; }
float v_at(uint i) { return vc[i]; }
#endif
layout(std430, binding = 3) readonly buffer Table { uint table[]; };
layout(std430, binding = 4) readonly buffer Spans { uint spans[]; };
layout(std430, binding = 5) buffer O { float o[]; };

const uint MAX_HEAD_DIM = 256u;
// Finite stand-in for -inf inside the shader (no inf arithmetic, so a
// driver's fast-math cannot change the result): the score of a lane past
// the end of the span.
const float LOW = -3.0e38;
shared float qs[MAX_HEAD_DIM];
shared float acc[MAX_HEAD_DIM];
shared float prob[BLOCK_SIZE];
shared uint cell_of[BLOCK_SIZE];  // cache cell of each lane of the tile
shared float red[BLOCK_SIZE];

void main() {
    const uint h = gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.y;
    const uint tid = gl_LocalInvocationID.x;
    const uint hd = p.head_dim;
    const uint kvh = h / (p.n_head / p.n_head_kv);
    const uint kv_col = kvh * hd;
    const uint first = spans[2u * t];
    const uint n_span = spans[2u * t + 1u];  // >= 1: the token's own cell

    for (uint d = tid; d < hd; d += BLOCK_SIZE) {
        qs[d] = q[t * p.q_stride + h * hd + d];
        acc[d] = 0.0;
    }
    barrier();

    float m = LOW;  // running max (same value in every thread)
    float l = 0.0;      // running sum of exp(s - m)
    for (uint c0 = 0u; c0 < n_span; c0 += BLOCK_SIZE) {
        const uint j = c0 + tid;
        float s = LOW;
        if (j < n_span) {
            const uint cell = table[first + j];
            cell_of[tid] = cell;
            float dot = 0.0;
            const uint kb = cell * p.kv_stride + kv_col;
            for (uint e = 0u; e < hd; ++e) dot += qs[e] * k_at(kb + e);
            s = dot * p.scale;
        }
        red[tid] = s;
        barrier();
        for (uint k = BLOCK_SIZE / 2u; k > 0u; k >>= 1) {
            if (tid < k) red[tid] = max(red[tid], red[tid + k]);
            barrier();
        }
        const float m_new = max(m, red[0]);
        barrier();  // everyone has read red[0]
        const float alpha = m == LOW ? 0.0 : exp(m - m_new);
        const float pr = s == LOW ? 0.0 : exp(s - m_new);
        prob[tid] = pr;
        red[tid] = pr;
        barrier();
        for (uint k = BLOCK_SIZE / 2u; k > 0u; k >>= 1) {
            if (tid < k) red[tid] += red[tid + k];
            barrier();
        }
        l = l * alpha + red[0];
        const uint n_here = min(BLOCK_SIZE, n_span - c0);
        for (uint d = tid; d < hd; d += BLOCK_SIZE) {
            float a = acc[d] * alpha;
            for (uint jj = 0u; jj < n_here; ++jj) {
                a += prob[jj] * v_at(cell_of[jj] * p.kv_stride + kv_col + d);
            }
            acc[d] = a;
        }
        m = m_new;
        barrier();  // prob/red/acc reused by the next tile
    }
    for (uint d = tid; d < hd; d += BLOCK_SIZE) {
        o[t * p.o_stride + h * hd + d] = l > 0.0 ? acc[d] / l : 0.0;
    }
}
