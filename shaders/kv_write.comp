#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : enable
// KV-cache write of K and V in one dispatch: cache[slots[t], :] =
// src[off + t * src_stride, n values] for n_tok tokens of n values (n =
// n_head_kv * head_dim); workgroup z selects K (src binding 0 at k_off ->
// cache binding 2) or V (binding 3 at v_off -> 4). K and V may be columns
// of one [n_tok, src_stride] buffer (the fused QKV projection). slots:
// [n_tok] int32 (cell index from KvCells::find_slots); cache: [n_ctx, n]
// values of the cache type:
//  - f32 (default): an invocation per value;
//  - KV_F16: binary16 pairs packed in uint32 words (n even), rounded as
//    llama.cpp's default F16 cache does; an invocation per pair;
//  - KV_Q8_0 / KV_Q4_0: ggml's blocks of 32 values (34 / 18 bytes, n a
//    multiple of 32), quantized as ggml's quantize_row_q8_0_ref /
//    quantize_row_q4_0_ref do (llama.cpp's -ctk/-ctv q8_0|q4_0); an
//    invocation per block. A block starts at 0 or 2 mod 4 bytes, so its
//    first or last word may hold the neighbouring block's bytes, which
//    another invocation (or an unwritten cell) owns: such a word is
//    updated with atomicAnd/atomicOr on this block's bytes only.
#include "common.glsl"

layout(push_constant) uniform Push {
    uint n, n_tok, k_off, v_off, src_stride;
} p;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) readonly buffer Slots { int slots[]; };
#if defined(KV_F16) || defined(KV_Q8_0) || defined(KV_Q4_0)
layout(std430, binding = 2) buffer Cache { uint cache[]; };
layout(std430, binding = 4) buffer Cache2 { uint cache2[]; };
#else
layout(std430, binding = 2) buffer Cache { float cache[]; };
layout(std430, binding = 4) buffer Cache2 { float cache2[]; };
#endif
layout(std430, binding = 3) readonly buffer Src2 { float src2[]; };

#if defined(KV_Q8_0) || defined(KV_Q4_0)
#if defined(KV_Q8_0)
const uint BLOCK_BYTES = 34u;
#else
const uint BLOCK_BYTES = 18u;
#endif
const uint MAX_WORDS = 9u;  // (2 + 34 + 3) / 4: a block's bytes after a phase of 0 or 2
uint words[MAX_WORDS];      // the block's bytes on the cache's word grid
uint phase;                 // byte offset of the block in its first word

void put_byte(uint b, uint value) {
    const uint o = phase + b;
    words[o >> 2] |= (value & 0xFFu) << ((o & 3u) * 8u);
}

// Round half away from zero, as C's roundf (GLSL's round() may round
// halves either way).
float round_away(float x) {
    const float a = abs(x), t = trunc(a);
    return sign(x) * (a - t >= 0.5 ? t + 1.0 : t);
}

// f32 -> binary16 bits, rounded to nearest even as ggml's fp32_to_fp16
// (packHalf2x16's rounding is left to the implementation).
uint f16_bits(float f) {
    const uint x = floatBitsToUint(f);
    const uint sgn = (x >> 16) & 0x8000u;
    const uint a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) return sgn | (a > 0x7F800000u ? 0x7E00u : 0x7C00u);  // NaN, inf
    if (a >= 0x477FF000u) return sgn | 0x7C00u;  // rounds past 65504: inf
    if (a < 0x38800000u) {                       // subnormal half (or zero)
        // |f| = m * 2^(e - 150) = (m >> (126 - e)) units of 2^-24, the
        // smallest subnormal half, plus the remainder to round.
        const uint m = (a & 0x7FFFFFu) | 0x800000u;
        const uint e = a >> 23;
        if (e < 102u) return sgn;  // under half a unit: zero
        const uint shift = 126u - e;
        uint h = m >> shift;
        const uint rem = m & ((1u << shift) - 1u), half_ulp = 1u << (shift - 1u);
        if (rem > half_ulp || (rem == half_ulp && (h & 1u) != 0u)) ++h;
        return sgn | h;
    }
    uint h = ((a >> 13) - (112u << 10));  // rebias the exponent 127 -> 15
    const uint rem = a & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;
    return sgn | h;
}

