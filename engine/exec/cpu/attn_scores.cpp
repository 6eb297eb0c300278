#include "exec/cpu/attn_scores.h"

#include <algorithm>
#include <cstring>

#include "exec/cpu/kv_value.h"

#if defined(__x86_64__) || defined(__i386__)
// GCC 12 warns inside the 512-bit unpack intrinsics, whose pass-through
// operand is _mm512_undefined_ps() (a false positive: the mask is all ones).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define WB_SCORES_AVX2 1
#endif

namespace wb::cpu {

namespace {

template <bool kF16>
void scores_scalar(int64_t n, const float* q, size_t qs, int n_q, const uint8_t* k, size_t ks,
                   const uint32_t* rows, uint32_t n_keys, float* s, size_t ss) {
    for (uint32_t j = 0; j < n_keys; ++j) {
        const uint8_t* kj = k + size_t{rows[j]} * ks;
        for (int h = 0; h < n_q; ++h) {
            float acc = 0.0f;
            for (int64_t i = 0; i < n; ++i) acc += q[h * qs + i] * kv_value_at<kF16>(kj, i);
            s[h * ss + j] = acc;
        }
    }
}

#ifdef WB_SCORES_AVX2
#define WB_AVX2 __attribute__((target("avx2,fma,f16c")))

// NH heads (1, 2) x NK keys (1..4): NH * NK accumulators of eight partial
// sums over the dims; then the NK sums of a head reduced together (two
// rounds of pairwise adds, then the two 128-bit halves).
template <int NH, int NK>
WB_AVX2 void scores_block(int64_t n, const float* q, size_t qs, const float* k, float* s,
                          size_t ss) {
    __m256 acc[NH][4];
    for (int h = 0; h < NH; ++h)
        for (int j = 0; j < 4; ++j) acc[h][j] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n; i += 8) {
        __m256 qv[NH];
        for (int h = 0; h < NH; ++h) qv[h] = _mm256_loadu_ps(q + h * qs + i);
        for (int j = 0; j < NK; ++j) {
            const __m256 kv = _mm256_loadu_ps(k + j * n + i);
            for (int h = 0; h < NH; ++h) acc[h][j] = _mm256_fmadd_ps(qv[h], kv, acc[h][j]);
        }
    }
    for (int h = 0; h < NH; ++h) {
        const __m256 t = _mm256_hadd_ps(_mm256_hadd_ps(acc[h][0], acc[h][1]),
                                        _mm256_hadd_ps(acc[h][2], acc[h][3]));
        const __m128 r = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
        alignas(16) float out[4];
        _mm_store_ps(out, r);
        for (int j = 0; j < NK; ++j) s[h * ss + j] = out[j];
    }
}

template <int NH>
WB_AVX2 void scores_heads(int64_t n, const float* q, size_t qs, const float* k, uint32_t n_keys,
                          float* s, size_t ss) {
    uint32_t j = 0;
    for (; j + 4 <= n_keys; j += 4) scores_block<NH, 4>(n, q, qs, k + j * n, s + j, ss);
    switch (n_keys - j) {
        case 3:
            return scores_block<NH, 3>(n, q, qs, k + j * n, s + j, ss);
        case 2:
            return scores_block<NH, 2>(n, q, qs, k + j * n, s + j, ss);
        case 1:
            return scores_block<NH, 1>(n, q, qs, k + j * n, s + j, ss);
        default:
            return;
    }
}

// Sixteen keys at a time as f32 rows, converted once for all the heads.
template <bool kF16>
WB_AVX2 void scores_avx2(int64_t n, const float* q, size_t qs, int n_q, const uint8_t* k, size_t ks,
                         const uint32_t* rows, uint32_t n_keys, float* s, size_t ss) {
    constexpr uint32_t kKeys = 16;
    alignas(32) float buf[kKeys * kMaxScoresDim];  // [kKeys, n]
    for (uint32_t j0 = 0; j0 < n_keys; j0 += kKeys) {
        const uint32_t nk = std::min(kKeys, n_keys - j0);
        for (uint32_t j = 0; j < nk; ++j) {
            const uint8_t* kj = k + size_t{rows[j0 + j]} * ks;
            for (int64_t i = 0; i < n; i += 8)
                _mm256_store_ps(buf + j * n + i,
                                kF16 ? _mm256_cvtph_ps(_mm_loadu_si128(
                                           reinterpret_cast<const __m128i*>(kj + 2 * i)))
                                     : _mm256_loadu_ps(reinterpret_cast<const float*>(kj + 4 * i)));
        }
        int h = 0;
        for (; h + 2 <= n_q; h += 2)
            scores_heads<2>(n, q + h * qs, qs, buf, nk, s + h * ss + j0, ss);
        if (h < n_q) scores_heads<1>(n, q + h * qs, qs, buf, nk, s + h * ss + j0, ss);
    }
}

#define WB_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma,f16c")))

// The 512-bit kernel computes exactly the AVX2 one's sums, two keys a
// register: the upper 256 bits carry the next key's eight-lane chains (the
// query's eight dims duplicated), so each FMA does what two of AVX2's do,
// in the same order; the reduction adds in the same tree as scores_block's
// hadds. Keys are stored in pairs: [pair][n / 8][2 keys][8 dims], the
// query heads duplicated once a call: [head][n / 8][2][8].
//
// NH heads (1..4) x four keys (two pairs); qd: the heads' duplicated rows,
// 2 n floats apart.
template <int NH>
WB_AVX512 void scores_quad16(int64_t n, const float* qd, const float* kp, float* s, size_t ss) {
    __m512 acc[NH][2];  // [head][pair]: lanes 0..7 the pair's first key, 8..15 its second
    for (int h = 0; h < NH; ++h) acc[h][0] = acc[h][1] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 8) {
        const __m512 k01 = _mm512_load_ps(kp + 2 * i);          // keys 0 | 1, dims i..i+7
        const __m512 k23 = _mm512_load_ps(kp + 2 * n + 2 * i);  // keys 2 | 3
        for (int h = 0; h < NH; ++h) {
            const __m512 qh = _mm512_load_ps(qd + h * 2 * n + 2 * i);  // dims i..i+7, twice
            acc[h][0] = _mm512_fmadd_ps(qh, k01, acc[h][0]);
            acc[h][1] = _mm512_fmadd_ps(qh, k23, acc[h][1]);
        }
    }
    for (int h = 0; h < NH; ++h) {
        // Lane sums ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)) per
        // key, as hadd(hadd(a0, a1), hadd(a2, a3)) and the halves' add.
        const __m512 p01 = _mm512_add_ps(acc[h][0], _mm512_permute_ps(acc[h][0], 0xB1));
        const __m512 p23 = _mm512_add_ps(acc[h][1], _mm512_permute_ps(acc[h][1], 0xB1));
        const __m512 m = _mm512_shuffle_ps(p01, p23, _MM_SHUFFLE(2, 0, 2, 0));
        const __m512 t = _mm512_add_ps(m, _mm512_permute_ps(m, 0xB1));
        const __m512 r = _mm512_add_ps(t, _mm512_shuffle_f32x4(t, t, _MM_SHUFFLE(2, 3, 0, 1)));
        alignas(64) float out[16];
        _mm512_store_ps(out, r);
        s[h * ss + 0] = out[0];
        s[h * ss + 1] = out[8];
        s[h * ss + 2] = out[2];
        s[h * ss + 3] = out[10];
    }
}

