// Q8_0 (ggml block_q8_0, 34 bytes): f16 d, then 32 int8 quants;
// value = d * q.
#include "w_bytes.glsl"

#define W_QK 32u
#define W_BLOCK_BYTES 34u

struct WBlock {
    float d;
};

struct WUnit {
    uvec4 lo, hi;  // quants 0..15, 16..31
    vec4 am;
};

WBlock w_block(uint blk) {
    WBlock b;
    b.d = w_f16(blk * W_BLOCK_BYTES);
    return b;
}

WUnit w_unit_load(WBlock b, uint blk, uint u) {
    const uint base = blk * W_BLOCK_BYTES + 2u;
    WUnit r;
    r.lo = w_u128(base);
    r.hi = w_u128(base + 16u);
    r.am = vec4(b.d, 0.0, b.d, 0.0);
    return r;
}

float w_unit_quant(WUnit r, uint i) {
    const uint w = i < 16u ? r.lo[(i >> 2) & 3u] : r.hi[(i >> 2) & 3u];
    return float(sbyte_of(w, i & 3u));
}
