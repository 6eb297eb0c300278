#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// SwiGLU (Shazeer 2020): y = silu(g) * u, silu(g) = g / (1 + exp(-g)).
// g, u, y: [n] f32 (n = n_tok * n_ff).
#include "common.glsl"

layout(push_constant) uniform Push { uint n; } p;
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer U { float u[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

void main() {
    const uint i = flat_id();
    if (i >= p.n) return;
    const float v = g[i];
    y[i] = v / (1.0 + exp(-v)) * u[i];
}
