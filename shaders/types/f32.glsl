// F32 weights: one float per element.
#if defined(W_TEX)
// On the texel path (w_bytes.glsl) as a block type: 32-value units of 128
// bytes, the floats' bits as the quants, an identity affine map.
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 128u

struct WBlock {
    uint none;
};

struct WUnit {
    uvec4 v[8];
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.none = 0u;
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    WUnit r;
    for (uint i = 0u; i < 8u; ++i) r.v[i] = w_u128(blk * W_BLOCK_BYTES + 16u * i);
    r.am = vec4(1.0, 0.0, 1.0, 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) { return uintBitsToFloat(r.v[i >> 2][i & 3u]); }
#else
#define W_PLAIN
layout(std430, binding = 0) readonly buffer W { float w[]; };
float w_get(uint row, uint k, uint ne0) { return w[row * ne0 + k]; }
#endif
