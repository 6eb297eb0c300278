#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_control_flow_attributes : enable
#if defined(SUBGROUP)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
// y[t, row_offset + r] = sum_k W[r, k] * x[t, k]: matrix x vector (decode).
// One workgroup per (row, group of up to NT tokens): each weight value is
// read once and multiplied into NT accumulators, so a batch of B decoding
// sequences reads the weights ceil(B / NT) times, not B times (the weights
// dominate memory traffic in decode). Threads stride over k (plain types)
// or over 32-value units (block types: decoded in the shader, see
// weights.glsl; accumulated in f32), then one reduction for all NT sums: a shared-memory tree (any
// device), or with SUBGROUP (devices with subgroup arithmetic, chosen by
// vk::Kernels) subgroupAdd within each subgroup and one pass over the
// per-subgroup sums: one barrier instead of log2(BLOCK_SIZE) + 1.
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

const uint NT = 8u;  // tokens per workgroup; Kernels::kVecTokensPerGroup
#define DOT_UNROLL [[unroll]]
#include "matvec_dot.glsl"
shared float partial[NT * BLOCK_SIZE];  // [NT][BLOCK_SIZE]

void main() {
    const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    const uint t0 = gl_WorkGroupID.z * NT;
    if (row >= p.rows) return;  // whole workgroup leaves together
    const uint nt = min(NT, p.n_tok - t0);  // tokens of this group, 1..NT
    const uint tid = gl_LocalInvocationID.x;
    const uint xb = p.x_offset + t0 * p.x_stride;
    float sum[NT];
    for (uint j = 0u; j < NT; ++j) sum[j] = 0.0;
    dot_rows(row, xb, nt, tid, BLOCK_SIZE, sum);
    // Reduce only the nt sums in use (nt is uniform in the workgroup), so a
    // single decode token pays for one reduction, not NT.
#if defined(SUBGROUP)
    // partial[j][g] = sum over subgroup g; gl_NumSubgroups <= BLOCK_SIZE
    // whatever subgroup size the driver picks for this dispatch.
    for (uint j = 0u; j < NT; ++j) {
        if (j < nt) {
            const float v = subgroupAdd(sum[j]);
            if (subgroupElect()) partial[j * BLOCK_SIZE + gl_SubgroupID] = v;
        }
    }
    barrier();
    if (tid < nt) {
        float total = 0.0;
        for (uint g = 0u; g < gl_NumSubgroups; ++g) total += partial[tid * BLOCK_SIZE + g];
        y[p.y_offset + (t0 + tid) * p.y_stride + p.row_offset + row] = total;
    }
#else
    for (uint j = 0u; j < NT; ++j) {
        if (j < nt) partial[j * BLOCK_SIZE + tid] = sum[j];
    }
    barrier();
    for (uint s = BLOCK_SIZE / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            for (uint j = 0u; j < nt; ++j) {
                partial[j * BLOCK_SIZE + tid] += partial[j * BLOCK_SIZE + tid + s];
            }
        }
        barrier();
    }
    if (tid < nt) y[p.y_offset + (t0 + tid) * p.y_stride + p.row_offset + row] = partial[tid * BLOCK_SIZE];
#endif
}
