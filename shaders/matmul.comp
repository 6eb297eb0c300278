#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_control_flow_attributes : enable
// Y[t, row_offset + r] = sum_k W[r, k] * X[t, k]: matrix x matrix (prefill).
// Tiles of BM weight rows x BN tokens, BK = 32 along k, staged in shared
// memory (16 KiB: the host uses this only when maxComputeSharedMemorySize
// and maxComputeWorkGroupInvocations allow); 256 threads, 4x4 outputs each.
// Weights dequantized on load, f32 accumulation. Shapes as in matvec.comp.
layout(local_size_x = 256, local_size_y = 1, local_size_z = 1) in;

layout(push_constant) uniform Push {
    uint ne0, rows, row_offset, n_tok;
    uint x_offset, x_stride;
    uint y_offset, y_stride;
} p;

#include "weights.glsl"
layout(std430, binding = 1) readonly buffer X { float x[]; };
layout(std430, binding = 2) buffer Y { float y[]; };

const uint BM = 64u, BN = 64u, BK = 32u;
shared float ws[BK * BM];  // [k][row]
shared float xs[BK * BN];  // [k][token]

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint row0 = gl_WorkGroupID.x * BM;
    const uint t0 = gl_WorkGroupID.y * BN;
    const uint tx = tid % 16u;  // rows tx + 16 i
    const uint ty = tid / 16u;  // tokens ty + 16 j
    float acc[4][4];
    for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;

    for (uint k0 = 0u; k0 < p.ne0; k0 += BK) {
#if defined(W_PLAIN)
        for (uint e = tid; e < BK * BM; e += 256u) {
            const uint r = e / BK, k = e % BK;
            float v = 0.0;
            if (row0 + r < p.rows && k0 + k < p.ne0) v = w_get(row0 + r, k0 + k, p.ne0);
            ws[k * BM + r] = v;
        }
#else
        // Block types: ne0 is a multiple of 32 = BK, so the tile's k range
        // is one 32-value unit per row: thread r < BM decodes row r's.
        if (tid < BM) {
            float v[32];
            if (row0 + tid < p.rows) {
                w_row_unit(row0 + tid, k0 / 32u, p.ne0, v);
            } else {
                [[unroll]] for (uint k = 0u; k < 32u; ++k) v[k] = 0.0;
            }
            [[unroll]] for (uint k = 0u; k < 32u; ++k) ws[k * BM + tid] = v[k];
        }
#endif
        for (uint e = tid; e < BK * BN; e += 256u) {
            const uint t = e / BK, k = e % BK;
            float v = 0.0;
            if (t0 + t < p.n_tok && k0 + k < p.ne0) v = x[p.x_offset + (t0 + t) * p.x_stride + k0 + k];
            xs[k * BN + t] = v;
        }
        barrier();
        for (uint k = 0u; k < BK; ++k) {
            float a[4], b[4];
            for (uint i = 0u; i < 4u; ++i) a[i] = ws[k * BM + tx + 16u * i];
            for (uint j = 0u; j < 4u; ++j) b[j] = xs[k * BN + ty + 16u * j];
            for (uint i = 0u; i < 4u; ++i)
                for (uint j = 0u; j < 4u; ++j) acc[i][j] += a[i] * b[j];
        }
        barrier();
    }
    for (uint i = 0u; i < 4u; ++i) {
        const uint r = row0 + tx + 16u * i;
        if (r >= p.rows) continue;
        for (uint j = 0u; j < 4u; ++j) {
            const uint t = t0 + ty + 16u * j;
            if (t < p.n_tok) y[p.y_offset + t * p.y_stride + p.row_offset + r] = acc[i][j];
        }
    }
}
