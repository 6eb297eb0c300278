#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Attention over the KV cache for one (head h, token t, chunk z) per
// workgroup (the GPU variant):
//   o = softmax(q K^T * scale) V  over the cells of token t's span
// with GQA (query head h reads KV head h / (n_head / n_head_kv)). The span
// (first, count) of token t indexes a cell table listing its own
// sequence's cells by position 0..pos (built on the host by
// KvCells::cell_table; vLLM's block table with one-cell blocks), so the
// causal mask is implicit and a token reads only its own sequence's cells:
// a batch of B decoding sequences costs O(B), not O(B^2) as a mask over
// all cells would. Softmax in f32 with max subtraction done online over
// tiles of BLOCK_SIZE cells (flash-attention style running max and sum),
// so any span length works with fixed shared memory. With n_split > 1
// (decode of few tokens over long spans: more workgroups than heads) each
// workgroup covers one chunk of the span and attention_merge.comp combines
// them (attention_io.glsl has the shapes and the partial layout).
// Sliding window (gemma, mistral) and score soft-capping (gemma2): see
// span_of() and score() in attention_io.glsl.
#include "common.glsl"
#include "attention_io.glsl"

shared float qs[MAX_HEAD_DIM];
shared float prob[BLOCK_SIZE];
shared uint cell_of[BLOCK_SIZE];  // cache cell of each lane of the tile
shared float red[BLOCK_SIZE];
shared uint poisoned;  // 1 once any lane met a NaN / inf score (common.glsl)

// Output dims per lane: BLOCK_SIZE >= 64 (Kernels) and head_dim <= 256.
const uint DIMS_PER_LANE = 4u;

void main() {
    const uint h = gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.y;
    const uint z = gl_WorkGroupID.z;
    const uint tid = gl_LocalInvocationID.x;
    const uint hd = HD;
    const uint kvh = h / (p.n_head / p.n_head_kv);
    const uint kv_col = kvh * hd;
    uint first, n_span;
    span_of(t, first, n_span);
    uint c_begin, c_end;
    chunk_range(n_span, z, c_begin, c_end);

    // The V sum: lane tid owns output dims d0, d0 + BLOCK_SIZE, ... of cell
    // group g. With head_dim < BLOCK_SIZE the G = BLOCK_SIZE / head_dim
    // groups each take every G-th cell of a tile, so all lanes work (with
    // head_dim 8 one group would leave 56 of 64 lanes idle); the groups'
    // sums are added once at the end.
    const uint lanes_d = min(hd, BLOCK_SIZE);
    const uint G = BLOCK_SIZE / lanes_d;
    const uint g = tid / lanes_d;  // >= G: idle in the V sum
    const uint d0 = tid % lanes_d;
    float acc[DIMS_PER_LANE];
    for (uint r = 0u; r < DIMS_PER_LANE; ++r) acc[r] = 0.0;

    if (tid == 0u) poisoned = 0u;
    for (uint d = tid; d < hd; d += BLOCK_SIZE) qs[d] = q[t * p.q_stride + h * hd + d];
    barrier();

    float m = LOW;  // running max (same value in every thread)
    float l = 0.0;  // running sum of exp(s - m)
    for (uint c0 = c_begin; c0 < c_end; c0 += BLOCK_SIZE) {
        const uint j = c0 + tid;
        float s = LOW;
        if (j < c_end) {
            const uint cell = table[first + j];
            cell_of[tid] = cell;
            float dot = 0.0;
            const uint kb = cell * p.kv_stride + kv_col;
            for (uint e = 0u; e < hd; ++e) dot += qs[e] * k_at(kb + e);
            s = score(dot);
            if (poisons_softmax(s)) atomicOr(poisoned, 1u);
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
        const uint n_here = min(BLOCK_SIZE, c_end - c0);
        if (g < G) {
            for (uint r = 0u; r < DIMS_PER_LANE; ++r) acc[r] *= alpha;
            for (uint jj = g; jj < n_here; jj += G) {
                const float pj = prob[jj];
                const uint vb = cell_of[jj] * p.kv_stride + kv_col;
                for (uint r = 0u; r < DIMS_PER_LANE; ++r) {
                    const uint d = d0 + r * BLOCK_SIZE;
                    if (d < hd) acc[r] += pj * v_at(vb + d);
                }
            }
        }
        m = m_new;
        barrier();  // prob/red/cell_of reused by the next tile
    }
    if (G > 1u) {  // head_dim < BLOCK_SIZE: one dim per lane, add the groups
        red[tid] = g < G ? acc[0] : 0.0;
        barrier();
        if (tid < hd) {
            float sum = 0.0;
            for (uint gg = 0u; gg < G; ++gg) sum += red[gg * hd + tid];
            acc[0] = sum;
        }
    }
    barrier();  // every lane's poisoned flag is in
    if (poisoned != 0u) l = nan_value();
    if (g == 0u) {
        for (uint r = 0u; r < DIMS_PER_LANE; ++r) {
            const uint d = d0 + r * BLOCK_SIZE;
            if (d < hd) store_value(t, h, z, d, acc[r], l);
        }
        if (tid == 0u) store_max_sum(t, h, z, m, l);
    }
}
