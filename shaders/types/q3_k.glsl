// Q3_K (ggml block_q3_K, 110 bytes): hmask[32] (third bit of value
// 32k + l in byte l, bit k), 64 bytes of 2-bit quants (value 128h + 32j + l
// in byte 32 + 32h + l at bit 2j), 12 bytes of sixteen packed signed 6-bit
// scales (one per 16 values), f16 d. Value: d * (scale - 32) * (q - 4),
// q = 2 low bits + 4 * hmask bit. Unit u = 4h + j: quant bytes 32h..,
// shift 2j, hmask bit u, scales 2u and 2u + 1.
#include "w_bytes.glsl"

#define W_QK 256u
#define W_BLOCK_BYTES 110u

struct WBlock {
    float d;
    uvec3 sc;  // the 12 packed scale bytes
};

struct WUnit {
    uvec4 lo, hi;  // 2-bit quant bytes of values 0..15, 16..31
    uint shift;
    uint hbits;  // bit l: the hmask bit of value l
    vec4 am;
};

WBlock w_block(uint blk) {
    const uint base = blk * W_BLOCK_BYTES;
    WBlock b;
    b.sc = uvec3(w_u32(base + 96u), w_u32(base + 100u), w_u32(base + 104u));
    b.d = w_f16(base + 108u);
    return b;
}

// Scale s (0..15) minus 32: low nibble in byte s (s < 8) or the high nibble
// of byte s - 8; top 2 bits in byte 8 + s % 4 at bit 2 * (s / 4).
float q3k_scale(uvec3 sc, uint s) {
    const uint lo = s < 8u ? (byte_of(sc[s >> 2], s & 3u) & 0xFu)
                           : (byte_of(sc[(s - 8u) >> 2], (s - 8u) & 3u) >> 4);
    const uint hi = (byte_of(sc.z, s & 3u) >> (2u * (s >> 2))) & 3u;
    return float(int(lo | (hi << 4)) - 32);
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint base = blk * W_BLOCK_BYTES;
    const uint src = base + 32u + 32u * (u >> 2);
    WUnit r;
    r.lo = w_u128(src);
    r.hi = w_u128(src + 16u);
    r.shift = 2u * (u & 3u);
    r.hbits = bits_of_32(w_u128(base), w_u128(base + 16u), u);
    r.am = vec4(b.d * q3k_scale(b.sc, 2u * u), 0.0, b.d * q3k_scale(b.sc, 2u * u + 1u), 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint w = i < 16u ? r.lo[(i >> 2) & 3u] : r.hi[(i >> 2) & 3u];
    const int q = int((byte_of(w, i & 3u) >> r.shift) & 3u);
    return float(q - (((r.hbits >> i) & 1u) != 0u ? 0 : 4));
}
