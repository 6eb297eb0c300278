// Weight access for every ggml type the shaders compute with, as
// w_get(row, k, ne0): element k of row `row` of a [rows, ne0] row-major
// weight in ggml layout (ggml-common.h), bound at binding 0 as `W`.
// `row` counts from the start of the bound piece (weights larger than
// maxStorageBufferRange are bound in pieces of whole rows).
//
// Defines (one of): W_F32, W_F16, W_Q8_0, W_Q4_0; for the quant types also
// W_U16 (read uint16 with 16-bit storage) or nothing (read uint32 words
// and extract bytes: works on every device; the host pads pieces to 4 bytes).
// W_UNIT is the element count w_unit_dot() covers: 32 (one block) for the
// quant types, 1 for plain floats.

#if defined(W_F32)
layout(std430, binding = 0) readonly buffer W { float w[]; };
const uint W_UNIT = 1;
float w_get(uint row, uint k, uint ne0) { return w[row * ne0 + k]; }

#elif defined(W_F16)
// Halves read from uint32 words: no 16-bit storage needed.
layout(std430, binding = 0) readonly buffer W { uint w[]; };
const uint W_UNIT = 1;
float w_get(uint row, uint k, uint ne0) {
    const uint i = row * ne0 + k;
    const uint word = w[i >> 1];
    return unpackHalf2x16((i & 1u) != 0u ? (word >> 16) : word).x;
}

#elif defined(W_Q8_0) || defined(W_Q4_0)
#if defined(W_Q8_0)
const uint BLOCK_BYTES = 34u;  // f16 d + 32 x int8
#else
const uint BLOCK_BYTES = 18u;  // f16 d + 16 bytes of nibbles
#endif
const uint W_UNIT = 32;

#if defined(W_U16)
layout(std430, binding = 0) readonly buffer W { uint16_t w[]; };
// Blocks start at even byte offsets, so every field is whole uint16s.
float blk_scale(uint blk) { return unpackHalf2x16(uint(w[blk * (BLOCK_BYTES / 2u)])).x; }
uint blk_byte(uint blk, uint j) {  // byte j of the quants (after d)
    const uint v = uint(w[blk * (BLOCK_BYTES / 2u) + 1u + (j >> 1)]);
    return (v >> ((j & 1u) * 8u)) & 0xFFu;
}
#else
layout(std430, binding = 0) readonly buffer W { uint w[]; };
uint byte_at(uint off) { return (w[off >> 2] >> ((off & 3u) * 8u)) & 0xFFu; }
float blk_scale(uint blk) {
    const uint off = blk * BLOCK_BYTES;  // even, so d never straddles a word
    const uint word = w[off >> 2];
    return unpackHalf2x16((off & 2u) != 0u ? (word >> 16) : word).x;
}
uint blk_byte(uint blk, uint j) { return byte_at(blk * BLOCK_BYTES + 2u + j); }
#endif

#if defined(W_Q8_0)
// x[i] = d * qs[i], qs signed bytes
float blk_q(uint blk, uint i) { return float(int(blk_byte(blk, i) << 24) >> 24); }
#else
// byte j holds element j (low nibble) and j+16 (high nibble); x = d * (q - 8)
float blk_q(uint blk, uint i) {
    const uint b = blk_byte(blk, i & 15u);
    return float(int(i < 16u ? (b & 0xFu) : (b >> 4)) - 8);
}
#endif

float w_get(uint row, uint k, uint ne0) {
    const uint blk = row * (ne0 / 32u) + k / 32u;
    return blk_scale(blk) * blk_q(blk, k % 32u);
}
#else
#error "define one of W_F32, W_F16, W_Q8_0, W_Q4_0"
#endif
