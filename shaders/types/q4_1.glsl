// Q4_1 (ggml block_q4_1, 20 bytes): f16 d, f16 m, then 16 bytes whose low
// nibbles are values 0..15 and high nibbles values 16..31;
// value = d * q + m. 20 bytes: blocks start on 4-byte boundaries.
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 20u
#define W_OFFSET

struct WBlock {
    vec2 dm;  // d, m
};

struct WUnit {
    uvec4 qs;
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.dm = unpackHalf2x16(w_u32a(blk * W_BLOCK_BYTES));
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    WUnit r;
    r.qs = w_u128a(blk * W_BLOCK_BYTES + 4u);
    r.am = vec4(b.dm.x, b.dm.y, b.dm.x, b.dm.y);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint by = byte16(r.qs, i & 15u);
    return float(i < 16u ? (by & 0xFu) : (by >> 4));
}
