#pragma once
// exp(x) for x <= 0, eight floats at a time with AVX2 + FMA, for the CPU
// executor's softmax and SiLU (x86-64 only; callers check the ISA).

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace wb::cpu {

// exp(x) for x <= 0 (x - max): x = n ln2 + r, |r| <= ln2/2, with ln2 in two
// parts so that n ln2 is exact (Cody and Waite); exp(r) by its Taylor
// polynomial to r^7 (truncation under 2^-27 on that range); 2^n into the
// exponent bits. Below -87.3 (2^n subnormal) the result is 0; a NaN stays
// NaN (max_ps returns its second operand when one is NaN).
__attribute__((target("avx2,fma"))) inline __m256 exp_nonpositive_avx2(__m256 x) {
    const __m256 lo = _mm256_set1_ps(-87.3f);
    const __m256 tiny = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    x = _mm256_max_ps(lo, x);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(tiny, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

}  // namespace wb::cpu

#endif
