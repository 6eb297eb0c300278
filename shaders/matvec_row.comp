#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_control_flow_attributes : enable
// y[t, row_offset + r] = sum_k W[r, k] * x[t, k], one invocation per (row,
// group of up to NT tokens) with no shared memory or barriers: the variant
// for CPU devices (lavapipe), where each workgroup and each barrier costs
// far more than the arithmetic of a short row. Each weight value is read
// once for the NT tokens of the group (as in matvec.comp). Shapes and push
// constants as matvec.comp.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint ne0, rows, row_offset, n_tok;
    uint x_offset, x_stride;
    uint y_offset, y_stride;
} p;

#include "weights.glsl"
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

const uint NT = 8u;  // tokens per invocation; Kernels::kVecTokensPerGroup
#define DOT_UNROLL
#include "matvec_dot.glsl"

void main() {
    const uint row = gl_GlobalInvocationID.x;
    const uint t0 = gl_WorkGroupID.y * NT;
    if (row >= p.rows || t0 >= p.n_tok) return;
    const uint nt = min(NT, p.n_tok - t0);  // tokens of this group, 1..NT
    const uint xb = p.x_offset + t0 * p.x_stride;
    float sum[NT];
    for (uint j = 0u; j < NT; ++j) sum[j] = 0.0;
#if defined(W_PLAIN)
    dot_rows(row, xb, nt, 0u, 1u, sum);
#else
    dot_rows_blocks(row, xb, nt, sum);
#endif
    for (uint j = 0u; j < NT; ++j) {
        if (j < nt) y[p.y_offset + (t0 + j) * p.y_stride + p.row_offset + row] = sum[j];
    }
}
