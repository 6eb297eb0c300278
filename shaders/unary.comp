#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Elementwise in place on x: [n] f32.
//   SCALE:   x = x * c                 (gemma's embedding scale sqrt(n_embd))
//   SOFTCAP: x = c * tanh(x / c)       (gemma2's final logit soft-capping)
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n;
    float c;
} p;
layout(std430, binding = 0) buffer X { float x[]; };

void main() {
    const uint i = flat_id();
    if (i >= p.n) return;
#if defined(SOFTCAP)
    x[i] = p.c * tanh_stable(x[i] / p.c);
#else
    x[i] = x[i] * p.c;
#endif
}
