#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Attention over the KV cache for one (head h, token t) per workgroup:
//   o = softmax(q K^T * scale + mask) V
// with GQA (query head h reads KV head h / (n_head / n_head_kv)), the mask
// row of token t (0 = visible, -inf = hidden: other sequence, later
// position, or free cell; built on the host by KvCells::build_mask), and
// softmax in f32 with max subtraction done online over tiles of
// BLOCK_SIZE cells (flash-attention style running max and sum), so any
// n_kv works with fixed shared memory.
// q: [n_tok, q_stride] f32 (heads of head_dim <= 256 at h * head_dim);
// K, V cache: [n_kv cells, kv_stride] f32 or packed f16 (KV_F16);
// mask: [n_tok, n_kv] f32; o: [n_tok, o_stride] f32.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n_tok, n_head, n_head_kv, head_dim;
    uint n_kv, kv_stride, q_stride, o_stride;
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
layout(std430, binding = 3) readonly buffer Mask { float mask[]; };
layout(std430, binding = 4) buffer O { float o[]; };

const uint MAX_HEAD_DIM = 256u;
// Finite stand-in for -inf inside the shader (no inf arithmetic, so a
// driver's fast-math cannot change the result); mask values below -1e30
// count as hidden.
const float LOW = -3.0e38;
shared float qs[MAX_HEAD_DIM];
shared float acc[MAX_HEAD_DIM];
shared float prob[BLOCK_SIZE];
shared float red[BLOCK_SIZE];

void main() {
    const uint h = gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.y;
    const uint tid = gl_LocalInvocationID.x;
    const uint hd = p.head_dim;
    const uint kvh = h / (p.n_head / p.n_head_kv);
    const uint kv_col = kvh * hd;

    for (uint d = tid; d < hd; d += BLOCK_SIZE) {
        qs[d] = q[t * p.q_stride + h * hd + d];
        acc[d] = 0.0;
    }
    barrier();

    float m = LOW;  // running max (same value in every thread)
    float l = 0.0;      // running sum of exp(s - m)
    for (uint c0 = 0u; c0 < p.n_kv; c0 += BLOCK_SIZE) {
        const uint c = c0 + tid;
        float s = LOW;
        if (c < p.n_kv) {
            const float mk = mask[t * p.n_kv + c];
            if (mk > -1.0e30) {
                float dot = 0.0;
                const uint kb = c * p.kv_stride + kv_col;
                for (uint e = 0u; e < hd; ++e) dot += qs[e] * k_at(kb + e);
                s = dot * p.scale + mk;
            }
        }
        red[tid] = s;
        barrier();
        for (uint k = BLOCK_SIZE / 2u; k > 0u; k >>= 1) {
            if (tid < k) red[tid] = max(red[tid], red[tid + k]);
            barrier();
        }
        const float m_new = max(m, red[0]);
        barrier();  // everyone has read red[0]
        if (m_new == LOW) continue;  // whole tile hidden so far (uniform)
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
        const uint n_here = min(BLOCK_SIZE, p.n_kv - c0);
        for (uint d = tid; d < hd; d += BLOCK_SIZE) {
            float a = acc[d] * alpha;
            for (uint j = 0u; j < n_here; ++j) {
                const float pj = prob[j];
                if (pj != 0.0) a += pj * v_at((c0 + j) * p.kv_stride + kv_col + d);
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
