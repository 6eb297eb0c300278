// The AVX-512 kernels (isa.h: Isa::Avx512), compiled for any x86-64 with
// per-function target attributes and chosen at run time. Only the kernels
// that gain from 512-bit registers are here, as dot_x16 (two adjacent
// interleaved groups, 16 rows a register) and, for F16/BF16, dot_x32 (four
// groups); every other kernel of the level is the AVX-VNNI one (AVX2's on a
// CPU without AVX-VNNI). Each wide kernel computes, lane by lane, the same
// operations in the same order as the 256-bit dot_x8 it stands in for, so
// the sums are bit for bit the same whichever kernel a row goes through (a
// matrix's odd last groups, or the thread count moving chunk edges).

#include <cstring>

#include "exec/cpu/dot.h"
#include "ggml/types.h"

#if defined(__x86_64__) || defined(__i386__)

// GCC 12 warns inside _mm512_cvtph_ps, whose pass-through operand is
// _mm512_undefined_ps() (a false positive: no lane of it is ever read).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#define WB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

namespace wb::cpu::detail {

namespace {

/// The 256-bit table this level builds on.
const WeightKernel* base_kernel(uint32_t type) noexcept {
    return isa_available(Isa::AvxVnni) ? avxvnni_kernel(type) : avx2_kernel(type);
}

// One token through the 256-bit 8-row kernel of `type`, group by group
// (`group_bytes` apart): for decode it measured faster than the 16-row
// kernels of the integer types (same sums either way).
void x8_each_group(ggml::Type type, int64_t group_bytes, int64_t n, const uint8_t* g,
                   const uint8_t* act, size_t as, float* out, size_t os) {
    const DotX8Fn x8 = base_kernel(static_cast<uint32_t>(type))->dot_x8;
    x8(n, g, act, as, 1, out, os);
    x8(n, g + group_bytes, act, as, 1, out + 8, os);
}

// A DotX8Fn over a 16-row kernel of at most two tokens a pass (K2, K1 for
// a last odd token), one token through x8_each_group.
template <ggml::Type T, int kBlockBytes, int kBlockValues,
          void (*K2)(int64_t, const uint8_t*, const uint8_t*, size_t, float*, size_t),
          void (*K1)(int64_t, const uint8_t*, const uint8_t*, size_t, float*, size_t)>
void in_pairs(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
              size_t os) {
    if (nt == 1) return x8_each_group(T, kBlockBytes * (n / kBlockValues), n, g, act, as, out, os);
    for (int t0 = 0; t0 < nt; t0 += 2) {
        if (nt - t0 >= 2)
            K2(n, g, act + t0 * as, as, out + t0 * os, os);
        else
            K1(n, g, act + t0 * as, as, out + t0 * os, os);
    }
}

// Asks for the cache lines at p0 and p1 (the same place in each group,
// some blocks ahead). Decode reads each weight once, and the hardware
// prefetchers alone left a thread at about half its read bandwidth
// (measured: Q4_K decode +15-25% with this). A prefetch never faults, so
// one past the end of the weights is harmless.
WB_AVX512 inline void prefetch2(const uint8_t* p0, const uint8_t* p1) {
    _mm_prefetch(reinterpret_cast<const char*>(p0), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p1), _MM_HINT_T0);
}

// 32 bytes at p0 (group 0) and at p1 (group 1) as one register.
WB_AVX512 inline __m512i two32(const uint8_t* p0, const uint8_t* p1) {
    return _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p0))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p1)), 1);
}

// 8 bytes at p0 and at p1 as 16.
WB_AVX512 inline __m128i two8(const uint8_t* p0, const uint8_t* p1) {
    return _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p0)),
                              _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p1)));
}

