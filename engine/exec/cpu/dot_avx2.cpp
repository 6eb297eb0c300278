// AVX2 + FMA + F16C kernels, compiled for any x86-64 with per-function
// target attributes and chosen at run time (isa.cpp). Same sums as
// dot_scalar.cpp: int8 x int8 (or uint4/uint6 x int8) products summed in
// int32 within a block by vpmaddubsw/vpmaddwd, then scaled in f32.
// A weight block is loaded and unpacked once and multiplied with each of
// the tile's NT token rows.

#include "exec/cpu/dot.h"
#include "ggml/fp16.h"
#include "ggml/iq4nl.h"
#include "ggml/types.h"

#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>

#include <cstring>

// dot_avxvnni.cpp compiles this file again with WB_DOT_VNNI defined: the
// same kernels for CPUs with AVX-VNNI, whose uint8 x int8 block sums take
// one vpdpbusd (see mul_sum_us8), under the lookup avxvnni_kernel.
#ifdef WB_DOT_VNNI
#define WB_AVX2 __attribute__((target("avx2,fma,f16c,avxvnni")))
#define WB_KERNEL_LOOKUP avxvnni_kernel
#else
#define WB_AVX2 __attribute__((target("avx2,fma,f16c")))
#define WB_KERNEL_LOOKUP avx2_kernel
#endif

namespace wb::cpu::detail {

namespace {

WB_AVX2 inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

WB_AVX2 inline float f16_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}

WB_AVX2 inline float bf16_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return ggml::bf16_to_fp32(h);
}

// Eight halves at p (any alignment) as floats: IEEE half through F16C, or
// bfloat16 (the top 16 bits of an f32, so a shift is exact).
template <bool kBf16>
WB_AVX2 inline __m256 half8(const uint8_t* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (kBf16) {
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    } else {
        return _mm256_cvtph_ps(h);
    }
}

WB_AVX2 inline __m256i load256(const void* p) {
    return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

/// 8 int32 sums of four products u[i] * s[i] (u unsigned bytes, s signed
/// bytes). Without VNNI: 16 int16 pair sums (vpmaddubsw, which saturates;
/// no caller's pairs reach 32767) widened by vpmaddwd; with VNNI one
/// vpdpbusd, the same sums.
WB_AVX2 inline __m256i mul_sum_us8(__m256i u, __m256i s) {
#ifdef WB_DOT_VNNI
    return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

/// Asks for `bytes` bytes at p (a line each 64 bytes), a few KiB ahead of
/// what an 8-row kernel reads now. Decode reads each weight once, and the
/// hardware prefetchers alone left a thread at about half its read
/// bandwidth (measured on the AVX-512 kernels: decode +15-80% by type). A
/// prefetch never faults, so one past the end of the weights is harmless.
WB_AVX2 inline void prefetch_ahead(const uint8_t* p, size_t bytes) {
    for (size_t o = 0; o < bytes; o += 64)
        _mm_prefetch(reinterpret_cast<const char*>(p + o), _MM_HINT_T0);
}

template <int NT>
WB_AVX2 void dot_f32_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                       size_t os) {
    __m256 acc[NT][2];
    for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    const float* x[NT];
    for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(act + t * as);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 w0 = _mm256_loadu_ps(reinterpret_cast<const float*>(w) + i);
        const __m256 w1 = _mm256_loadu_ps(reinterpret_cast<const float*>(w) + i + 8);
        for (int t = 0; t < NT; ++t) {
            acc[t][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + i), acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[t] + i + 8), acc[t][1]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        float s = hsum(_mm256_add_ps(acc[t][0], acc[t][1]));
        for (int64_t k = i; k < n; ++k) {
            float wv;
            std::memcpy(&wv, w + 4 * k, 4);
            s += wv * x[t][k];
        }
        out[t * os] = s;
    }
}

template <int NT, bool kBf16 = false>
WB_AVX2 void dot_f16_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                       size_t os) {
    __m256 acc[NT][2];
    for (int t = 0; t < NT; ++t) acc[t][0] = acc[t][1] = _mm256_setzero_ps();
    const float* x[NT];
    for (int t = 0; t < NT; ++t) x[t] = reinterpret_cast<const float*>(act + t * as);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 w0 = half8<kBf16>(w + 2 * i);
        const __m256 w1 = half8<kBf16>(w + 2 * i + 16);
        for (int t = 0; t < NT; ++t) {
            acc[t][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x[t] + i), acc[t][0]);
            acc[t][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x[t] + i + 8), acc[t][1]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        float s = hsum(_mm256_add_ps(acc[t][0], acc[t][1]));
        for (int64_t k = i; k < n; ++k) s += (kBf16 ? bf16_at : f16_at)(w + 2 * k) * x[t][k];
        out[t * os] = s;
    }
}

