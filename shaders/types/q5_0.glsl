// Q5_0 (ggml block_q5_0, 22 bytes): f16 d, a uint32 qh whose bit i is the
// fifth bit of value i, then 16 bytes of low nibbles (values 0..15 low,
// 16..31 high); value = d * (q - 16).
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 22u

struct WBlock {
    float d;
};

struct WUnit {
    uvec4 qs;
    uint qh;
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.d = w_f16(blk * W_BLOCK_BYTES);
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint base = blk * W_BLOCK_BYTES;
    WUnit r;
    r.qh = w_u32(base + 2u);
    r.qs = w_u128(base + 6u);
    r.am = vec4(b.d, 0.0, b.d, 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint by = byte16(r.qs, i & 15u);
    const uint lo = i < 16u ? (by & 0xFu) : (by >> 4);
    return float(int(lo | (((r.qh >> i) & 1u) << 4)) - 16);
}
