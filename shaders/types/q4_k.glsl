// Q4_K (ggml block_q4_K, 144 bytes): f16 d, f16 dmin, 12 bytes of eight
// packed 6-bit scales and mins (k4_scales.glsl), 128 bytes of nibbles:
// 32-value sub-block u reads bytes 32 * (u / 2) .. + 31, low nibbles for
// even u, high for odd. Value: d * scale_u * q - dmin * min_u.
// 144 bytes: blocks start on 4-byte boundaries.
#include "w_bytes.glsl"

#define W_QK 256u
#define W_BLOCK_BYTES 144u
#define W_OFFSET
#include "k4_scales.glsl"

struct WBlock {
    vec2 dm;   // d, dmin
    uvec3 sc;  // packed scales and mins
};

struct WUnit {
    uvec4 lo, hi;  // nibble bytes of values 0..15, 16..31
    uint shift;
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
    const uint src = blk * W_BLOCK_BYTES + 16u + 32u * (u >> 1);
    WUnit r;
    r.lo = w_u128a(src);
    r.hi = w_u128a(src + 16u);
    r.shift = 4u * (u & 1u);
    const vec2 sm = k4_scale_min(b.sc, u);
    const float d = b.dm.x * sm.x, m = -b.dm.y * sm.y;
    r.am = vec4(d, m, d, m);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint w = i < 16u ? r.lo[(i >> 2) & 3u] : r.hi[(i >> 2) & 3u];
    return float((byte_of(w, i & 3u) >> r.shift) & 0xFu);
}
