// The texel path (W_TEX, w_bytes.glsl) of the plain types f32, f16 and
// bf16, read as a block type: 32-value units of W_BLOCK_BYTES bytes (32
// values of 4 or 2 bytes, which the including decoder defines, along with
// w_unit_quant), the values' bits as the quants, an identity affine map.
#include "w_bytes.glsl"

#define W_QK 32u

struct WBlock {
    uint none;
};

struct WUnit {
    uvec4 v[W_BLOCK_BYTES / 16u];
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.none = 0u;
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    WUnit r;
    for (uint i = 0u; i < W_BLOCK_BYTES / 16u; ++i) r.v[i] = w_u128(blk * W_BLOCK_BYTES + 16u * i);
    r.am = vec4(1.0, 0.0, 1.0, 0.0);
    return r;
}
