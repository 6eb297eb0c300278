// Q2_K (ggml block_q2_K, 84 bytes): 16 scale bytes (low nibble: scale,
// high nibble: min, one per 16 values), 64 bytes of 2-bit quants, f16 d,
// f16 dmin. Value of 16-value group s: d * (sc_s & 15) * q - dmin *
// (sc_s >> 4). The quant of value 128h + 32j + l sits in byte 32h + l at
// bit 2j, so unit u = 4h + j reads bytes 32h .. 32h + 31 shifted by 2j and
// groups 2u, 2u + 1. 84 bytes: blocks start on 4-byte boundaries.
#include "w_bytes.glsl"

#define W_QK 256u
#define W_BLOCK_BYTES 84u
#define W_OFFSET

struct WBlock {
    vec2 dm;   // d, dmin
    uvec4 sc;  // the 16 scale/min bytes
};

struct WUnit {
    uvec4 lo, hi;  // quant bytes of values 0..15, 16..31
    uint shift;
    vec4 am;
};

WBlock w_block(uint blk) {
    const uint base = blk * W_BLOCK_BYTES;
    WBlock b;
    b.sc = w_u128a(base);
    b.dm = unpackHalf2x16(w_u32a(base + 80u));
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint src = blk * W_BLOCK_BYTES + 16u + 32u * (u >> 2);
    WUnit r;
    r.lo = w_u128a(src);
    r.hi = w_u128a(src + 16u);
    r.shift = 2u * (u & 3u);
    const uint s0 = byte16(b.sc, 2u * u), s1 = byte16(b.sc, 2u * u + 1u);
    r.am = vec4(b.dm.x * float(s0 & 0xFu), -b.dm.y * float(s0 >> 4), b.dm.x * float(s1 & 0xFu),
                -b.dm.y * float(s1 >> 4));
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint w = i < 16u ? r.lo[(i >> 2) & 3u] : r.hi[(i >> 2) & 3u];
    return float((byte_of(w, i & 3u) >> r.shift) & 3u);
}
