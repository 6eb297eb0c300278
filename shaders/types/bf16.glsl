// BF16 weights: the upper 16 bits of a binary32, read from uint32 words
// (no 16-bit storage needed; a row may start mid-word when ne0 is odd).
#define W_PLAIN
layout(std430, binding = 0) readonly buffer W { uint w[]; };
float w_get(uint row, uint k, uint ne0) {
    const uint i = row * ne0 + k;
    const uint word = w[i >> 1];
    return uintBitsToFloat((i & 1u) != 0u ? (word & 0xFFFF0000u) : (word << 16));
}