// BF16 rows: dot_f16's loop, the halves widened by a shift.
template <int NT>
WB_AVX2 void dot_bf16_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    dot_f16_t<NT, true>(n, w, act, as, out, os);
}

// F16 groups (cpu/interleave.h): value i of 8 rows as 8 floats times
// token t's value i broadcast, two values a step in two accumulators per
// token, then their sum. The same for every tile size, so a token's sums do
// not depend on its tile, and dot_avx512.cpp's dot_x16_f16 matches them.
template <int NT, bool kBf16 = false>
WB_AVX2 void dot_x8_f16_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                          size_t os) {
    constexpr int U = 2;
    __m256 acc[NT][U];
    const float* x[NT];
    for (int t = 0; t < NT; ++t) {
        x[t] = reinterpret_cast<const float*>(act + t * as);
        for (int u = 0; u < U; ++u) acc[t][u] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < n; i += U) {  // n is a multiple of 8
        if ((i & 3) == 0) prefetch_ahead(g + 16 * i + 4096, 64);
        for (int u = 0; u < U; ++u) {
            const __m256 w = half8<kBf16>(g + 16 * (i + u));
            for (int t = 0; t < NT; ++t)
                acc[t][u] = _mm256_fmadd_ps(w, _mm256_broadcast_ss(x[t] + i + u), acc[t][u]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        __m256 s = acc[t][0];
        for (int u = 1; u < U; ++u) s = _mm256_add_ps(s, acc[t][u]);
        _mm256_storeu_ps(out + t * os, s);
    }
}

// BF16 groups: the same layout and loop as F16's.
template <int NT>
WB_AVX2 void dot_x8_bf16_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                           size_t os) {
    dot_x8_f16_t<NT, true>(n, g, act, as, out, os);
}

template <int NT>
WB_AVX2 void dot_q8_0_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    const ActQ8_0* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_0*>(act + t * as);
    }
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = w + 34 * b;
        const float dw = f16_at(blk);
        const __m256i q = load256(blk + 2);
        const __m256i qabs = _mm256_sign_epi8(q, q);  // |q| as unsigned bytes
        for (int t = 0; t < NT; ++t) {
            // q * y = |q| * (y with q's sign)
            const __m256i y = _mm256_sign_epi8(load256(a[t][b].qs), q);
            const __m256 p = _mm256_cvtepi32_ps(mul_sum_us8(qabs, y));
            acc[t] = _mm256_fmadd_ps(p, _mm256_set1_ps(dw * a[t][b].d), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]);
}

template <int NT>
WB_AVX2 void dot_q4_0_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_0* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_0*>(act + t * as);
    }
    const __m128i low4 = _mm_set1_epi8(0xF);
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = w + 18 * b;
        const float dw = f16_at(blk);
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        // elements 0..15 from the low nibbles, 16..31 from the high ones: unsigned 0..15
        const __m256i q = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4),
                                           _mm_and_si128(bytes, low4));
        for (int t = 0; t < NT; ++t) {
            const float d = dw * a[t][b].d;
            const __m256 p = _mm256_cvtepi32_ps(mul_sum_us8(q, load256(a[t][b].qs)));
            acc[t] = _mm256_fmadd_ps(p, _mm256_set1_ps(d), acc[t]);
            corr[t] += d * static_cast<float>(8 * a[t][b].sum);  // the -8 offset
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

/// Byte i (0..31) = 0x10 where bit i of qh is set, else 0: the fifth bit
/// of Q5_0/Q5_1's element i, in the element order of the nibbles above.
WB_AVX2 inline __m256i fifth_bits(uint32_t qh) {
    // byte i takes qh's byte i / 8 (shuffles stay within 128-bit lanes,
    // each holding all four bytes), then tests its bit i % 8
    const __m256i idx = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202,
                                          0x0101010101010101, 0x0000000000000000);
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), idx);
    const __m256i bit = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Q4_1, Q5_0, Q5_1 as dot_scalar.cpp's dot_legacy: the unsigned q (0..31)
