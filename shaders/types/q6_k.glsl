// Q6_K (ggml block_q6_K, 210 bytes): ql[128] (low 4 bits), qh[64] (high 2
// bits), sixteen int8 scales (one per 16 values), f16 d. Value 128h + 32j
// + l: low nibble of ql[64h + 32(j & 1) + l] (j < 2) or its high nibble
// (j >= 2), high bits (qh[32h + l] >> 2j) & 3; value = d * scale * (q - 32)
// with scale 8h + 2j + l / 16. Unit u = 4h + j uses scales 2u and 2u + 1.
#include "w_bytes.glsl"

#define W_QK 256u
#define W_BLOCK_BYTES 210u

struct WBlock {
    float d;
    uvec4 sc;  // the 16 int8 scales
};

struct WUnit {
    uvec4 lo, hi;  // ql bytes of values 0..15, 16..31
    uint shift;    // 0: low nibbles, 4: high
    uvec2 hbits;   // bits 2l, 2l + 1 (of hbits.x for l < 16, .y else): high bits of value l
    vec4 am;
};

WBlock w_block(uint blk) {
    const uint base = blk * W_BLOCK_BYTES;
    WBlock b;
    b.sc = w_u128(base + 192u);
    b.d = w_f16(base + 208u);
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint base = blk * W_BLOCK_BYTES;
    const uint h = u >> 2, j = u & 3u;
    const uint lsrc = base + 64u * h + 32u * (j & 1u), hsrc = base + 128u + 32u * h;
    WUnit r;
    r.lo = w_u128(lsrc);
    r.hi = w_u128(lsrc + 16u);
    r.shift = 4u * (j >> 1);
    const uvec4 h0 = w_u128(hsrc), h1 = w_u128(hsrc + 16u);
    r.hbits = uvec2(0u);
    for (uint k = 0u; k < 4u; ++k) {
        r.hbits.x |= pairs_of_bytes(h0[k], 2u * j) << (8u * k);
        r.hbits.y |= pairs_of_bytes(h1[k], 2u * j) << (8u * k);
    }
    const float s0 = float(sbyte_of(b.sc[(2u * u) >> 2], (2u * u) & 3u));
    const float s1 = float(sbyte_of(b.sc[(2u * u + 1u) >> 2], (2u * u + 1u) & 3u));
    r.am = vec4(b.d * s0, 0.0, b.d * s1, 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint w = i < 16u ? r.lo[(i >> 2) & 3u] : r.hi[(i >> 2) & 3u];
    const uint hb = ((i < 16u ? r.hbits.x : r.hbits.y) >> (2u * (i & 15u))) & 3u;
    return float(int(((byte_of(w, i & 3u) >> r.shift) & 0xFu) | (hb << 4)) - 32);
}
