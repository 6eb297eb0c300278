// Q5_K (ggml block_q5_K, 176 bytes): f16 d, f16 dmin, 12 bytes of packed
// scales and mins (k4_scales.glsl), qh[32] (fifth bit of value 32u + l in
// byte l, bit u), 128 bytes of nibbles as Q4_K. Value: d * scale_u * q -
// dmin * min_u. 176 bytes: blocks start on 4-byte boundaries.
#include "w_bytes.glsl"

#define W_QK 256u
#define W_BLOCK_BYTES 176u
#define W_OFFSET
#include "k4_scales.glsl"

struct WBlock {
    vec2 dm;   // d, dmin
    uvec3 sc;  // packed scales and mins
};

struct WUnit {
    uvec4 lo, hi;  // nibble bytes of values 0..15, 16..31
    uint shift;
    uint hbits;  // bit l: the fifth bit of value l
    vec4 am;
};

WBlock w_block(uint blk) {
    const uint base = blk * W_BLOCK_BYTES;
    WBlock b;
    b.dm = unpackHalf2x16(w_u32a(base));
    b.sc = uvec3(w_u32a(base + 4u), w_u32a(base + 8u), w_u32a(base + 12u));
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint base = blk * W_BLOCK_BYTES;
    const uint src = base + 48u + 32u * (u >> 1);
    WUnit r;
    r.lo = w_u128a(src);
    r.hi = w_u128a(src + 16u);
    r.shift = 4u * (u & 1u);
    r.hbits = bits_of_32(w_u128a(base + 16u), w_u128a(base + 32u), u);
    const vec2 sm = k4_scale_min(b.sc, u);
    const float d = b.dm.x * sm.x, m = -b.dm.y * sm.y;
    r.am = vec4(d, m, d, m);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint w = i < 16u ? r.lo[(i >> 2) & 3u] : r.hi[(i >> 2) & 3u];
    return float(((byte_of(w, i & 3u) >> r.shift) & 0xFu) | (((r.hbits >> i) & 1u) << 4));
}