// times the int8 activations, then d (sum - kOff sum a) + m sum a per block.
template <int kSize, bool kMin, bool kHigh, int kOff, int NT>
WB_AVX2 void dot_legacy_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                          size_t os) {
    constexpr int kQs = 2 + (kMin ? 2 : 0) + (kHigh ? 4 : 0);
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_0* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_0*>(act + t * as);
    }
    const __m128i low4 = _mm_set1_epi8(0xF);
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = w + kSize * b;
        const float dw = f16_at(blk);
        const float mw = kMin ? f16_at(blk + 2) : 0.0f;
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kQs));
        __m256i q = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4),
                                     _mm_and_si128(bytes, low4));
        if (kHigh) {
            uint32_t qh;
            std::memcpy(&qh, blk + (kMin ? 4 : 2), 4);
            q = _mm256_or_si256(q, fifth_bits(qh));
        }
        for (int t = 0; t < NT; ++t) {
            const float d = dw * a[t][b].d;
            const __m256 p = _mm256_cvtepi32_ps(mul_sum_us8(q, load256(a[t][b].qs)));
            acc[t] = _mm256_fmadd_ps(p, _mm256_set1_ps(d), acc[t]);
            const float sum = static_cast<float>(a[t][b].sum);
            corr[t] += d * static_cast<float>(kOff) * sum - mw * a[t][b].d * sum;
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

template <int NT>
WB_AVX2 void dot_q4_1_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    dot_legacy_t<20, true, false, 0, NT>(n, w, act, as, out, os);
}
template <int NT>
WB_AVX2 void dot_q5_0_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    dot_legacy_t<22, false, true, 16, NT>(n, w, act, as, out, os);
}
template <int NT>
WB_AVX2 void dot_q5_1_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    dot_legacy_t<24, true, true, 0, NT>(n, w, act, as, out, os);
}

// IQ4_NL: the nibbles (as Q4_0's) looked up in the format's table by
// vpshufb, then signed x signed as Q8_0's.
template <int NT>
WB_AVX2 void dot_iq4_nl_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                          size_t os) {
    __m256 acc[NT];
    const ActQ8_0* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_0*>(act + t * as);
    }
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ggml::kIq4nlValues));
    const __m256i table2 = _mm256_set_m128i(table, table);
    const __m128i low4 = _mm_set1_epi8(0xF);
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = w + 18 * b;
        const float dw = f16_at(blk);
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
        const __m256i idx = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4),
                                             _mm_and_si128(bytes, low4));
        const __m256i v = _mm256_shuffle_epi8(table2, idx);  // int8 values
        const __m256i vabs = _mm256_sign_epi8(v, v);
        for (int t = 0; t < NT; ++t) {
            // |v| <= 127: 2 x 127 x 127 per int16 pair sum, no saturation
            const __m256i y = _mm256_sign_epi8(load256(a[t][b].qs), v);
            const __m256 p = _mm256_cvtepi32_ps(mul_sum_us8(vabs, y));
            acc[t] = _mm256_fmadd_ps(p, _mm256_set1_ps(dw * a[t][b].d), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]);
}

// Q2_K and Q3_K (dot_scalar.cpp has the layouts): the 2-bit field s of the
// 32 bytes of half h holds elements 32k + i, k = 4h + s, of 16-value
// sub-blocks 2k (i < 16, the low 128-bit lane) and 2k + 1 (the high one).
/// int16 multipliers: sub-block 2k's scale in the low lane, 2k + 1's above.
WB_AVX2 inline __m256i lane_scales(int lo, int hi) {
    return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                            _mm_set1_epi16(static_cast<int16_t>(lo)));
}

template <int NT>
WB_AVX2 void dot_q2_k_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i three = _mm256_set1_epi8(3);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = w + 84 * b;
        const float d = f16_at(blk + 80), dmin = f16_at(blk + 82);
        __m256i q[8], scv[8];
        for (int h = 0; h < 2; ++h) {
            __m256i cur = load256(blk + 16 + 32 * h);
            for (int sf = 0; sf < 4; ++sf) {
                const int k = 4 * h + sf;
                q[k] = _mm256_and_si256(cur, three);  // 16-bit shifts: the mask drops spill
                cur = _mm256_srli_epi16(cur, 2);
                scv[k] = lane_scales(blk[2 * k] & 0xF, blk[2 * k + 1] & 0xF);
            }
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m256i isum = _mm256_setzero_si256();
            for (int k = 0; k < 8; ++k) {
                const __m256i p = _mm256_maddubs_epi16(q[k], load256(y.qs + 32 * k));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scv[k]));
            }
            int32_t msum = 0;
            for (int j = 0; j < 16; ++j) msum += (blk[j] >> 4) * y.bsums[j];
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d * y.d), acc[t]);
            corr[t] += dmin * y.d * static_cast<float>(msum);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

