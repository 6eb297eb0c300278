// Shared by attention.comp (a workgroup per head and token) and
// attention_row.comp (an invocation per head and token, CPU devices): the
// push constants, the bindings, reads of an f32, packed-f16 or
// block-quantized (q8_0, q4_0) KV cache, the span a workgroup or
// invocation covers, and where its result goes.
//
// Split-K (flash-decoding): with n_split > 1 the span of each (token t,
// head h) is cut into chunks of `chunk` cells; chunk z stores its unscaled
// partial result (running max m, sum l of exp(s - m), and
// acc[d] = sum exp(s - m) v[d]) at part[((t * n_head + h) * n_split + z) *
// (head_dim + 2)] as (m, l, acc[0..head_dim)), and attention_merge.comp
// combines the chunks. With n_split == 1 the result goes to o directly.
//
// q: [n_tok, q_stride] f32 (heads of head_dim <= 256 at h * head_dim);
// K, V cache: [n_ctx cells, kv_stride] f32, packed f16 (KV_F16) or ggml
// blocks (KV_Q8_0, KV_Q4_0: kv_stride / 32 blocks a cell);
// table: [n_entries] u32 cell indices; spans: [n_tok, 2] u32 (first, count);
// o: [n_tok, o_stride] f32; part: [n_tok, n_head, n_split, head_dim + 2] f32.

layout(push_constant) uniform Push {
    uint n_tok, n_head, n_head_kv, head_dim;
    uint kv_stride, q_stride, o_stride;
    float scale;
    uint n_split, chunk;
    uint window;    // > 0: a token sees only the last `window` cells of its span
    float softcap;  // > 0: score s becomes softcap * tanh(s / softcap)
} p;

layout(std430, binding = 0) readonly buffer Q { float q[]; };
#if defined(KV_F16)
layout(std430, binding = 1) readonly buffer K { uint kc[]; };
layout(std430, binding = 2) readonly buffer V { uint vc[]; };
float k_at(uint i) { return unpackHalf2x16((i & 1u) != 0u ? (kc[i >> 1] >> 16) : kc[i >> 1]).x; }
float v_at(uint i) { return unpackHalf2x16((i & 1u) != 0u ? (vc[i >> 1] >> 16) : vc[i >> 1]).x; }
#elif defined(KV_Q8_0) || defined(KV_Q4_0)
// ggml's blocks of 32 values, packed back to back in uint32 words: q8_0
// (34 bytes: f16 scale d, 32 int8 q; value d * q) or q4_0 (18 bytes: f16
// d, 16 bytes of nibbles, value j < 16 in the low nibble of byte j and
// value j + 16 in its high nibble; value d * (nibble - 8)), as ggml's
// dequantize_row_q8_0 / _q4_0 read them. Value i is value i % 32 of block
// i / 32: every cache row starts a block (kv_stride % 32 == 0). Blocks are
// an even number of bytes, so a scale never straddles a word.
layout(std430, binding = 1) readonly buffer K { uint kc[]; };
layout(std430, binding = 2) readonly buffer V { uint vc[]; };
#if defined(KV_Q8_0)
const uint KV_BLOCK_BYTES = 34u;
uint kv_q_byte(uint j) { return 2u + j; }
#else
const uint KV_BLOCK_BYTES = 18u;
uint kv_q_byte(uint j) { return 2u + (j & 15u); }
#endif
// Value j of the block at byte `base`, given the word holding its scale
// and the word holding its quant.
float kv_block_value(uint base, uint j, uint scale_word, uint q_word) {
    const float d = unpackHalf2x16(scale_word >> ((base & 2u) * 8u)).x;
    const uint qb = base + kv_q_byte(j);
#if defined(KV_Q8_0)
    return d * float(bitfieldExtract(int(q_word), int((qb & 3u) * 8u), 8));
#else
    const uint nib = bitfieldExtract(q_word, int((qb & 3u) * 8u + (j >= 16u ? 4u : 0u)), 4);
    return d * (float(nib) - 8.0);
#endif
}
float k_at(uint i) {
    const uint base = (i >> 5) * KV_BLOCK_BYTES, j = i & 31u;
    return kv_block_value(base, j, kc[base >> 2], kc[(base + kv_q_byte(j)) >> 2]);
}
float v_at(uint i) {
    const uint base = (i >> 5) * KV_BLOCK_BYTES, j = i & 31u;
    return kv_block_value(base, j, vc[base >> 2], vc[(base + kv_q_byte(j)) >> 2]);
}
#else
layout(std430, binding = 1) readonly buffer K { float kc[]; };
layout(std430, binding = 2) readonly buffer V { float vc[]; };
float k_at(uint i) { return kc[i]; }
float v_at(uint i) { return vc[i]; }
#endif
layout(std430, binding = 3) readonly buffer Table { uint table[]; };
layout(std430, binding = 4) readonly buffer Spans { uint spans[]; };
layout(std430, binding = 5) buffer O { float o[]; };
layout(std430, binding = 6) buffer Part { float part[]; };

const uint MAX_HEAD_DIM = 256u;
// head_dim as specialization constant 1 (the host sets it to p.head_dim):
// loops over a head become constant-trip, so the compiler can unroll them
// and keep q and the accumulator in registers (1.6x faster prefill
// attention on lavapipe than with the push constant).
layout(constant_id = 1) const uint HD = 8;

// Token t's span (first table entry, count) after the sliding window: the
// table lists a sequence's cells by position, so the window is its tail.
void span_of(uint t, out uint first, out uint count) {
    first = spans[2u * t];
    count = spans[2u * t + 1u];
    if (p.window > 0u && count > p.window) {
        first += count - p.window;
        count = p.window;
    }
}

// Scaled and (gemma2) soft-capped score of a dot product q.k.
float score(float dot) {
    const float s = dot * p.scale;
    return p.softcap > 0.0 ? p.softcap * tanh_stable(s / p.softcap) : s;
}

// Cells [begin, end) of token t's span that chunk z covers (empty when the
// span is shorter than z * chunk).
void chunk_range(uint n_span, uint z, out uint begin, out uint end) {
    if (p.n_split <= 1u) {
        begin = 0u;
        end = n_span;
    } else {
        begin = min(n_span, z * p.chunk);
        end = min(n_span, begin + p.chunk);
    }
}

// Final value of output dim d of (t, h): acc / l, or the chunk's partial.
// A chunk that met a non-finite score passes l = NaN: the output is NaN.
void store_value(uint t, uint h, uint z, uint d, float acc, float l) {
    if (p.n_split <= 1u) {
        o[t * p.o_stride + h * HD + d] = isnan_bits(l) ? nan_value() : l > 0.0 ? acc / l : 0.0;
    } else {
        part[((t * p.n_head + h) * p.n_split + z) * (HD + 2u) + 2u + d] = acc;
    }
}

// The chunk's running max and sum (split-K only).
void store_max_sum(uint t, uint h, uint z, float m, float l) {
    if (p.n_split > 1u) {
        const uint base = ((t * p.n_head + h) * p.n_split + z) * (HD + 2u);
        part[base] = m;
        part[base + 1u] = l;
    }
}
