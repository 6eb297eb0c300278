#include "cpu/axpy.h"

#include <cmath>
#include <cstring>

#include "ggml/fp16.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WB_AXPY_AVX2 1
#endif

namespace wb::cpu {

namespace {

void axpy_f32_scalar(int64_t n, float a, const uint8_t* x, float* y) {
    for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, x + 4 * i, 4);
        y[i] += a * v;
    }
}

void axpy_f16_scalar(int64_t n, float a, const uint8_t* x, float* y) {
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, x + 2 * i, 2);
        y[i] += a * ggml::fp16_to_fp32(h);
    }
}

#ifdef WB_AXPY_AVX2
#define WB_AVX2 __attribute__((target("avx2,fma,f16c")))

WB_AVX2 void axpy_f32_avx2(int64_t n, float a, const uint8_t* x, float* y) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_loadu_ps(reinterpret_cast<const float*>(x + 4 * i));
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, xv, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; ++i) {
        float v;
        std::memcpy(&v, x + 4 * i, 4);
        y[i] = std::fma(a, v, y[i]);
    }
}

WB_AVX2 void axpy_f16_avx2(int64_t n, float a, const uint8_t* x, float* y) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv =
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i)));
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, xv, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, x + 2 * i, 2);
        y[i] = std::fma(a, _cvtsh_ss(h), y[i]);
    }
}

#undef WB_AVX2
#endif

}  // namespace

AxpyFn axpy_kernel(bool x_f16, Isa isa) noexcept {
#ifdef WB_AXPY_AVX2
    if (uses_avx2(isa) && isa_available(Isa::Avx2)) return x_f16 ? axpy_f16_avx2 : axpy_f32_avx2;
#else
    (void)isa;
#endif
    return x_f16 ? axpy_f16_scalar : axpy_f32_scalar;
}

}  // namespace wb::cpu