template <int NT>
WB_AVX2 void dot_q3_k_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i three = _mm256_set1_epi8(3), one = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = w + 110 * b;
        const float d = f16_at(blk + 108);
        const uint8_t* sb = blk + 96;
        int sc[16];
        for (int j = 0; j < 16; ++j) {
            const int lo = j < 8 ? (sb[j] & 0xF) : (sb[j - 8] >> 4);
            sc[j] = (lo | (((sb[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
        }
        // hmask shifted right by k: bit 0 of each byte is element 32k + i's third bit
        __m256i hcur = load256(blk);
        __m256i q[8], scv[8];  // q: low | third << 2, unsigned 0..7 (x = d sc (q - 4))
        for (int h = 0; h < 2; ++h) {
            __m256i cur = load256(blk + 32 + 32 * h);
            for (int sf = 0; sf < 4; ++sf) {
                const int k = 4 * h + sf;
                const __m256i third = _mm256_slli_epi16(_mm256_and_si256(hcur, one), 2);
                q[k] = _mm256_or_si256(_mm256_and_si256(cur, three), third);
                cur = _mm256_srli_epi16(cur, 2);
                hcur = _mm256_srli_epi16(hcur, 1);
                scv[k] = lane_scales(sc[2 * k], sc[2 * k + 1]);
            }
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m256i isum = _mm256_setzero_si256();
            for (int k = 0; k < 8; ++k) {
                const __m256i p = _mm256_maddubs_epi16(q[k], load256(y.qs + 32 * k));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scv[k]));
            }
            int32_t ssum = 0;  // sum_j sc_j bsum_j: the -4 offset
            for (int j = 0; j < 16; ++j) ssum += sc[j] * y.bsums[j];
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d * y.d), acc[t]);
            corr[t] += d * y.d * static_cast<float>(4 * ssum);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

template <int NT>
WB_AVX2 void dot_q4_k_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i low4 = _mm256_set1_epi8(0xF);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = w + 144 * b;
        const float d = f16_at(blk), dmin = f16_at(blk + 2);
        const uint8_t* s = blk + 4;
        int16_t sc[8], m[8];
        for (int j = 0; j < 8; ++j) {
            if (j < 4) {
                sc[j] = static_cast<int16_t>(s[j] & 63);
                m[j] = static_cast<int16_t>(s[j + 4] & 63);
            } else {
                sc[j] = static_cast<int16_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
                m[j] = static_cast<int16_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
            }
        }
        __m256i lo[4], hi[4];
        for (int g = 0; g < 4; ++g) {
            const __m256i bytes = load256(blk + 16 + 32 * g);
            lo[g] = _mm256_and_si256(bytes, low4);
            hi[g] = _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4);
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m256i isum = _mm256_setzero_si256();
            for (int g = 0; g < 4; ++g) {
                const __m256i pl = _mm256_maddubs_epi16(lo[g], load256(y.qs + 64 * g));
                const __m256i ph = _mm256_maddubs_epi16(hi[g], load256(y.qs + 64 * g + 32));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pl, _mm256_set1_epi16(sc[2 * g])));
                isum =
                    _mm256_add_epi32(isum, _mm256_madd_epi16(ph, _mm256_set1_epi16(sc[2 * g + 1])));
            }
            int32_t msum = 0;
            for (int j = 0; j < 8; ++j) msum += m[j] * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d * y.d), acc[t]);
            corr[t] += dmin * y.d * static_cast<float>(msum);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

// Q5_K: Q4_K's sums with q = nibble | fifth bit << 4 (0..31), the bits of
// group g being bits 2g (low nibbles) and 2g + 1 (high) of the 32 qh bytes.
template <int NT>
WB_AVX2 void dot_q5_k_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i low4 = _mm256_set1_epi8(0xF), one = _mm256_set1_epi8(1);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = w + 176 * b;
        const float d = f16_at(blk), dmin = f16_at(blk + 2);
        const uint8_t* s = blk + 4;
        int16_t sc[8], m[8];
        for (int j = 0; j < 8; ++j) {
            if (j < 4) {
                sc[j] = static_cast<int16_t>(s[j] & 63);
                m[j] = static_cast<int16_t>(s[j + 4] & 63);
            } else {
                sc[j] = static_cast<int16_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
                m[j] = static_cast<int16_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
            }
        }
        // qh shifted right by 2g in each 16-bit lane: bit 0 (1) of each
        // byte is that byte's bit 2g (2g + 1); the mask drops what crossed
        // in from the neighbouring byte.
        __m256i hb = load256(blk + 16);
        __m256i lo[4], hi[4];
        for (int g = 0; g < 4; ++g) {
            const __m256i bytes = load256(blk + 48 + 32 * g);
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(hb, one), 4);
            const __m256i h1 =
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 1), one), 4);
            lo[g] = _mm256_or_si256(_mm256_and_si256(bytes, low4), h0);
            hi[g] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4), h1);
            hb = _mm256_srli_epi16(hb, 2);
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m256i isum = _mm256_setzero_si256();
            for (int g = 0; g < 4; ++g) {
                // 2 x 31 x 127 per int16 pair sum: no saturation
                const __m256i pl = _mm256_maddubs_epi16(lo[g], load256(y.qs + 64 * g));
                const __m256i ph = _mm256_maddubs_epi16(hi[g], load256(y.qs + 64 * g + 32));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pl, _mm256_set1_epi16(sc[2 * g])));
                isum =
                    _mm256_add_epi32(isum, _mm256_madd_epi16(ph, _mm256_set1_epi16(sc[2 * g + 1])));
            }
            int32_t msum = 0;
            for (int j = 0; j < 8; ++j) msum += m[j] * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d * y.d), acc[t]);
            corr[t] += dmin * y.d * static_cast<float>(msum);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

