#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// y[t, row_offset + r] = sum_k W[r, k] * x[t, k], one invocation per (row,
// token) with no shared memory or barriers: the variant for CPU devices
// (lavapipe), where each workgroup and each barrier costs far more than
// the arithmetic of a short row. Shapes and push constants as matvec.comp.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint ne0, rows, row_offset, n_tok;
    uint x_offset, x_stride;
    uint y_offset, y_stride;
} p;

#include "weights.glsl"
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

void main() {
    const uint row = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    if (row >= p.rows || t >= p.n_tok) return;
    const uint xb = p.x_offset + t * p.x_stride;
    float sum = 0.0;
#if defined(W_Q8_0) || defined(W_Q4_0)
    const uint nb = p.ne0 / 32u;
    for (uint b = 0u; b < nb; ++b) {
        const uint blk = row * nb + b;
        float s = 0.0;
        for (uint i = 0u; i < 32u; ++i) s += blk_q(blk, i) * x[xb + b * 32u + i];
        sum += blk_scale(blk) * s;
    }
#else
    for (uint k = 0u; k < p.ne0; ++k) sum += w_get(row, k, p.ne0) * x[xb + k];
#endif
    y[p.y_offset + t * p.y_stride + p.row_offset + row] = sum;
}
