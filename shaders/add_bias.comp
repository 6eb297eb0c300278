#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Bias add in place (qwen2's Q/K/V biases): y[off + t * stride + i] += b[i]
// for i < n, t < n_rows. y: rows of `stride` floats; b: [n] f32.
// Workgroup row y = row t.
#include "common.glsl"

layout(push_constant) uniform Push { uint n, n_rows, off, stride; } p;
layout(std430, binding = 0) buffer Y { float y[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };

void main() {
    const uint i = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    if (i >= p.n || t >= p.n_rows) return;
    y[p.off + t * p.stride + i] += b[i];
}