template <int NT>
WB_AVX2 void dot_q6_k_t(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, float* out,
                        size_t os) {
    __m256 acc[NT];
    float corr[NT] = {};
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i low4 = _mm256_set1_epi8(0xF), low2 = _mm256_set1_epi8(3);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = w + 210 * b;
        const auto* sc = reinterpret_cast<const int8_t*>(blk + 192);
        const float d = f16_at(blk + 208);
        __m256i q[8];    // unsigned 0..63, 32 values each: element 32k + l of the block
        __m256i scv[8];  // int16 scales: low half for the first 16 values, high half the next
        for (int h = 0; h < 2; ++h) {
            const __m256i ql0 = load256(blk + 64 * h), ql1 = load256(blk + 64 * h + 32);
            const __m256i qh = load256(blk + 128 + 32 * h);
            // bits 2k, 2k + 1 of each qh byte moved to bits 4, 5
            const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4);
            const __m256i h1 =
                _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4);
            const __m256i h2 = _mm256_and_si256(qh, _mm256_set1_epi8(0x30));
            const __m256i h3 = _mm256_and_si256(_mm256_srli_epi16(qh, 2), _mm256_set1_epi8(0x30));
            q[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(ql0, low4), h0);
            q[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(ql1, low4), h1);
            q[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4), h2);
            q[4 * h + 3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4), h3);
            for (int k = 0; k < 4; ++k) {
                scv[4 * h + k] = _mm256_set_m128i(_mm_set1_epi16(sc[8 * h + 2 * k + 1]),
                                                  _mm_set1_epi16(sc[8 * h + 2 * k]));
            }
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m256i isum = _mm256_setzero_si256();
            for (int k = 0; k < 8; ++k) {
                const __m256i p = _mm256_maddubs_epi16(q[k], load256(y.qs + 32 * k));
                isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scv[k]));
            }
            int32_t ssum = 0;  // sum_g sc_g * bsum_g: the -32 offset
            for (int g = 0; g < 16; ++g) ssum += sc[g] * y.bsums[g];
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d * y.d), acc[t]);
            corr[t] += d * y.d * static_cast<float>(32 * ssum);
        }
    }
    for (int t = 0; t < NT; ++t) out[t * os] = hsum(acc[t]) - corr[t];
}

/// acc + the 8 int32 sums of four products u[i] * s[i] (u unsigned, s
/// signed bytes): one vpdpbusd with VNNI, else mul_sum_us8 and an add.
WB_AVX2 inline __m256i dp_acc(__m256i acc, __m256i u, __m256i s) {
#ifdef WB_DOT_VNNI
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
    return _mm256_add_epi32(acc, mul_sum_us8(u, s));
#endif
}

