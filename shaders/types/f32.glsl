// F32 weights: one float per element.
#if defined(W_TEX)
#define W_BLOCK_BYTES 128u
#include "plain_texel.glsl"

float w_unit_quant(WUnit r, uint i) { return uintBitsToFloat(r.v[i >> 2][i & 3u]); }
#else
#define W_PLAIN
layout(std430, binding = 0) readonly buffer W { float w[]; };
float w_get(uint row, uint k, uint ne0) { return w[row * ne0 + k]; }
#endif