// F16, 2 B groups (cpu/interleave.h; each 8 rows x n values, 16 n bytes):
// value i of 16 rows as 16 floats (the even group's 8 in the low half) per
// register block b < B, times token t's value i broadcast; two
// accumulators per token and block as dot_x8_f16 in dot_avx2.cpp, summed
// in its order. B = 1 (dot_x16, up to 8 tokens): one conversion feeds 8
// FMAs, but each FMA also loads its broadcast, and at 10 loads per 8 FMAs
// the load ports, not the FMA units, set the pace (measured: 160 of 214
// GFLOP/s one core's FMAs give). B = 2 (dot_x32, up to 6 tokens): one
// broadcast feeds 2 FMAs, 14 loads per 12 FMAs, 209 GFLOP/s; 24
// accumulators of the 32 registers. BF16 (kBf16): the same layout, the
// halves widened by a 16-bit shift.
template <int B, int NT, bool kBf16>
requires(B == 1 || B == 2) WB_AVX512
    void dot_wide_half_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                         size_t os) {
    // Every loop but the one over i is unrolled by hand's word: left to
    // itself, GCC 12 kept the sums of B = 2 on the stack (3x slower).
    constexpr int U = 2;
    const int64_t gb = 16 * n;  // bytes of one group
    __m512 acc[NT][B][U];
    const float* x[NT];
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
        x[t] = reinterpret_cast<const float*>(act + t * as);
#pragma GCC unroll 2
        for (int b = 0; b < B; ++b)
#pragma GCC unroll 2
            for (int u = 0; u < U; ++u) acc[t][b][u] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < n; i += U) {  // n is a multiple of 8
        if ((i & 3) == 0) {               // 4 KiB ahead in each group
            const uint8_t* p = g + 16 * i + 4096;
#pragma GCC unroll 2
            for (int b = 0; b < B; ++b) prefetch2(p + 2 * b * gb, p + (2 * b + 1) * gb);
        }
#pragma GCC unroll 2
        for (int u = 0; u < U; ++u) {
            __m512 w[B];
#pragma GCC unroll 2
            for (int b = 0; b < B; ++b) {
                const uint8_t* p = g + 2 * b * gb + 16 * (i + u);
                const __m256i h = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + gb)), 1);
                w[b] = kBf16 ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
                             : _mm512_cvtph_ps(h);
            }
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) {
                const __m512 xv = _mm512_set1_ps(x[t][i + u]);
#pragma GCC unroll 2
                for (int b = 0; b < B; ++b) acc[t][b][u] = _mm512_fmadd_ps(w[b], xv, acc[t][b][u]);
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t)
#pragma GCC unroll 2
        for (int b = 0; b < B; ++b) {
            __m512 s = acc[t][b][0];
#pragma GCC unroll 2
            for (int u = 1; u < U; ++u) s = _mm512_add_ps(s, acc[t][b][u]);
            _mm512_storeu_ps(out + t * os + 16 * b, s);
        }
}

// dot_x16 (B = 1, nt 1..8) and dot_x32 (B = 2, nt 1..6) of F16 and BF16.
template <int B, bool kBf16>
void dot_wide_half(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                   size_t os) {
    switch (nt) {
        case 1:
            return dot_wide_half_t<B, 1, kBf16>(n, g, act, as, out, os);
        case 2:
            return dot_wide_half_t<B, 2, kBf16>(n, g, act, as, out, os);
        case 3:
            return dot_wide_half_t<B, 3, kBf16>(n, g, act, as, out, os);
        case 4:
            return dot_wide_half_t<B, 4, kBf16>(n, g, act, as, out, os);
        case 5:
            return dot_wide_half_t<B, 5, kBf16>(n, g, act, as, out, os);
        case 6:
            return dot_wide_half_t<B, 6, kBf16>(n, g, act, as, out, os);
        default:  // 7 or 8 (B = 1 only: dot_x32 takes at most kMaxTile32 = 6)
            if constexpr (B == 1) {
                if (nt == 7) return dot_wide_half_t<1, 7, kBf16>(n, g, act, as, out, os);
                return dot_wide_half_t<1, 8, kBf16>(n, g, act, as, out, os);
            }
    }
}

