// Q5_1 (ggml block_q5_1, 24 bytes): f16 d, f16 m, a uint32 qh (fifth bit
// of value i in bit i), 16 bytes of low nibbles; value = d * q + m.
// 24 bytes: blocks start on 4-byte boundaries.
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 24u
#define W_OFFSET

struct WBlock {
    vec2 dm;  // d, m
};

struct WUnit {
    uvec4 qs;
    uint qh;
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.dm = unpackHalf2x16(w_u32a(blk * W_BLOCK_BYTES));
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint base = blk * W_BLOCK_BYTES;
    WUnit r;
    r.qh = w_u32a(base + 4u);
    r.qs = w_u128a(base + 8u);
    r.am = vec4(b.dm.x, b.dm.y, b.dm.x, b.dm.y);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint by = byte16(r.qs, i & 15u);
    const uint lo = i < 16u ? (by & 0xFu) : (by >> 4);
    return float(lo | (((r.qh >> i) & 1u) << 4));
}
