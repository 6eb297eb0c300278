#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// y[t, row_offset + r] = sum_k W[r, k] * x[t, k] on CPU devices (lavapipe),
// reading weights and x only through uniform texel buffers of 16-byte
// texels. Why: llvmpipe turns every storage-buffer read into a loop over
// its SIMD lanes (a bounds check and a scalar load per lane, about 20
// instructions per 32-bit word per lane), while a texel fetch of 16 bytes
// costs a few vector instructions.
//
// Lanes are rows: invocation i computes rows row_first + row_step * (R i + r),
// r < R, for NT tokens at once (each x texel serves R rows, each decoded
// quant NT tokens). A row is walked chunk by chunk, a chunk being the fewest
// whole blocks that fill whole texels (Q4_0: 8 blocks of 18 bytes = 9
// texels); each row's chunk goes into w_win and the unrolled block and unit
// loops decode it at constant offsets (w_bytes.glsl, W_TEX). All rows of a
// dispatch start W_PHASE bytes into a texel: when a row's bytes are not a
// multiple of 16 the host dispatches each class of rows (row_step apart)
// with its own phase.
//
// W: [rows, ne0] piece of a weight (binding 0, RGBA32UI texels);
// x: [n_tok, x_stride] f32 from x_offset (binding 1, RGBA32F texels;
// x_offset and x_stride multiples of 4); y: [n_tok, y_stride] f32 from
// y_offset. ne0 is a multiple of W_QK (plain types: of 32).
#include "common.glsl"

layout(constant_id = 1) const uint R = 2u;        // rows per invocation
layout(constant_id = 2) const uint NT = 1u;       // tokens per invocation
layout(constant_id = 3) const uint W_PHASE = 0u;  // byte offset of the rows' starts in their texel
#define W_ROWS R

layout(push_constant) uniform Push {
    uint ne0, n_tok, row_offset;
    uint x_offset, x_stride;  // floats, multiples of 4
    uint y_offset, y_stride;  // floats
    uint row_first, row_step, n_rows;  // this dispatch's rows of the piece
    uint row_bytes;
} p;

#include "weights.glsl"
layout(binding = 1) uniform samplerBuffer x_tex;
layout(std430, binding = 2) buffer Y { float y[]; };

// Blocks per chunk: the fewest whose bytes are a multiple of 16.
const uint W_CHUNK = W_BLOCK_BYTES % 16u == 0u  ? 1u
                     : W_BLOCK_BYTES % 8u == 0u ? 2u
                     : W_BLOCK_BYTES % 4u == 0u ? 4u
                                                : 8u;
const uint W_CHUNK_TEXELS = W_CHUNK * W_BLOCK_BYTES / 16u;
// Texels fetched per chunk: the chunk's, plus the one a phase spills into.
const uint W_FETCH = W_CHUNK_TEXELS + (W_PHASE != 0u ? 1u : 0u);