// Q4_0 and Q8_0, two groups (cpu/interleave.h; a group-block of 32 values
// is 16 bytes of scales, then 4 (Q4_0) or 8 (Q8_0) slices of 32 bytes): as
// dot_x8_legacy_t in dot_avx2.cpp with 16 rows a register and up to 8
// tokens a pass (one unpacking feeds them all); the block sums are exact
// in int32, then the same f32 step per block.
template <int NT, bool kQ8>
WB_AVX512 void dot_x16_legacy_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as,
                                float* out, size_t os) {
    constexpr int kSlices = kQ8 ? 8 : 4;
    constexpr int kBlock = 16 + 32 * kSlices;  // bytes of a group-block
    constexpr int32_t kOff = kQ8 ? 128 : 8;    // what the unsigned weights carry
    const int64_t nb = n / 32;
    const uint8_t* g1 = g + kBlock * nb;  // the next group
    __m512 acc[NT];
    const ActQ8_0* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm512_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_0*>(act + t * as);
    }
    const __m512i low4 = _mm512_set1_epi8(0xF);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* b0 = g + kBlock * b;
        const uint8_t* b1 = g1 + kBlock * b;
        for (int o = 0; o < kBlock; o += 64) prefetch2(b0 + 4096 + o, b1 + 4096 + o);
        const __m512 dw = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b1)), 1));
        __m512i isum[NT];
        for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
        for (int l = 0; l < kSlices; ++l) {
            const __m512i v = two32(b0 + 16 + 32 * l, b1 + 16 + 32 * l);
            if constexpr (kQ8) {
                for (int t = 0; t < NT; ++t) {
                    int32_t y;
                    std::memcpy(&y, a[t][b].qs + 4 * l, 4);
                    isum[t] = _mm512_dpbusd_epi32(isum[t], v, _mm512_set1_epi32(y));
                }
            } else {
                const __m512i lo = _mm512_and_si512(v, low4);                        // 4l + j
                const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);  // 16 + 4l + j
                for (int t = 0; t < NT; ++t) {
                    int32_t yl, yh;
                    std::memcpy(&yl, a[t][b].qs + 4 * l, 4);
                    std::memcpy(&yh, a[t][b].qs + 16 + 4 * l, 4);
                    isum[t] = _mm512_dpbusd_epi32(isum[t], lo, _mm512_set1_epi32(yl));
                    isum[t] = _mm512_dpbusd_epi32(isum[t], hi, _mm512_set1_epi32(yh));
                }
            }
        }
        for (int t = 0; t < NT; ++t) {
            // sum (q - kOff) a = sum q a - kOff sum a, exact in int32
            const __m512i q = _mm512_sub_epi32(isum[t], _mm512_set1_epi32(kOff * a[t][b].sum));
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(q),
                                     _mm512_mul_ps(dw, _mm512_set1_ps(a[t][b].d)), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

template <bool kQ8>
void dot_x16_legacy(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                    size_t os) {
    switch (nt) {
        case 1:
            return x8_each_group(kQ8 ? ggml::Type::Q8_0 : ggml::Type::Q4_0,
                                 (16 + 32 * (kQ8 ? 8 : 4)) * (n / 32), n, g, act, as, out, os);
        case 2:
            return dot_x16_legacy_t<2, kQ8>(n, g, act, as, out, os);
        case 3:
            return dot_x16_legacy_t<3, kQ8>(n, g, act, as, out, os);
        case 4:
            return dot_x16_legacy_t<4, kQ8>(n, g, act, as, out, os);
        case 5:
            return dot_x16_legacy_t<5, kQ8>(n, g, act, as, out, os);
        case 6:
            return dot_x16_legacy_t<6, kQ8>(n, g, act, as, out, os);
        case 7:
            return dot_x16_legacy_t<7, kQ8>(n, g, act, as, out, os);
        default:
            return dot_x16_legacy_t<8, kQ8>(n, g, act, as, out, os);
    }
}

// Q6_K, two groups (cpu/interleave.h; 1680 bytes a group-block of 256
// values): as dot_x8_q6_k_t in dot_avx2.cpp with 16 rows a register (group
// 0's 8 rows in the low 256 bits), NT <= 2 tokens a pass. Every integer sum
// is exact in int32, so the totals, and the one f32 step per block after
// them, are those of the 8-row kernels (VNNI or not).
template <int NT>
WB_AVX512 void dot_x16_q6_k_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as,
                              float* out, size_t os) {
    const int64_t nb = n / 256;
    const uint8_t* g1 = g + 1680 * nb;  // the next group
    __m512 acc[NT];
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm512_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m512i m30 = _mm512_set1_epi8(0x30), m3f = _mm512_set1_epi8(0x3F);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* b0 = g + 1680 * b;
        const uint8_t* b1 = g1 + 1680 * b;
        for (int o = 0; o < 1680; o += 64) prefetch2(b0 + 3 * 1680 + o, b1 + 3 * 1680 + o);
        const __m512 d = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b1)), 1));
        __m512i tot[NT];
        for (int t = 0; t < NT; ++t) tot[t] = _mm512_setzero_si512();
        for (int kp = 0; kp < 8; ++kp) {  // scales 2kp, 2kp+1 of the 16 rows: int16 pairs
            const __m128i s0 = _mm_unpacklo_epi8(
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b0 + 16 + 16 * kp)),
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b0 + 16 + 16 * kp + 8)));
            const __m128i s1 = _mm_unpacklo_epi8(
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b1 + 16 + 16 * kp)),
                _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b1 + 16 + 16 * kp + 8)));
            const __m512i sp =
                _mm512_cvtepi8_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(s0), s1, 1));
            for (int t = 0; t < NT; ++t) {
                int32_t bp;  // bsums 2kp (low half), 2kp+1
                std::memcpy(&bp, a[t][b].bsums + 2 * kp, 4);
                tot[t] = _mm512_sub_epi32(
                    tot[t], _mm512_slli_epi32(_mm512_madd_epi16(sp, _mm512_set1_epi32(bp)), 5));
            }
        }
        for (int h = 0; h < 2; ++h) {
            for (int hl = 0; hl < 2; ++hl) {  // values 0..15, then 16..31 of each quarter
                __m512i s[NT][4];
                for (int t = 0; t < NT; ++t)
                    for (int c = 0; c < 4; ++c) s[t][c] = _mm512_setzero_si512();
                for (int l4 = 4 * hl; l4 < 4 * hl + 4; ++l4) {
                    const __m512i A =
                        two32(b0 + 144 + 32 * (16 * h + l4), b1 + 144 + 32 * (16 * h + l4));
                    const __m512i B =
                        two32(b0 + 144 + 32 * (16 * h + 8 + l4), b1 + 144 + 32 * (16 * h + 8 + l4));
                    const __m512i H =
                        two32(b0 + 1168 + 32 * (8 * h + l4), b1 + 1168 + 32 * (8 * h + l4));
                    // bits 4, 5 from the shifted H, the rest from the nibble's
                    // byte: one vpternlogd each (0xAC: m30 ? y : x)
                    const __m512i q[4] = {
                        _mm512_ternarylogic_epi32(m30, A, _mm512_slli_epi16(H, 4), 0xAC),
                        _mm512_ternarylogic_epi32(m30, B, _mm512_slli_epi16(H, 2), 0xAC),
                        _mm512_ternarylogic_epi32(m30, _mm512_srli_epi16(A, 4), H, 0xAC),
                        _mm512_ternarylogic_epi32(m30, _mm512_srli_epi16(B, 4),
                                                  _mm512_srli_epi16(H, 2), 0xAC)};
                    for (int c = 0; c < 4; ++c) {
                        // bits 6, 7 came from the nibble's byte: cleared, 0..63 left
                        const __m512i qc = _mm512_and_si512(q[c], m3f);
                        for (int t = 0; t < NT; ++t) {
                            int32_t v;
                            std::memcpy(&v, a[t][b].qs + 128 * h + 32 * c + 4 * l4, 4);
                            s[t][c] = _mm512_dpbusd_epi32(s[t][c], qc, _mm512_set1_epi32(v));
                        }
                    }
                }
                for (int c = 0; c < 4; ++c) {
                    const int k = 8 * h + 2 * c + hl;  // the sub-block's scale
                    const __m512i sc = _mm512_cvtepi8_epi32(two8(b0 + 16 + 8 * k, b1 + 16 + 8 * k));
                    for (int t = 0; t < NT; ++t)
                        tot[t] = _mm512_add_epi32(tot[t], _mm512_mullo_epi32(s[t][c], sc));
                }
            }
        }
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tot[t]),
                                     _mm512_mul_ps(d, _mm512_set1_ps(a[t][b].d)), acc[t]);
    }
    for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