// As scores_avx2 (the same bits), for at most kDupHeads heads: their rows
// duplicated once, then sixteen keys converted at a time into pairs, four
// keys and up to four heads a pass; a block's last 1-3 keys go through the
// AVX2 blocks, from an unpaired copy.
constexpr int kDupHeads = 32;
template <bool kF16>
WB_AVX512 void scores_avx512_heads(int64_t n, const float* q, size_t qs, int n_q, const uint8_t* k,
                                   size_t ks, const uint32_t* rows, uint32_t n_keys, float* s,
                                   size_t ss) {
    constexpr uint32_t kKeys = 16;
    alignas(64) float qd[kDupHeads * 2 * kMaxScoresDim];  // [n_q][n / 8][2][8]
    alignas(64) float buf[kKeys * kMaxScoresDim];         // [kKeys / 2][n / 8][2][8]
    alignas(32) float rest[3 * kMaxScoresDim];            // [3, n]: a block's last keys
    for (int h = 0; h < n_q; ++h)
        for (int64_t i = 0; i < n; i += 8) {
            const __m256 q8 = _mm256_loadu_ps(q + h * qs + i);
            _mm256_store_ps(qd + h * 2 * n + 2 * i, q8);
            _mm256_store_ps(qd + h * 2 * n + 2 * i + 8, q8);
        }
    for (uint32_t j0 = 0; j0 < n_keys; j0 += kKeys) {
        const uint32_t nk = std::min(kKeys, n_keys - j0);
        const uint32_t n4 = nk / 4 * 4;  // keys in whole quads
        for (uint32_t j = 0; j < nk; ++j) {
            const uint8_t* kj = k + size_t{rows[j0 + j]} * ks;
            float* dst = j < n4 ? buf + (j / 2) * 2 * n + (j % 2) * 8 : rest + (j - n4) * n;
            const int64_t step = j < n4 ? 16 : 8;  // paired rows interleave blocks of 8
            for (int64_t i = 0; i < n; i += 8)
                _mm256_store_ps(dst + (i / 8) * step,
                                kF16 ? _mm256_cvtph_ps(_mm_loadu_si128(
                                           reinterpret_cast<const __m128i*>(kj + 2 * i)))
                                     : _mm256_loadu_ps(reinterpret_cast<const float*>(kj + 4 * i)));
        }
        for (uint32_t j = 0; j < n4; j += 4) {
            const float* kp = buf + (j / 2) * 2 * n;
            float* sj = s + j0 + j;
            int h = 0;
            for (; h + 4 <= n_q; h += 4) scores_quad16<4>(n, qd + h * 2 * n, kp, sj + h * ss, ss);
            switch (n_q - h) {
                case 3:
                    scores_quad16<3>(n, qd + h * 2 * n, kp, sj + h * ss, ss);
                    break;
                case 2:
                    scores_quad16<2>(n, qd + h * 2 * n, kp, sj + h * ss, ss);
                    break;
                case 1:
                    scores_quad16<1>(n, qd + h * 2 * n, kp, sj + h * ss, ss);
                    break;
                default:
                    break;
            }
        }
        if (n4 < nk) {
            int h = 0;
            for (; h + 2 <= n_q; h += 2)
                scores_heads<2>(n, q + h * qs, qs, rest, nk - n4, s + h * ss + j0 + n4, ss);
            if (h < n_q)
                scores_heads<1>(n, q + h * qs, qs, rest, nk - n4, s + h * ss + j0 + n4, ss);
        }
    }
}

// Heads kDupHeads at a time (multi-query models can have more).
template <bool kF16>
WB_AVX512 void scores_avx512(int64_t n, const float* q, size_t qs, int n_q, const uint8_t* k,
                             size_t ks, const uint32_t* rows, uint32_t n_keys, float* s,
                             size_t ss) {
    for (int h = 0; h < n_q; h += kDupHeads)
        scores_avx512_heads<kF16>(n, q + h * qs, qs, std::min(kDupHeads, n_q - h), k, ks, rows,
                                  n_keys, s + h * ss, ss);
}

#undef WB_AVX512
#undef WB_AVX2
#endif

}  // namespace

ScoresFn scores_kernel(bool k_f16, Isa isa) noexcept {
#ifdef WB_SCORES_AVX2
    if (isa == Isa::Avx512 && isa_available(Isa::Avx512))
        return k_f16 ? scores_avx512<true> : scores_avx512<false>;
    if (uses_avx2(isa) && isa_available(Isa::Avx2))
        return k_f16 ? scores_avx2<true> : scores_avx2<false>;
#else
    (void)isa;
#endif
    return k_f16 ? scores_scalar<true> : scores_scalar<false>;
}

}  // namespace wb::cpu

#if defined(WB_SCORES_AVX2) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
