#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Residual add in place: a[i] += b[i], a, b: [n] f32.
#include "common.glsl"

layout(push_constant) uniform Push { uint n; } p;
layout(std430, binding = 0) buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };

void main() {
    const uint i = flat_id();
    if (i >= p.n) return;
    a[i] += b[i];
}
