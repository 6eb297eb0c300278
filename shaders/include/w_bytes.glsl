// Byte access to a block-quantized weight at binding 0, by byte offset from
// the start of the bound piece: the loads every decoder in shaders/types/
// is built from. Offsets passed to w_u16/w_u32/w_u128 are even (ggml
// blocks are an even number of bytes and their fields start at even
// offsets); w_u32a/w_u128a need a multiple of 4.
//
// W_U16: the buffer is read as uint16 words (16-bit storage); otherwise as
// uint32 words, where a 4-byte value at an offset of 2 mod 4 takes two
// word loads and a shift (the buffer is padded to 4 bytes, so the word
// after the last one is never past the end).
//
// W_TEX (CPU devices, shaders/matvec_texel.comp): the weight is a uniform
// texel buffer of 16-byte texels (w_tex) and every read comes from w_win,
// texels the kernel fetched beforehand: one window per row the invocation
// works on (w_row selects it), holding a chunk of whole blocks whose first
// block starts W_PHASE bytes into the window (W_PHASE: a specialization
// constant the kernel declares). Offsets count from that block. The
// kernel unrolls its block loop, so every offset, and with it every
// window index and shift below, is a constant: reads cost no memory
// access at all. (On llvmpipe a storage-buffer read is a loop over the
// SIMD lanes with a bounds check per lane; a texel fetch is a few vector
// instructions per 16 bytes.)

#if defined(W_TEX)
layout(binding = 0) uniform usamplerBuffer w_tex;
// Texels per window: the largest chunk (Q6_K: 8 blocks of 210 bytes) plus
// the texel a phase spills into. Only the texels a type reads are kept.
const uint W_WIN_MAX = 106u;
uvec4 w_win[W_ROWS][W_WIN_MAX];
uint w_row = 0u;
uint w_word(uint i) { return w_win[w_row][i >> 2][i & 3u]; }
uint w_u32a(uint off) { return w_word((off + W_PHASE) >> 2); }
uint w_u32(uint off) {
    const uint o = off + W_PHASE;
    if ((o & 2u) == 0u) return w_word(o >> 2);
    return (w_word(o >> 2) >> 16) | (w_word((o >> 2) + 1u) << 16);
}
uint w_u16(uint off) {
    const uint o = off + W_PHASE;
    return (w_word(o >> 2) >> ((o & 2u) * 8u)) & 0xFFFFu;
}
#elif defined(W_U16)
layout(std430, binding = 0) readonly buffer W16 { uint16_t w16[]; };
uint w_u16(uint off) { return uint(w16[off >> 1]); }
uint w_u32(uint off) {
    const uint i = off >> 1;
    return uint(w16[i]) | (uint(w16[i + 1u]) << 16);
}
uint w_u32a(uint off) { return w_u32(off); }
#else
layout(std430, binding = 0) readonly buffer W32 { uint w32[]; };
uint w_u16(uint off) { return (w32[off >> 2] >> ((off & 2u) * 8u)) & 0xFFFFu; }
uint w_u32a(uint off) { return w32[off >> 2]; }
uint w_u32(uint off) {
    const uint i = off >> 2;
    if ((off & 2u) == 0u) return w32[i];
    return (w32[i] >> 16) | (w32[i + 1u] << 16);
}
#endif

// 16 bytes from an even offset / from a multiple of 4.
uvec4 w_u128(uint off) { return uvec4(w_u32(off), w_u32(off + 4u), w_u32(off + 8u), w_u32(off + 12u)); }
uvec4 w_u128a(uint off) {
    return uvec4(w_u32a(off), w_u32a(off + 4u), w_u32a(off + 8u), w_u32a(off + 12u));
}

// The binary16 value at an even offset.
float w_f16(uint off) { return unpackHalf2x16(w_u16(off)).x; }
// Two binary16 values at an even offset (off, off + 2).
vec2 w_f16x2(uint off) { return unpackHalf2x16(w_u32(off)); }

// Byte j (0..3) of a word, as unsigned / sign-extended.
uint byte_of(uint word, uint j) { return (word >> (8u * j)) & 0xFFu; }
int sbyte_of(uint word, uint j) { return int(word << (24u - 8u * j)) >> 24; }
// Byte k (0..15) of 16 loaded bytes.
uint byte16(uvec4 v, uint k) { return byte_of(v[k >> 2], k & 3u); }

// Bit `bit` of each of the 4 bytes of w, as 4 bits (byte k -> bit k).
uint bits_of_bytes(uint w, uint bit) {
    const uint t = (w >> bit) & 0x01010101u;
    return (t | (t >> 7) | (t >> 14) | (t >> 21)) & 0xFu;
}
// Bit `bit` of each of 32 bytes (two 16-byte loads), as 32 bits (byte l ->
// bit l): e.g. the high bits of one unit's values in Q3_K's hmask.
uint bits_of_32(uvec4 lo, uvec4 hi, uint bit) {
    uint r = 0u;
    for (uint k = 0u; k < 4u; ++k) {
        r |= bits_of_bytes(lo[k], bit) << (4u * k);
        r |= bits_of_bytes(hi[k], bit) << (16u + 4u * k);
    }
    return r;
}
// Bits shift, shift + 1 of each of the 4 bytes of w, as 8 bits (byte k ->
// bits 2k, 2k + 1).
uint pairs_of_bytes(uint w, uint shift) {
    const uint t = (w >> shift) & 0x03030303u;
    return (t | (t >> 6) | (t >> 12) | (t >> 18)) & 0xFFu;
}
