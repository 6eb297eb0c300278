#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// RMSNorm (Zhang & Sennrich 2019, as llama.cpp's ggml_rms_norm then mul):
// y[t, :] = x[t, :] / sqrt(mean(x[t, :]^2) + eps) * g[:].
// With ADD (the add_rms_norm variant) the residual add comes first, in
// place: x[t, :] += b[t, :], then the norm of the sum; one dispatch instead
// of two, as the layer graph always normalizes right after a residual add.
// x, y, b: [n_tok, n] f32; g: [n] f32. One workgroup per token.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n, n_tok;
    float eps;
} p;

#if defined(ADD)
layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 3) readonly buffer B { float b[]; };
#else
layout(std430, binding = 0) readonly buffer X { float x[]; };
#endif
layout(std430, binding = 1) readonly buffer G { float g[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

shared float partial[BLOCK_SIZE];

void main() {
    const uint t = gl_WorkGroupID.x;
    const uint tid = gl_LocalInvocationID.x;
    const uint base = t * p.n;
    float s = 0.0;
    for (uint i = tid; i < p.n; i += BLOCK_SIZE) {
#if defined(ADD)
        const float v = x[base + i] + b[base + i];
        x[base + i] = v;  // read back below by this same invocation
#else
        const float v = x[base + i];
#endif
        s += v * v;
    }
    partial[tid] = s;
    barrier();
    for (uint k = BLOCK_SIZE / 2u; k > 0u; k >>= 1) {
        if (tid < k) partial[tid] += partial[tid + k];
        barrier();
    }
    const float scale = 1.0 / sqrt(partial[0] / float(p.n) + p.eps);
    for (uint i = tid; i < p.n; i += BLOCK_SIZE) y[base + i] = x[base + i] * scale * g[i];
}
