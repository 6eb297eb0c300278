#version 450
#extension GL_GOOGLE_include_directive : require
// Split-K merge (flash-decoding): combines the n_split chunk partials of
// each (head h, token t) that attention.comp or attention_row.comp wrote:
//   M = max_z m_z,  w_z = exp(m_z - M),  L = sum_z w_z l_z,
//   o[t, h * head_dim + d] = sum_z w_z acc_z[d] / L.
// A chunk past the end of a short span has m = LOW and l = 0: weight 0.
// A chunk that met a non-finite score stored l = NaN: the output is NaN.
// part: [n_tok, n_head, n_split, head_dim + 2] f32 (m, l, acc);
// o: [n_tok, o_stride] f32. One workgroup per (h, t).
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n_head, head_dim, n_split, o_stride;
} p;

layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std430, binding = 1) buffer O { float o[]; };

void main() {
    const uint h = gl_WorkGroupID.x;
    const uint t = gl_WorkGroupID.y;
    const uint row = p.head_dim + 2u;
    const uint base = (t * p.n_head + h) * p.n_split * row;
    float mx = LOW;
    for (uint z = 0u; z < p.n_split; ++z) mx = max(mx, part[base + z * row]);
    float l = 0.0;
    bool poisoned = false;
    for (uint z = 0u; z < p.n_split; ++z) {
        const float mz = part[base + z * row];
        poisoned = poisoned || isnan_bits(part[base + z * row + 1u]);
        l += mz == LOW ? 0.0 : exp(mz - mx) * part[base + z * row + 1u];
    }
    for (uint d = gl_LocalInvocationID.x; d < p.head_dim; d += BLOCK_SIZE) {
        float a = 0.0;
        for (uint z = 0u; z < p.n_split; ++z) {
            const float mz = part[base + z * row];
            if (mz != LOW) a += exp(mz - mx) * part[base + z * row + 2u + d];
        }
        o[t * p.o_stride + h * p.head_dim + d] = poisoned ? nan_value() : l > 0.0 ? a / l : 0.0;
    }
}
