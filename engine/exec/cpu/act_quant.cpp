#include "exec/cpu/act_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WB_ACT_AVX2 1
#endif

namespace wb::cpu {

namespace {

/// Scale and quantized values of one block of n floats (round to nearest
/// even, |q| <= 127). Returns the sum of the quants. A block holding NaN or
/// an infinity gets the scale NaN and zero quants, so every dot product
/// with it is NaN, as the f32 reference's is (std::max alone would skip a
/// NaN and quantize the rest as if it were not there).
int32_t quantize_block(const float* x, int n, float* d, int8_t* qs) {
    // One running max that keeps a NaN once it has seen one (no later
    // value compares greater than NaN): a select per value, no second
    // accumulator on this per-token path.
    float amax = 0.0f;
    for (int i = 0; i < n; ++i) {
        const float a = std::fabs(x[i]);
        amax = (a > amax || std::isnan(a)) ? a : amax;
    }
    if (!(amax <= std::numeric_limits<float>::max())) {  // NaN or an infinity
        *d = std::numeric_limits<float>::quiet_NaN();
        std::memset(qs, 0, static_cast<size_t>(n));
        return 0;
    }
    *d = amax / 127.0f;
    const float id = amax > 0.0f ? 127.0f / amax : 0.0f;
    int32_t sum = 0;
    for (int i = 0; i < n; ++i) {
        const long v = std::lrintf(x[i] * id);
        qs[i] = static_cast<int8_t>(std::clamp(v, -127L, 127L));
        sum += qs[i];
    }
    return sum;
}

#ifdef WB_ACT_AVX2
#define WB_AVX2 __attribute__((target("avx2,fma")))

/// quantize_block for n a multiple of 32, 8 values an instruction; the same
/// bytes (the max is exact in any order; x * id is the same f32 product and
/// cvtps2dq rounds to nearest even as lrintf does). bsums: when not null,
/// the sums of each 16 quants (ActQ8_K), taken from the int32 quants.
WB_AVX2 int32_t quantize_block_avx2(const float* x, int n, float* d, int8_t* qs, int16_t* bsums) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 fmax = _mm256_set1_ps(std::numeric_limits<float>::max());
    __m256 mx = _mm256_setzero_ps();
    __m256 bad = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) {
        const __m256 a = _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i));
        mx = _mm256_max_ps(mx, a);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, fmax, _CMP_NLE_UQ));  // NaN or an infinity
    }
    if (_mm256_movemask_ps(bad) != 0) {
        *d = std::numeric_limits<float>::quiet_NaN();
        std::memset(qs, 0, static_cast<size_t>(n));
        if (bsums != nullptr) std::memset(bsums, 0, static_cast<size_t>(n / 16) * sizeof(int16_t));
        return 0;
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    *d = amax / 127.0f;
    const __m256 id = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    const __m256i lo = _mm256_set1_epi32(-127), hi = _mm256_set1_epi32(127);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    __m256i sum = _mm256_setzero_si256();
    for (int i = 0; i < n; i += 32) {
        __m256i q[4];
        for (int k = 0; k < 4; ++k) {
            const __m256i v = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * k), id));
            q[k] = _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
        }
        const __m256i s01 = _mm256_add_epi32(q[0], q[1]), s23 = _mm256_add_epi32(q[2], q[3]);
        sum = _mm256_add_epi32(sum, _mm256_add_epi32(s01, s23));
        if (bsums != nullptr) {                       // two groups of 16: lanes of s01 and of s23
            __m256i h = _mm256_hadd_epi32(s01, s23);  // [s01 pairs, s23 pairs] per 128-bit half
            h = _mm256_hadd_epi32(h, h);
            const __m128i t =
                _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
            bsums[i / 16] = static_cast<int16_t>(_mm_cvtsi128_si32(t));
            bsums[i / 16 + 1] = static_cast<int16_t>(_mm_extract_epi32(t, 1));
        }
        const __m256i p =
            _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + i),
                            _mm256_permutevar8x32_epi32(p, order));
    }
    const __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    const __m128i s2 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
    return _mm_cvtsi128_si32(_mm_add_epi32(s2, _mm_shuffle_epi32(s2, 0xB1)));
}
#undef WB_AVX2
#endif

}  // namespace

int act_block_size(ActKind kind) noexcept {
    return kind == ActKind::Q8_0 ? 32 : kind == ActKind::Q8_K ? 256 : 1;
}

size_t act_row_bytes(ActKind kind, int64_t n) noexcept {
    size_t b = 0;
    switch (kind) {
        case ActKind::F32:
            b = static_cast<size_t>(n) * sizeof(float);
            break;
        case ActKind::Q8_0:
            b = static_cast<size_t>(n / 32) * sizeof(ActQ8_0);
            break;
        case ActKind::Q8_K:
            b = static_cast<size_t>(n / 256) * sizeof(ActQ8_K);
            break;
    }
    return (b + 7) / 8 * 8;
}

void quantize_act(ActKind kind, const float* x, void* dst, int64_t n, Isa isa) noexcept {
#ifdef WB_ACT_AVX2
    const bool avx2 = uses_avx2(isa);
#else
    static_cast<void>(isa);
#endif
    switch (kind) {
        case ActKind::F32:
            std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
            return;
        case ActKind::Q8_0: {
            auto* b = static_cast<ActQ8_0*>(dst);
            for (int64_t i = 0; i < n / 32; ++i, ++b, x += 32) {
#ifdef WB_ACT_AVX2
                if (avx2) {
                    b->sum = quantize_block_avx2(x, 32, &b->d, b->qs, nullptr);
                    continue;
                }
#endif
                b->sum = quantize_block(x, 32, &b->d, b->qs);
            }
            return;
        }
        case ActKind::Q8_K: {
            auto* b = static_cast<ActQ8_K*>(dst);
            for (int64_t i = 0; i < n / 256; ++i, ++b, x += 256) {
#ifdef WB_ACT_AVX2
                if (avx2) {
                    quantize_block_avx2(x, 256, &b->d, b->qs, b->bsums);
                    continue;
                }
#endif
                quantize_block(x, 256, &b->d, b->qs);
                for (int j = 0; j < 16; ++j) {
                    int s = 0;
                    for (int l = 0; l < 16; ++l) s += b->qs[16 * j + l];
                    b->bsums[j] = static_cast<int16_t>(s);
                }
            }
            return;
        }
    }
}

}  // namespace wb::cpu
