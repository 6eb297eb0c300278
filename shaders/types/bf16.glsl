// BF16 weights: the upper 16 bits of a binary32, read from uint32 words
// (no 16-bit storage needed; a row may start mid-word when ne0 is odd).
#if defined(W_TEX)
// On the texel path (w_bytes.glsl) as a block type: 32-value units of 64
// bytes, the values as the quants, an identity affine map.
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 64u

struct WBlock {
    uint none;
};

struct WUnit {
    uvec4 v[4];
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.none = 0u;
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    WUnit r;
    for (uint i = 0u; i < 4u; ++i) r.v[i] = w_u128(blk * W_BLOCK_BYTES + 16u * i);
    r.am = vec4(1.0, 0.0, 1.0, 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint word = r.v[i >> 3][(i >> 1) & 3u];
    return uintBitsToFloat((i & 1u) != 0u ? (word & 0xFFFF0000u) : (word << 16));
}
#else
#define W_PLAIN
layout(std430, binding = 0) readonly buffer W { uint w[]; };
float w_get(uint row, uint k, uint ne0) {
    const uint i = row * ne0 + k;
    const uint word = w[i >> 1];
    return uintBitsToFloat((i & 1u) != 0u ? (word & 0xFFFF0000u) : (word << 16));
}
#endif
