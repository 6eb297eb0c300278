// IQ4_NL (ggml block_iq4_nl, 18 bytes): f16 d, then 16 bytes of nibbles
// (values 0..15 low, 16..31 high) indexing ggml's non-linear table
// kvalues_iq4nl; value = d * table[q].
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 18u

const float IQ4NL_VALUES[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                         1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);

struct WBlock {
    float d;
};

struct WUnit {
    uvec4 qs;
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.d = w_f16(blk * W_BLOCK_BYTES);
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    WUnit r;
    r.qs = w_u128(blk * W_BLOCK_BYTES + 2u);
    r.am = vec4(b.d, 0.0, b.d, 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint by = byte16(r.qs, i & 15u);
    return IQ4NL_VALUES[i < 16u ? (by & 0xFu) : (by >> 4)];
}
