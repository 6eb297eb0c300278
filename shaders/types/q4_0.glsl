// Q4_0 (ggml block_q4_0, 18 bytes): f16 d, then 16 bytes whose low nibbles
// are values 0..15 and high nibbles values 16..31; value = d * (q - 8).
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 18u

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
    return float(int(i < 16u ? (by & 0xFu) : (by >> 4)) - 8);
}
