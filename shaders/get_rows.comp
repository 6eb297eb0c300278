#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_control_flow_attributes : enable
// Embedding lookup / row gather: y[i, k] = W[ids[i] - row_offset, k] for
// ids inside this piece [row_offset, row_offset + rows); other ids are
// left to the dispatch of the piece that holds them. Any weight type
// (dequantized to f32 by its decoder, weights.glsl). W: [rows, ne0]; ids: [n_ids] int32; y: [n_ids, y_stride].
#include "common.glsl"

layout(push_constant) uniform Push {
    uint ne0, rows, row_offset, n_ids;
    uint y_offset, y_stride;
} p;

#include "weights.glsl"
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

// Plain types: one invocation per element k. Block types: one per 32-value
// unit g (values 32g .. 32g + 31), decoded once.
void main() {
    const uint i = gl_WorkGroupID.y;
#if defined(W_PLAIN)
    const uint k = gl_GlobalInvocationID.x;
    if (k >= p.ne0 || i >= p.n_ids) return;
#else
    const uint g = gl_GlobalInvocationID.x;
    if (g >= p.ne0 / 32u || i >= p.n_ids) return;
#endif
    const int id = ids[i] - int(p.row_offset);
    if (id < 0 || uint(id) >= p.rows) return;
#if defined(W_PLAIN)
    y[p.y_offset + i * p.y_stride + k] = w_get(uint(id), k, p.ne0);
#else
    float v[32];
    w_row_unit(uint(id), g, p.ne0, v);
    const uint yo = p.y_offset + i * p.y_stride + g * 32u;
    [[unroll]] for (uint j = 0u; j < 32u; ++j) y[yo + j] = v[j];
#endif
}