// Quantizes the 32 values x[base + j] of one block into words[].
void quantize_block(bool second, uint base) {
    float amax = 0.0, mx = 0.0;
    for (uint j = 0u; j < 32u; ++j) {
        const float v = second ? src2[base + j] : src[base + j];
        if (amax < abs(v)) {
            amax = abs(v);
            mx = v;
        }
    }
#if defined(KV_Q8_0)
    const float d = amax / 127.0;
#else
    const float d = mx / -8.0;
#endif
    const float id = d != 0.0 ? 1.0 / d : 0.0;
    const uint dh = f16_bits(d);
    put_byte(0u, dh);
    put_byte(1u, dh >> 8);
#if defined(KV_Q8_0)
    for (uint j = 0u; j < 32u; ++j) {
        const float v = second ? src2[base + j] : src[base + j];
        put_byte(2u + j, uint(int(round_away(v * id))));
    }
#else
    for (uint j = 0u; j < 16u; ++j) {
        const float v0 = second ? src2[base + j] : src[base + j];
        const float v1 = second ? src2[base + j + 16u] : src[base + j + 16u];
        const uint q0 = uint(min(15, int(v0 * id + 8.5)));
        const uint q1 = uint(min(15, int(v1 * id + 8.5)));
        put_byte(2u + j, q0 | (q1 << 4));
    }
#endif
}

// Stores words[] at word w0 of the cache: whole words plainly, the shared
// first or last word through atomics on this block's bytes.
void store_block(bool second, uint w0) {
    const uint n_words = (phase + BLOCK_BYTES + 3u) >> 2;
    const uint end = phase + BLOCK_BYTES;  // one past the block's last byte, from w0's start
    for (uint m = 0u; m < n_words; ++m) {
        const uint lo = max(phase, 4u * m), hi = min(end, 4u * m + 4u);  // bytes of this word
        const uint mask = (hi - lo == 4u) ? 0xFFFFFFFFu
                                          : (((1u << ((hi - lo) * 8u)) - 1u) << ((lo & 3u) * 8u));
        if (mask == 0xFFFFFFFFu) {
            if (second) cache2[w0 + m] = words[m];
            else cache[w0 + m] = words[m];
        } else if (second) {
            atomicAnd(cache2[w0 + m], ~mask);
            atomicOr(cache2[w0 + m], words[m]);
        } else {
            atomicAnd(cache[w0 + m], ~mask);
            atomicOr(cache[w0 + m], words[m]);
        }
    }
}
#endif

void main() {
    const uint e = gl_GlobalInvocationID.x;
    const uint t = gl_WorkGroupID.y;
    if (t >= p.n_tok) return;
    const uint cell = uint(slots[t]);
    const bool second = gl_WorkGroupID.z != 0u;
#if defined(KV_Q8_0) || defined(KV_Q4_0)
    const uint n_blocks = p.n / 32u;
    if (e >= n_blocks) return;
    const uint byte0 = (cell * n_blocks + e) * BLOCK_BYTES;
    phase = byte0 & 3u;
    for (uint m = 0u; m < MAX_WORDS; ++m) words[m] = 0u;
    quantize_block(second, (second ? p.v_off : p.k_off) + t * p.src_stride + 32u * e);
    store_block(second, byte0 >> 2);
#elif defined(KV_F16)
    if (2u * e >= p.n) return;
    const uint s = t * p.src_stride + 2u * e;
    if (second) {
        cache2[(cell * p.n) / 2u + e] =
            packHalf2x16(vec2(src2[p.v_off + s], src2[p.v_off + s + 1u]));
        return;
    }
    cache[(cell * p.n) / 2u + e] = packHalf2x16(vec2(src[p.k_off + s], src[p.k_off + s + 1u]));
#else
    if (e >= p.n) return;
    const uint s = t * p.src_stride + e;
    if (second) {
        cache2[cell * p.n + e] = src2[p.v_off + s];
        return;
    }
    cache[cell * p.n + e] = src[p.k_off + s];
#endif
}
