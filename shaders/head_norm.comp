#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// Per-head RMSNorm in place (QK-norm of qwen3 and gemma3, applied to Q and
// K before RoPE as llama.cpp's build_norm on the [head_dim, n_head, n_tok]
// view): for each token t and head h of x,
//   x[h] = x[h] / sqrt(mean(x[h]^2) + eps) * g,
// x: rows of `stride` floats, token t's heads at off + t * stride +
// h * head_dim; g: [head_dim] f32. One workgroup per (head h, token t).
#include "common.glsl"

layout(push_constant) uniform Push {
    uint head_dim, n_head, n_tok, off, stride;
    float eps;
} p;

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer G { float g[]; };

shared float partial[BLOCK_SIZE];

void main() {
    const uint h = gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.y;
    const uint tid = gl_LocalInvocationID.x;
    const uint base = p.off + t * p.stride + h * p.head_dim;
    float s = 0.0;
    for (uint i = tid; i < p.head_dim; i += BLOCK_SIZE) s += x[base + i] * x[base + i];
    partial[tid] = s;
    barrier();
    for (uint k = BLOCK_SIZE / 2u; k > 0u; k >>= 1) {
        if (tid < k) partial[tid] += partial[tid + k];
        barrier();
    }
    const float scale = 1.0 / sqrt(partial[0] / float(p.head_dim) + p.eps);
    for (uint i = tid; i < p.head_dim; i += BLOCK_SIZE) x[base + i] = x[base + i] * scale * g[i];
}
