#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// KV-cache write of K and V in one dispatch: cache[slots[t], :] = src[t, :]
// for n_tok tokens of n values (n = n_head_kv * head_dim); workgroup z
// selects K (src binding 0 -> cache binding 2) or V (3 -> 4). KV_F16: the
// cache holds binary16 pairs packed in uint32 words (n even), rounded as
// llama.cpp's default F16 cache does; otherwise f32. src: [n_tok, n] f32;
// slots: [n_tok] int32 (cell index from KvCells::find_slots); cache:
// [n_ctx, n].
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n, n_tok;
} p;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) readonly buffer Slots { int slots[]; };
#if defined(KV_F16)
layout(std430, binding = 2) buffer Cache { uint cache[]; };
#else
layout(std430, binding = 2) buffer Cache { float cache[]; };
#endif
layout(std430, binding = 3) readonly buffer Src2 { float src2[]; };
#if defined(KV_F16)
layout(std430, binding = 4) buffer Cache2 { uint cache2[]; };
#else
layout(std430, binding = 4) buffer Cache2 { float cache2[]; };
#endif

void main() {
    const uint e = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    if (t >= p.n_tok) return;
    const uint cell = uint(slots[t]);
#if defined(KV_F16)
    if (2u * e >= p.n) return;
    const uint s = t * p.n + 2u * e;
    if (gl_WorkGroupID.z != 0u) {
        cache2[(cell * p.n) / 2u + e] = packHalf2x16(vec2(src2[s], src2[s + 1u]));
        return;
    }
    cache[(cell * p.n) / 2u + e] = packHalf2x16(vec2(src[s], src[s + 1u]));
#else
    if (e >= p.n) return;
    if (gl_WorkGroupID.z != 0u) {
        cache2[cell * p.n + e] = src2[t * p.n + e];
        return;
    }
    cache[cell * p.n + e] = src[t * p.n + e];
#endif
}