// Q4_K, two groups (cpu/interleave.h; 1152 bytes a group-block of 256
// values): as dot_x8_q4_k_t in dot_avx2.cpp with 16 rows a register, NT <=
// 2 tokens a pass: the scales and mins of 16 rows unpacked lane-wise, the
// sub-block sums exact in int32, then the same two f32 steps per block.
template <int NT>
WB_AVX512 void dot_x16_q4_k_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as,
                              float* out, size_t os) {
    const int64_t nb = n / 256;
    const uint8_t* g1 = g + 1152 * nb;  // the next group
    __m512 acc[NT];
    const ActQ8_K* a[NT];
    for (int t = 0; t < NT; ++t) {
        acc[t] = _mm512_setzero_ps();
        a[t] = reinterpret_cast<const ActQ8_K*>(act + t * as);
    }
    const __m512i low4 = _mm512_set1_epi8(0xF);
    const __m512i m63 = _mm512_set1_epi32(63), m15 = _mm512_set1_epi32(15);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* b0 = g + 1152 * b;
        const uint8_t* b1 = g1 + 1152 * b;
        for (int o = 0; o < 1152; o += 64) prefetch2(b0 + 4 * 1152 + o, b1 + 4 * 1152 + o);
        const __m512 d = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b1)), 1));
        const __m512 dmin = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b0 + 16))),
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(b1 + 16)), 1));
        __m512i sb[12];  // scale byte k of the 16 rows, one per lane
        for (int k = 0; k < 12; ++k)
            sb[k] = _mm512_cvtepu8_epi32(two8(b0 + 32 + 8 * k, b1 + 32 + 8 * k));
        __m512i sc[8], mn[8];  // as scales_q4_k in dot_scalar.cpp, lane-wise
        for (int j = 0; j < 4; ++j) {
            sc[j] = _mm512_and_si512(sb[j], m63);
            mn[j] = _mm512_and_si512(sb[j + 4], m63);
        }
        for (int j = 4; j < 8; ++j) {
            sc[j] = _mm512_or_si512(_mm512_and_si512(sb[j + 4], m15),
                                    _mm512_slli_epi32(_mm512_srli_epi32(sb[j - 4], 6), 4));
            mn[j] = _mm512_or_si512(_mm512_srli_epi32(sb[j + 4], 4),
                                    _mm512_slli_epi32(_mm512_srli_epi32(sb[j], 6), 4));
        }
        __m512i tot[NT];
        for (int t = 0; t < NT; ++t) tot[t] = _mm512_setzero_si512();
        for (int gi = 0; gi < 4; ++gi) {
            __m512i lo_s[NT], hi_s[NT];
            for (int t = 0; t < NT; ++t) lo_s[t] = hi_s[t] = _mm512_setzero_si512();
            for (int l = 0; l < 8; ++l) {
                const __m512i v = two32(b0 + 128 + 32 * (8 * gi + l), b1 + 128 + 32 * (8 * gi + l));
                const __m512i lo = _mm512_and_si512(v, low4);
                const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
                for (int t = 0; t < NT; ++t) {
                    int32_t vl, vh;
                    std::memcpy(&vl, a[t][b].qs + 64 * gi + 4 * l, 4);
                    std::memcpy(&vh, a[t][b].qs + 64 * gi + 32 + 4 * l, 4);
                    lo_s[t] = _mm512_dpbusd_epi32(lo_s[t], lo, _mm512_set1_epi32(vl));
                    hi_s[t] = _mm512_dpbusd_epi32(hi_s[t], hi, _mm512_set1_epi32(vh));
                }
            }
            for (int t = 0; t < NT; ++t)
                tot[t] = _mm512_add_epi32(
                    tot[t], _mm512_add_epi32(_mm512_mullo_epi32(lo_s[t], sc[2 * gi]),
                                             _mm512_mullo_epi32(hi_s[t], sc[2 * gi + 1])));
        }
        for (int t = 0; t < NT; ++t) {
            const ActQ8_K& y = a[t][b];
            __m512i ms = _mm512_setzero_si512();
            for (int j = 0; j < 8; ++j)
                ms = _mm512_add_epi32(
                    ms, _mm512_mullo_epi32(mn[j],
                                           _mm512_set1_epi32(y.bsums[2 * j] + y.bsums[2 * j + 1])));
            const __m512 da = _mm512_set1_ps(y.d);
            acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tot[t]), _mm512_mul_ps(d, da), acc[t]);
            acc[t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(ms), _mm512_mul_ps(dmin, da), acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) _mm512_storeu_ps(out + t * os, acc[t]);
}

}  // namespace

