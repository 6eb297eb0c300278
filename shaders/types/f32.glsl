// F32 weights: one float per element.
#define W_PLAIN
layout(std430, binding = 0) readonly buffer W { float w[]; };
float w_get(uint row, uint k, uint ne0) { return w[row * ne0 + k]; }
