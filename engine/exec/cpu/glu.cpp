#include "exec/cpu/glu.h"

#include <cmath>

#include "exec/cpu/exp_avx2.h"

namespace wb::cpu {

namespace {

void silu_glu_scalar(int64_t n, const float* g, const float* u, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

#if defined(__x86_64__) || defined(__i386__)
#define WB_AVX2 __attribute__((target("avx2,fma")))

// With e = exp(-|x|) <= 1: silu(x) = x / (1 + e) for x >= 0 and
// x e / (1 + e) for x < 0 (the same value, e^x / (1 + e^x) = 1 / (1 + e^-x)).
WB_AVX2 void silu_glu_avx2(int64_t n, const float* g, const float* u, float* y) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 one = _mm256_set1_ps(1.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 x = _mm256_loadu_ps(g + i);
        const __m256 e = exp_nonpositive_avx2(_mm256_or_ps(x, sign));  // exp(-|x|)
        const __m256 neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
        const __m256 num = _mm256_blendv_ps(x, _mm256_mul_ps(x, e), neg);
        const __m256 s = _mm256_div_ps(num, _mm256_add_ps(one, e));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(s, _mm256_loadu_ps(u + i)));
    }
    silu_glu_scalar(n - i, g + i, u + i, y + i);
}

#undef WB_AVX2
#endif

}  // namespace

SiluGluFn silu_glu_kernel(Isa isa) noexcept {
#if defined(__x86_64__) || defined(__i386__)
    if (uses_avx2(isa) && isa_available(Isa::Avx2)) return silu_glu_avx2;
#else
    (void)isa;
#endif
    return silu_glu_scalar;
}

}  // namespace wb::cpu
