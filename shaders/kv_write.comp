#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// KV-cache write of K and V in one dispatch: cache[slots[t], :] =
// src[off + t * src_stride, n values] for n_tok tokens of n values (n =
// n_head_kv * head_dim); workgroup z selects K (src binding 0 at k_off ->
// cache binding 2) or V (binding 3 at v_off -> 4). K and V may be columns
// of one [n_tok, src_stride] buffer (the fused QKV projection). KV_F16: the
// cache holds binary16 pairs packed in uint32 words (n even), rounded as
// llama.cpp's default F16 cache does; otherwise f32. slots: [n_tok] int32
// (cell index from KvCells::find_slots); cache: [n_ctx, n].
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n, n_tok, k_off, v_off, src_stride;
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
    const uint s = t * p.src_stride + 2u * e;
    if (gl_WorkGroupID.z != 0u) {
        cache2[(cell * p.n) / 2u + e] =
            packHalf2x16(vec2(src2[p.v_off + s], src2[p.v_off + s + 1u]));
        return;
    }
    cache[(cell * p.n) / 2u + e] = packHalf2x16(vec2(src[p.k_off + s], src[p.k_off + s + 1u]));
#else
    if (e >= p.n) return;
    const uint s = t * p.src_stride + e;
    if (gl_WorkGroupID.z != 0u) {
        cache2[cell * p.n + e] = src2[p.v_off + s];
        return;
    }
    cache[cell * p.n + e] = src[p.k_off + s];
#endif
}