void main() {
    const uint i0 = gl_GlobalInvocationID.x * R;
    const uint t0 = gl_WorkGroupID.y * NT;
    if (i0 >= p.n_rows || t0 >= p.n_tok) return;
    const uint nt = min(NT, p.n_tok - t0);  // tokens of this group, 1..NT
    uint row[R];
    int tex[R];  // texel of the next chunk of each row
    [[unroll]] for (uint r = 0u; r < R; ++r) {
        row[r] = p.row_first + p.row_step * min(i0 + r, p.n_rows - 1u);
        tex[r] = int((row[r] * p.row_bytes) >> 4);
    }
    int xt[NT];  // texel of each token's x row (tokens past nt repeat the last)
    [[unroll]] for (uint j = 0u; j < NT; ++j) {
        xt[j] = int((p.x_offset + (t0 + min(j, nt - 1u)) * p.x_stride) >> 2);
    }
    float sum[R][NT];
    [[unroll]] for (uint r = 0u; r < R; ++r) {
        [[unroll]] for (uint j = 0u; j < NT; ++j) sum[r][j] = 0.0;
    }

    const uint nb = p.ne0 / W_QK;
    // The last chunk of a row may be short, and the window of the piece's
    // last row would then pass the end of the view: reads are clamped to
    // the view (the texels past the row are never decoded).
    const int last = textureSize(w_tex) - 1;
    for (uint b0 = 0u; b0 < nb; b0 += W_CHUNK) {
        [[unroll]] for (uint r = 0u; r < R; ++r) {
            [[unroll]] for (uint i = 0u; i < W_FETCH; ++i) {
                w_win[r][i] = texelFetch(w_tex, min(tex[r] + int(i), last));
            }
            tex[r] += int(W_CHUNK_TEXELS);
        }
        [[unroll]] for (uint k = 0u; k < W_CHUNK; ++k) {
            if (b0 + k < nb) {  // the last chunk may be short
                WBlock hb[R];
                [[unroll]] for (uint r = 0u; r < R; ++r) {
                    w_row = r;
                    hb[r] = w_block(k);
                }
                [[unroll]] for (uint u = 0u; u < W_UNITS; ++u) {
                    const int xk = int(((b0 + k) * W_QK + 32u * u) >> 2);
                    vec4 xv[NT][8];
                    [[unroll]] for (uint j = 0u; j < NT; ++j) {
                        [[unroll]] for (uint i = 0u; i < 8u; ++i) {
                            xv[j][i] = texelFetch(x_tex, xt[j] + xk + int(i));
                        }
                    }
#if defined(W_OFFSET)
                    vec2 xs[NT];  // sums of x over the unit's two halves
                    [[unroll]] for (uint j = 0u; j < NT; ++j) {
                        const vec4 a = (xv[j][0] + xv[j][1]) + (xv[j][2] + xv[j][3]);
                        const vec4 c = (xv[j][4] + xv[j][5]) + (xv[j][6] + xv[j][7]);
                        xs[j] = vec2((a.x + a.y) + (a.z + a.w), (c.x + c.y) + (c.z + c.w));
                    }
#endif
                    [[unroll]] for (uint r = 0u; r < R; ++r) {
                        w_row = r;
                        const WUnit wu = w_unit_load(hb[r], k, u);
                        vec4 q[8];  // quants 4i .. 4i + 3
                        [[unroll]] for (uint i = 0u; i < 8u; ++i) {
                            q[i] = vec4(w_unit_quant(wu, 4u * i), w_unit_quant(wu, 4u * i + 1u),
                                        w_unit_quant(wu, 4u * i + 2u), w_unit_quant(wu, 4u * i + 3u));
                        }
                        [[unroll]] for (uint j = 0u; j < NT; ++j) {
                            vec4 a = vec4(0.0), c = vec4(0.0);
                            [[unroll]] for (uint i = 0u; i < 4u; ++i) {
                                a = fma(q[i], xv[j][i], a);
                                c = fma(q[i + 4u], xv[j][i + 4u], c);
                            }
                            const float s0 = (a.x + a.y) + (a.z + a.w);
                            const float s1 = (c.x + c.y) + (c.z + c.w);
#if defined(W_OFFSET)
                            sum[r][j] += (wu.am.x * s0 + wu.am.y * xs[j].x) + (wu.am.z * s1 + wu.am.w * xs[j].y);
#else
                            sum[r][j] += wu.am.x * s0 + wu.am.z * s1;
#endif
                        }
                    }
                }
            }
        }
    }
    [[unroll]] for (uint r = 0u; r < R; ++r) {
        if (i0 + r < p.n_rows) {
            [[unroll]] for (uint j = 0u; j < NT; ++j) {
                if (j < nt) y[p.y_offset + (t0 + j) * p.y_stride + p.row_offset + row[r]] = sum[r][j];
            }
        }
    }
}
