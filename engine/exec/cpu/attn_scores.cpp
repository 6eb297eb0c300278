#include "exec/cpu/attn_scores.h"

#include <algorithm>
#include <cstring>

#include "exec/cpu/kv_value.h"

#if defined(__x86_64__) || defined(__i386__)
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

#undef WB_AVX2
#endif

}  // namespace

ScoresFn scores_kernel(bool k_f16, Isa isa) noexcept {
#ifdef WB_SCORES_AVX2
    if (uses_avx2(isa) && isa_available(Isa::Avx2))
        return k_f16 ? scores_avx2<true> : scores_avx2<false>;
#else
    (void)isa;
#endif
    return k_f16 ? scores_scalar<true> : scores_scalar<false>;
}

}  // namespace wb::cpu
