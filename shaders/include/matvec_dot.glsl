// Shared by matvec.comp and matvec_row.comp: the dot products of one weight
// row with up to NT token rows of x, each weight value read once.
// Needs, before the include: NT (tokens per group), weights.glsl, the push
// block `p` (ne0, x_stride), the f32 buffer `x`, and DOT_UNROLL: [[unroll]]
// for GPUs (constant register indices), empty for CPU devices (llvmpipe
// runs the rolled loop 3-4x faster: its token loop inside an unrolled body
// is executed masked for every token slot).
//
// sum[j] += sum over k of W[row, k] * x[xb + j * x_stride + k] for j < nt.
// Plain types: over the elements k = first, first + step, ...
// Block types: over the row's 32-value units, each loaded once for all
// tokens; per 16-value half the quants are dotted with x and the half's
// scale (and, with W_OFFSET, its offset times sum x) applied once, in f32.
// Quant i is extracted once and multiplied into every token's sum.

#if defined(W_PLAIN)
void dot_rows(uint row, uint xb, uint nt, uint first, uint step, inout float sum[NT]) {
    for (uint k = first; k < p.ne0; k += step) {
        const float wk = w_get(row, k, p.ne0);
        for (uint j = 0u; j < NT; ++j) {
            if (j < nt) sum[j] += wk * x[xb + j * p.x_stride + k];
        }
    }
}
#else
// Unit u of block blk (state b) against x from xk (token 0's first value).
void dot_unit(WBlock b, uint blk, uint u, uint xk, uint nt, inout float sum[NT]) {
    const WUnit r = w_unit_load(b, blk, u);
    float s0[NT], s1[NT];
    for (uint j = 0u; j < NT; ++j) s0[j] = s1[j] = 0.0;
#if defined(W_OFFSET)
    float x0[NT], x1[NT];
    for (uint j = 0u; j < NT; ++j) x0[j] = x1[j] = 0.0;
#endif
    DOT_UNROLL for (uint i = 0u; i < 16u; ++i) {
        const float q0 = w_unit_quant(r, i), q1 = w_unit_quant(r, i + 16u);
        for (uint j = 0u; j < NT; ++j) {
            if (j < nt) {
                const uint xo = xk + j * p.x_stride + i;
                const float a = x[xo], c = x[xo + 16u];
                s0[j] += q0 * a;
                s1[j] += q1 * c;
#if defined(W_OFFSET)
                x0[j] += a;
                x1[j] += c;
#endif
            }
        }
    }
    for (uint j = 0u; j < NT; ++j) {
#if defined(W_OFFSET)
        sum[j] += r.am.x * s0[j] + r.am.y * x0[j] + r.am.z * s1[j] + r.am.w * x1[j];
#else
        sum[j] += r.am.x * s0[j] + r.am.z * s1[j];
#endif
    }
}

// Units g = first, first + step, ... of the row (threads of a workgroup
// striding over units: each decodes its unit's block state itself).
void dot_rows(uint row, uint xb, uint nt, uint first, uint step, inout float sum[NT]) {
    const uint nu = p.ne0 / 32u;
    for (uint g = first; g < nu; g += step) {
        const uint blk = w_row_block(row, g, p.ne0);
        dot_unit(w_block(blk), blk, g % W_UNITS, xb + g * 32u, nt, sum);
    }
}

// The whole row by one invocation, block by block: each block's state is
// decoded once for all its units.
void dot_rows_blocks(uint row, uint xb, uint nt, inout float sum[NT]) {
    const uint nb = p.ne0 / W_QK;
    for (uint b = 0u; b < nb; ++b) {
        const uint blk = row * nb + b;
        const WBlock h = w_block(blk);
        for (uint u = 0u; u < W_UNITS; ++u) dot_unit(h, blk, u, xb + b * W_QK + u * 32u, nt, sum);
    }
}
#endif
