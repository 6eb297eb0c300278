#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Attention over the KV cache with one invocation per (head h, chunk z)
// and a workgroup row per token t: the variant for CPU devices (lavapipe),
// where a workgroup's barriers cost far more than the arithmetic of a head
// (as matvec_row.comp is to matvec.comp). The same result as
// attention.comp: o = softmax(q K^T * scale) V over token t's span, with
// GQA, f32 online softmax (running max m and sum l, the accumulator
// rescaled by exp(m_old - m_new) when the max grows; Milakov & Gimelshein,
// "Online normalizer calculation for softmax", 2018), and the same split-K
// partials (attention_io.glsl has the shapes and the partial layout).
// Sliding window (gemma, mistral) and score soft-capping (gemma2): see
// span_of() and score() in attention_io.glsl.
#include "common.glsl"
#include "attention_io.glsl"

void main() {
    const uint idx = gl_GlobalInvocationID.x;  // h + n_head * z
    const uint t = gl_WorkGroupID.y;
    if (idx >= p.n_head * p.n_split) return;
    const uint h = idx % p.n_head, z = idx / p.n_head;
    const uint hd = HD;
    const uint kv_col = (h / (p.n_head / p.n_head_kv)) * hd;
    uint first, n_span;
    span_of(t, first, n_span);
    uint c_begin, c_end;
    chunk_range(n_span, z, c_begin, c_end);

    float qv[MAX_HEAD_DIM];   // q of (t, h)
    float acc[MAX_HEAD_DIM];  // sum over cells of exp(s - m) * v
    for (uint d = 0u; d < hd; ++d) {
        qv[d] = q[t * p.q_stride + h * hd + d];
        acc[d] = 0.0;
    }
    float m = LOW, l = 0.0;
    bool poisoned = false;  // a NaN / inf score: the result is NaN (common.glsl)
    for (uint j = c_begin; j < c_end; ++j) {
        const uint base = table[first + j] * p.kv_stride + kv_col;
        float dot = 0.0;
        for (uint e = 0u; e < hd; ++e) dot += qv[e] * k_at(base + e);
        const float s = score(dot);
        poisoned = poisoned || poisons_softmax(s);
        if (s > m) {  // new max: rescale what was summed so far
            const float alpha = m == LOW ? 0.0 : exp(m - s);
            l *= alpha;
            for (uint d = 0u; d < hd; ++d) acc[d] *= alpha;
            m = s;
        }
        const float pr = exp(s - m);
        l += pr;
        for (uint d = 0u; d < hd; ++d) acc[d] += pr * v_at(base + d);
    }
    if (poisoned) l = nan_value();
    for (uint d = 0u; d < hd; ++d) store_value(t, h, z, d, acc[d], l);
    store_max_sum(t, h, z, m, l);
}
