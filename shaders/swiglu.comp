#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// SwiGLU (Shazeer 2020): y = silu(g) * u, silu(g) = g / (1 + exp(-g)); with
// GELU (the geglu variant, gemma): y = gelu(g) * u, GELU in its tanh form
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) (Hendrycks & Gimpel 2016).
// g: [n_tok, in_stride] from g_off, u likewise from u_off (g and u may be
// halves of one buffer: the fused gate/up projection); y: [n_tok, n] f32.
// Workgroup row y = token.
#include "common.glsl"

layout(push_constant) uniform Push { uint n, n_tok, g_off, u_off, in_stride; } p;
layout(std430, binding = 0) readonly buffer G { float g[]; };
layout(std430, binding = 1) readonly buffer U { float u[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

void main() {
    const uint i = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    if (i >= p.n || t >= p.n_tok) return;
    const float v = g[p.g_off + t * p.in_stride + i];
#if defined(GELU)
    const float z = 0.7978845608028654 * (v + 0.044715 * v * v * v);
    const float a = 0.5 * v * (1.0 + tanh_stable(z));
#else
    const float a = v / (1.0 + exp(-v));
#endif
    y[t * p.n + i] = a * u[p.u_off + t * p.in_stride + i];
}
