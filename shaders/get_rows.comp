#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Embedding lookup / row gather: y[i, k] = W[ids[i] - row_offset, k] for
// ids inside this piece [row_offset, row_offset + rows); other ids are
// left to the dispatch of the piece that holds them. Any weight type
// (dequantized to f32). W: [rows, ne0]; ids: [n_ids] int32; y: [n_ids, y_stride].
#include "common.glsl"

layout(push_constant) uniform Push {
    uint ne0, rows, row_offset, n_ids;
    uint y_offset, y_stride;
} p;

#include "weights.glsl"
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

void main() {
    const uint k = gl_GlobalInvocationID.x;
    const uint i = gl_WorkGroupID.y;
    if (k >= p.ne0 || i >= p.n_ids) return;
    const int id = ids[i] - int(p.row_offset);
    if (id < 0 || uint(id) >= p.rows) return;
    y[p.y_offset + i * p.y_stride + k] = w_get(uint(id), k, p.ne0);
}
