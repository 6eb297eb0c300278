#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// RoPE (Su et al. 2021, RoFormer) in place on x: [n_tok, stride] f32 where
// each token holds n_head heads of head_dim at `offset`. Pair (a, b) of
// head dims rotates by theta = pos * base^(-2i/n_rot): Normal mode pairs
// (2i, 2i+1) as llama; NeoX pairs (i, i + n_rot/2). cos/sin come from the
// host as cs: [n_tok, n_rot/2, 2] (computed in double there, so every
// device rotates identically, large positions included). Dims >= n_rot
// are left alone (ggml's partial rotation).
// One dispatch rotates both Q (binding 0, push n_head/offset/stride) and K
// (binding 2, n_head2/offset2/stride2) of the same tokens; workgroup z
// selects which (0 = Q, 1 = K).
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n_tok, n_head, head_dim, n_rot;
    uint offset, stride;
    uint neox;
    uint n_head2, offset2, stride2;
} p;

layout(std430, binding = 0) buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer CS { float cs[]; };
layout(std430, binding = 2) buffer X2 { float x2[]; };

void rotate(uint a, uint b, float c, float s) {
    if (gl_WorkGroupID.z != 0u) {
        const float y0 = x2[a], y1 = x2[b];
        x2[a] = y0 * c - y1 * s;
        x2[b] = y0 * s + y1 * c;
        return;
    }
    const float x0 = x[a], x1 = x[b];
    x[a] = x0 * c - x1 * s;
    x[b] = x0 * s + x1 * c;
}

void main() {
    const uint half_rot = p.n_rot / 2u;
    const uint idx = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    const uint i = idx % half_rot;
    const uint h = idx / half_rot;
    const bool second = gl_WorkGroupID.z != 0u;  // K instead of Q
    const uint n_head = second ? p.n_head2 : p.n_head;
    if (h >= n_head || t >= p.n_tok) return;
    const uint base = (second ? p.offset2 + t * p.stride2 : p.offset + t * p.stride) + h * p.head_dim;
    const uint a = p.neox != 0u ? base + i : base + 2u * i;
    const uint b = p.neox != 0u ? base + i + half_rot : base + 2u * i + 1u;
    const float c = cs[(t * half_rot + i) * 2u];
    const float s = cs[(t * half_rot + i) * 2u + 1u];
    rotate(a, b, c, s);
}
