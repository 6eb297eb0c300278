// Shared by matvec.comp and matvec_row.comp: the dot products of one weight
// row with up to NT token rows of x, each weight value read once.
// Needs, before the include: NT (tokens per group), weights.glsl, the push
// block `p` (ne0, x_stride) and the f32 buffer `x`.
//
// sum[j] += sum over k of W[row, k] * x[xb + j * x_stride + k] for j < nt,
// over the k (plain types) or 32-value blocks (Q8_0/Q4_0: dequantized here,
// accumulated in f32 per block, then scaled) first, first + step, ...
void dot_rows(uint row, uint xb, uint nt, uint first, uint step, inout float sum[NT]) {
#if defined(W_Q8_0) || defined(W_Q4_0)
    const uint nb = p.ne0 / 32u;
    for (uint b = first; b < nb; b += step) {
        const uint blk = row * nb + b;
        float s[NT];
        for (uint j = 0u; j < NT; ++j) s[j] = 0.0;
        for (uint i = 0u; i < 32u; ++i) {
            const float wq = blk_q(blk, i);
            for (uint j = 0u; j < NT; ++j) {
                if (j < nt) s[j] += wq * x[xb + j * p.x_stride + b * 32u + i];
            }
        }
        const float d = blk_scale(blk);
        for (uint j = 0u; j < NT; ++j) sum[j] += d * s[j];
    }
#else
    for (uint k = first; k < p.ne0; k += step) {
        const float wk = w_get(row, k, p.ne0);
        for (uint j = 0u; j < NT; ++j) {
            if (j < nt) sum[j] += wk * x[xb + j * p.x_stride + k];
        }
    }
#endif
}
