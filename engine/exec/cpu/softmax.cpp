#include "exec/cpu/softmax.h"

#include <algorithm>
#include <cmath>

#include "exec/cpu/exp_avx2.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WB_SOFTMAX_AVX2 1
#endif

namespace wb::cpu {

namespace {

float softmax_scalar(float* s, uint32_t n, float scale) {
    float mx = -INFINITY;
    bool nan = false;
    for (uint32_t j = 0; j < n; ++j) {
        s[j] *= scale;
        nan = nan || std::isnan(s[j]);
        mx = std::max(mx, s[j]);
    }
    float sum = 0.0f;
    for (uint32_t j = 0; j < n; ++j) {
        s[j] = std::exp(s[j] - mx);
        sum += s[j];
    }
    return nan ? NAN : sum;
}

#ifdef WB_SOFTMAX_AVX2
#define WB_AVX2 __attribute__((target("avx2,fma")))

WB_AVX2 float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

WB_AVX2 float softmax_avx2(float* s, uint32_t n, float scale) {
    const __m256 vs = _mm256_set1_ps(scale);
    __m256 vmx = _mm256_set1_ps(-INFINITY);
    __m256 bad = _mm256_setzero_ps();
    uint32_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(s + j), vs);
        _mm256_storeu_ps(s + j, v);
        vmx = _mm256_max_ps(vmx, v);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmx), _mm256_extractf128_ps(vmx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    float mx = _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
    bool nan = _mm256_movemask_ps(bad) != 0;
    for (uint32_t k = j; k < n; ++k) {
        s[k] *= scale;
        nan = nan || std::isnan(s[k]);
        mx = std::max(mx, s[k]);
    }
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 sum = _mm256_setzero_ps();
    for (j = 0; j + 8 <= n; j += 8) {
        const __m256 e = exp_nonpositive_avx2(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
        _mm256_storeu_ps(s + j, e);
        sum = _mm256_add_ps(sum, e);
    }
    if (j < n) {  // the tail through the same exp: eight lanes, the rest masked off
        alignas(32) float t[8];
        for (uint32_t k = 0; k < 8; ++k) t[k] = j + k < n ? s[j + k] - mx : -INFINITY;
        const __m256 e = exp_nonpositive_avx2(_mm256_load_ps(t));
        _mm256_store_ps(t, e);
        for (uint32_t k = j; k < n; ++k) s[k] = t[k - j];
        sum = _mm256_add_ps(sum, e);
    }
    return nan ? NAN : hsum(sum);
}

#undef WB_AVX2
#endif

}  // namespace

SoftmaxFn softmax_kernel(Isa isa) noexcept {
#ifdef WB_SOFTMAX_AVX2
    if (uses_avx2(isa) && isa_available(Isa::Avx2)) return softmax_avx2;
#else
    (void)isa;
#endif
    return softmax_scalar;
}

}  // namespace wb::cpu