/// Four activation bytes (values k..k+3 of a block) in every lane.
WB_AVX2 inline __m256i bcast4(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

// Groups of 8 interleaved rows (cpu/interleave.h): lane r of every int32
// sum is row r, so a block's 8 row sums need no horizontal add and its 8
// scales are one vector; per slice and token one (VNNI) or three
// instructions for 32 products. Q4_0 (kQ8 false): 4 slices of nibbles,
// q - 8 in 0..15 - 8; Q8_0: 8 slices of q + 128.
template <int NT, bool kQ8>
WB_AVX2 void dot_x8_legacy_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                             size_t os) {
    constexpr int kSlices = kQ8 ? 8 : 4;
#ifdef WB_DOT_VNNI
    constexpr int32_t kOff = kQ8 ? 128 : 8;  // what the unsigned weights carry
#else
    constexpr int32_t kOff = kQ8 ? 0 : 8;  // Q8_0 goes through |q| and signs
#endif
    __m256 acc[NT];
    const ActQ8_0* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_0*>(act + t * as);
    }
    const __m256i low4 = _mm256_set1_epi8(0xF);
    for (int64_t b = 0; b < n / 32; ++b) {
        const uint8_t* blk = g + (16 + 32 * kSlices) * b;
        prefetch_ahead(blk + 4096, 16 + 32 * kSlices);
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
        __m256i isum[NT];
        for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
        for (int l = 0; l < kSlices; ++l) {
            const __m256i v = load256(blk + 16 + 32 * l);
            if constexpr (kQ8) {
#ifdef WB_DOT_VNNI
                for (int t = 0; t < NT; ++t)
                    isum[t] = dp_acc(isum[t], v, bcast4(a[t][b].qs + 4 * l));
#else
                // vpmaddubsw would saturate on (q + 128) * a pairs: use |q|
                // and a with q's sign instead, the sums being the same
                const __m256i q = _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80)));
                const __m256i qabs = _mm256_sign_epi8(q, q);
                for (int t = 0; t < NT; ++t)
                    isum[t] =
                        dp_acc(isum[t], qabs, _mm256_sign_epi8(bcast4(a[t][b].qs + 4 * l), q));
#endif
            } else {
                const __m256i lo = _mm256_and_si256(v, low4);                        // 4l + j
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);  // 16 + 4l + j
                for (int t = 0; t < NT; ++t) {
                    isum[t] = dp_acc(isum[t], lo, bcast4(a[t][b].qs + 4 * l));
                    isum[t] = dp_acc(isum[t], hi, bcast4(a[t][b].qs + 16 + 4 * l));
                }
            }
        }
        for (int t = 0; t < NT; ++t) {
            // sum (q - kOff) a = sum q a - kOff sum a, exact in int32
            const __m256i q = _mm256_sub_epi32(isum[t], _mm256_set1_epi32(kOff * a[t][b].sum));
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(q),
                                     _mm256_mul_ps(dw, _mm256_set1_ps(a[t][b].d)), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * os, acc[t]);
}

template <int NT>
WB_AVX2 void dot_x8_q4_0_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                           size_t os) {
    dot_x8_legacy_t<NT, false>(n, g, act, as, out, os);
}

template <int NT>
WB_AVX2 void dot_x8_q8_0_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                           size_t os) {
    dot_x8_legacy_t<NT, true>(n, g, act, as, out, os);
}

// Q4_K groups (cpu/interleave.h): per block the 8 rows' sub-block scales
// and mins are unpacked lane-wise from the 12 scale bytes (byte k of the
// 8 rows is one 8-byte load); per sub-block the 8 row sums come from 8
// slices, are scaled by the sub-block's scales (int32, exact: at most
// 8 * 63 * 32 * 15 * 128) and summed; the mins term is sum_j m_j bsum_j.
// At most 2 tokens a pass keeps the sums in registers.
template <int NT>
WB_AVX2 void dot_x8_q4_k_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                           size_t os) {
    __m256 acc[NT];
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i low4 = _mm256_set1_epi8(0xF);
    const __m256i m63 = _mm256_set1_epi32(63), m15 = _mm256_set1_epi32(15);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = g + 1152 * b;
        prefetch_ahead(blk + 4 * 1152, 1152);
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
        const __m256 dmin =
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16)));
        __m256i sb[12];  // scale byte k of the 8 rows, one per lane
        for (int k = 0; k < 12; ++k)
            sb[k] = _mm256_cvtepu8_epi32(
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(blk + 32 + 8 * k)));
        __m256i sc[8], mn[8];  // as scales_q4_k in dot_scalar.cpp, lane-wise
        for (int j = 0; j < 4; ++j) {
            sc[j] = _mm256_and_si256(sb[j], m63);
            mn[j] = _mm256_and_si256(sb[j + 4], m63);
        }
        for (int j = 4; j < 8; ++j) {
            sc[j] = _mm256_or_si256(_mm256_and_si256(sb[j + 4], m15),
                                    _mm256_slli_epi32(_mm256_srli_epi32(sb[j - 4], 6), 4));
            mn[j] = _mm256_or_si256(_mm256_srli_epi32(sb[j + 4], 4),
                                    _mm256_slli_epi32(_mm256_srli_epi32(sb[j], 6), 4));
        }
        __m256i tot[NT];
        for (int t = 0; t < NT; ++t) tot[t] = _mm256_setzero_si256();
        for (int gi = 0; gi < 4; ++gi) {
            __m256i lo_s[NT], hi_s[NT];
            for (int t = 0; t < NT; ++t) lo_s[t] = hi_s[t] = _mm256_setzero_si256();
            for (int l = 0; l < 8; ++l) {
                const __m256i v = load256(blk + 128 + 32 * (8 * gi + l));
                const __m256i lo = _mm256_and_si256(v, low4);
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
                for (int t = 0; t < NT; ++t) {
                    lo_s[t] = dp_acc(lo_s[t], lo, bcast4(a[t][b].qs + 64 * gi + 4 * l));
                    hi_s[t] = dp_acc(hi_s[t], hi, bcast4(a[t][b].qs + 64 * gi + 32 + 4 * l));
                }
            }
            for (int t = 0; t < NT; ++t)
                tot[t] = _mm256_add_epi32(
                    tot[t], _mm256_add_epi32(_mm256_mullo_epi32(lo_s[t], sc[2 * gi]),
                                             _mm256_mullo_epi32(hi_s[t], sc[2 * gi + 1])));
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m256i ms = _mm256_setzero_si256();
            for (int j = 0; j < 8; ++j)
                ms = _mm256_add_epi32(
                    ms, _mm256_mullo_epi32(mn[j],
                                           _mm256_set1_epi32(y.bsums[2 * j] + y.bsums[2 * j + 1])));
            const __m256 da = _mm256_set1_ps(y.d);
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tot[t]), _mm256_mul_ps(d, da), acc[t]);
            acc[t] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(ms), _mm256_mul_ps(dmin, da), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * os, acc[t]);
}

