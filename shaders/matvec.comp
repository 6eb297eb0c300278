#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// y[t, row_offset + r] = sum_k W[r, k] * x[t, k]: matrix x vector (decode).
// One workgroup per (row, token); threads stride over k (plain types) or
// over 32-value blocks (Q8_0/Q4_0: dequantize in the shader, accumulate in
// f32), then a shared-memory tree reduction (any subgroup size).
// W: [rows, ne0] piece of a weight (binding 0, see weights.glsl);
// x: [n_tok, x_stride] f32 at x_offset; y: [n_tok, y_stride] f32 at y_offset.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint ne0;         // row length (input dim)
    uint rows;        // rows in this piece
    uint row_offset;  // global index of the piece's first row
    uint n_tok;
    uint x_offset, x_stride;  // floats
    uint y_offset, y_stride;  // floats
} p;

#include "weights.glsl"
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

shared float partial[BLOCK_SIZE];

void main() {
    const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.z;
    if (row >= p.rows) return;  // whole workgroup leaves together
    const uint tid = gl_LocalInvocationID.x;
    const uint xb = p.x_offset + t * p.x_stride;
    float sum = 0.0;
#if defined(W_Q8_0) || defined(W_Q4_0)
    const uint nb = p.ne0 / 32u;
    for (uint b = tid; b < nb; b += BLOCK_SIZE) {
        const uint blk = row * nb + b;
        const uint xk = xb + b * 32u;
        float s = 0.0;
        for (uint i = 0u; i < 32u; ++i) s += blk_q(blk, i) * x[xk + i];
        sum += blk_scale(blk) * s;
    }
#else
    for (uint k = tid; k < p.ne0; k += BLOCK_SIZE) sum += w_get(row, k, p.ne0) * x[xb + k];
#endif
    partial[tid] = sum;
    barrier();
    for (uint s = BLOCK_SIZE / 2u; s > 0u; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        barrier();
    }
    if (tid == 0u) y[p.y_offset + t * p.y_stride + p.row_offset + row] = partial[0];
}