const WeightKernel* avx512_kernel(uint32_t type) noexcept {
    const WeightKernel* base = base_kernel(type);
    if (base == nullptr) return nullptr;
    switch (static_cast<ggml::Type>(type)) {
        case ggml::Type::F16: {
            static const WeightKernel k{base->act, base->dot, base->dot_x8, dot_wide_half<1, false>,
                                        dot_wide_half<2, false>};
            return &k;
        }
        case ggml::Type::BF16: {
            static const WeightKernel k{base->act, base->dot, base->dot_x8, dot_wide_half<1, true>,
                                        dot_wide_half<2, true>};
            return &k;
        }
        case ggml::Type::Q4_0: {
            static const WeightKernel k{base->act, base->dot, base->dot_x8, dot_x16_legacy<false>};
            return &k;
        }
        case ggml::Type::Q8_0: {
            static const WeightKernel k{base->act, base->dot, base->dot_x8, dot_x16_legacy<true>};
            return &k;
        }
        case ggml::Type::Q4_K: {
            static const WeightKernel k{
                base->act, base->dot, base->dot_x8,
                in_pairs<ggml::Type::Q4_K, 1152, 256, dot_x16_q4_k_t<2>, dot_x16_q4_k_t<1>>};
            return &k;
        }
        case ggml::Type::Q6_K: {
            static const WeightKernel k{
                base->act, base->dot, base->dot_x8,
                in_pairs<ggml::Type::Q6_K, 1680, 256, dot_x16_q6_k_t<2>, dot_x16_q6_k_t<1>>};
            return &k;
        }
        default:
            return base;
    }
}

}  // namespace wb::cpu::detail

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#else

namespace wb::cpu::detail {
const WeightKernel* avx512_kernel(uint32_t) noexcept {
    return nullptr;
}
}  // namespace wb::cpu::detail

#endif
