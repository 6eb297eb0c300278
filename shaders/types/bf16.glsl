// BF16 weights: the upper 16 bits of a binary32, read from uint32 words
// (no 16-bit storage needed; a row may start mid-word when ne0 is odd).
#if defined(W_TEX)
#define W_BLOCK_BYTES 64u
#include "plain_texel.glsl"

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