// Q6_K groups (cpu/interleave.h), NT tokens a pass: per half h and 4-value
// step l4, two ql slices and one qh slice give the four 6-bit values q0..q3
// (0..63) of 8 rows, unpacked once for the NT tokens. The -32 offset is
// 32 sum_k sc_k bsum_k, taken as 8 vpmaddwd of two scales' 8 rows against
// two bsums. The scale of a 16-value sub-block k is applied
//  - with VNNI: to its 8 int32 row sums after 4 vpdpbusd (vpmulld);
//  - without: in the widening vpmaddwd itself, the 16-bit pair sums of
//    vpmaddubsw times the scale repeated in both halves of a row's lane
//    (|pair| <= 2 * 63 * 128, |scale| <= 128: exact in int32).
template <int NT>
WB_AVX2 void dot_x8_q6_k_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                           size_t os) {
    __m256 acc[NT];
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm256_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m256i low4 = _mm256_set1_epi8(0xF), m30 = _mm256_set1_epi8(0x30);
    for (int64_t b = 0; b < n / 256; ++b) {
        const uint8_t* blk = g + 1680 * b;
        prefetch_ahead(blk + 3 * 1680, 1680);
        const uint8_t* scb = blk + 16;  // scale k of row r at 8k + r
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
        __m256i tot[NT];
        for (int t = 0; t < NT; ++t) tot[t] = _mm256_setzero_si256();
        for (int kp = 0; kp < 8; ++kp) {  // scales 2kp, 2kp+1 of each row: int16 pairs
            const __m256i sp = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scb + 16 * kp)),
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(scb + 16 * kp + 8))));
            for (int t = 0; t < NT; ++t) {
                int32_t bp;  // bsums 2kp (low half), 2kp+1
                std::memcpy(&bp, a[t][b].bsums + 2 * kp, 4);
                tot[t] = _mm256_sub_epi32(
                    tot[t], _mm256_slli_epi32(_mm256_madd_epi16(sp, _mm256_set1_epi32(bp)), 5));
            }
        }
        for (int h = 0; h < 2; ++h) {
            for (int hl = 0; hl < 2; ++hl) {  // values 0..15, then 16..31 of each quarter
#ifdef WB_DOT_VNNI
                __m256i s[NT][4];
                for (int t = 0; t < NT; ++t)
                    for (int c = 0; c < 4; ++c) s[t][c] = _mm256_setzero_si256();
#else
                __m256i sc16[4];  // sub-block 8h + 2c + hl's scale, both halves of each lane
                for (int c = 0; c < 4; ++c) {
                    const __m128i v = _mm_loadl_epi64(
                        reinterpret_cast<const __m128i*>(scb + 8 * (8 * h + 2 * c + hl)));
                    sc16[c] = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v, v));
                }
#endif
                for (int l4 = 4 * hl; l4 < 4 * hl + 4; ++l4) {
                    const __m256i A = load256(blk + 144 + 32 * (16 * h + l4));
                    const __m256i B = load256(blk + 144 + 32 * (16 * h + 8 + l4));
                    const __m256i H = load256(blk + 1168 + 32 * (8 * h + l4));
                    // bits 2c, 2c+1 of H to bits 4, 5: the high bits of q_c
                    const __m256i q[4] = {
                        _mm256_or_si256(_mm256_and_si256(A, low4),
                                        _mm256_and_si256(_mm256_slli_epi16(H, 4), m30)),
                        _mm256_or_si256(_mm256_and_si256(B, low4),
                                        _mm256_and_si256(_mm256_slli_epi16(H, 2), m30)),
                        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(A, 4), low4),
                                        _mm256_and_si256(H, m30)),
                        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(B, 4), low4),
                                        _mm256_and_si256(_mm256_srli_epi16(H, 2), m30))};
                    for (int c = 0; c < 4; ++c)
                        for (int t = 0; t < NT; ++t) {
                            const __m256i y = bcast4(a[t][b].qs + 128 * h + 32 * c + 4 * l4);
#ifdef WB_DOT_VNNI
                            s[t][c] = dp_acc(s[t][c], q[c], y);
#else
                            tot[t] = _mm256_add_epi32(
                                tot[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q[c], y), sc16[c]));
#endif
                        }
                }
#ifdef WB_DOT_VNNI
                for (int c = 0; c < 4; ++c) {
                    const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(
                        reinterpret_cast<const __m128i*>(scb + 8 * (8 * h + 2 * c + hl))));
                    for (int t = 0; t < NT; ++t)
                        tot[t] = _mm256_add_epi32(tot[t], _mm256_mullo_epi32(s[t][c], sc));
                }
#endif
            }
        }
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(tot[t]),
                                     _mm256_mul_ps(d, _mm256_set1_ps(a[t][b].d)), acc[t]);
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * os, acc[t]);
}

// Tiles of 3 and 4 tokens as passes of 2 (+1), as dot_x8_q4_k below.
void dot_x8_q6_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    for (int t0 = 0; t0 < nt; t0 += 2) {
        if (nt - t0 >= 2)
            dot_x8_q6_k_t<2>(n, w, act + t0 * as, as, out + t0 * os, os);
        else
            dot_x8_q6_k_t<1>(n, w, act + t0 * as, as, out + t0 * os, os);
    }
}

// Tiles of 3 and 4 tokens as passes of 2 (+1): the weights are unpacked
// again per pass, from L1, which costs less than spilling the sums.
void dot_x8_q4_k(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    for (int t0 = 0; t0 < nt; t0 += 2) {
        if (nt - t0 >= 2)
            dot_x8_q4_k_t<2>(n, w, act + t0 * as, as, out + t0 * os, os);
        else
            dot_x8_q4_k_t<1>(n, w, act + t0 * as, as, out + t0 * os, os);
    }
}

// DotFn for a kernel template: dispatch on the tile's token count.
#define WB_TILED(name)                                                                        \
    void name(int64_t n, const uint8_t* w, const uint8_t* act, size_t as, int nt, float* out, \
              size_t os) {                                                                    \
        switch (nt) {                                                                         \
            case 1:                                                                           \
                return name##_t<1>(n, w, act, as, out, os);                                   \
            case 2:                                                                           \
                return name##_t<2>(n, w, act, as, out, os);                                   \
            case 3:                                                                           \
                return name##_t<3>(n, w, act, as, out, os);                                   \
            default:                                                                          \
                return name##_t<4>(n, w, act, as, out, os);                                   \
        }                                                                                     \
    }
WB_TILED(dot_f32)
WB_TILED(dot_f16)
WB_TILED(dot_bf16)
WB_TILED(dot_q8_0)
WB_TILED(dot_q4_0)
WB_TILED(dot_q4_1)
WB_TILED(dot_q5_0)
WB_TILED(dot_q5_1)
WB_TILED(dot_iq4_nl)
WB_TILED(dot_q2_k)
WB_TILED(dot_q3_k)
WB_TILED(dot_q4_k)
WB_TILED(dot_q5_k)
WB_TILED(dot_q6_k)
WB_TILED(dot_x8_f16)
WB_TILED(dot_x8_bf16)
WB_TILED(dot_x8_q4_0)
WB_TILED(dot_x8_q8_0)
#undef WB_TILED

}  // namespace

#include "exec/cpu/kernel_lookup.inc"

}  // namespace wb::cpu::detail

#else

namespace wb::cpu::detail {
#ifdef WB_DOT_VNNI
const WeightKernel* avxvnni_kernel(uint32_t) noexcept {
    return nullptr;
}
#else
const WeightKernel* avx2_kernel(uint32_t) noexcept {
    return nullptr;
}
#endif
}  // namespace wb::cpu::detail

#endif
