#include "exec/cpu/axpy.h"

#include <cmath>
#include <cstring>

#include "ggml/fp16.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WB_AXPY_AVX2 1
#endif

namespace wb::cpu {

namespace {

void axpy_f32_scalar(int64_t n, const float* a, int n_y, const uint8_t* x, float* y, size_t ys) {
    for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, x + 4 * i, 4);
        for (int h = 0; h < n_y; ++h) y[h * ys + i] += a[h] * v;
    }
}

void axpy_f16_scalar(int64_t n, const float* a, int n_y, const uint8_t* x, float* y, size_t ys) {
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h16;
        std::memcpy(&h16, x + 2 * i, 2);
        const float v = ggml::fp16_to_fp32(h16);
        for (int h = 0; h < n_y; ++h) y[h * ys + i] += a[h] * v;
    }
}

#ifdef WB_AXPY_AVX2
#define WB_AVX2 __attribute__((target("avx2,fma,f16c")))

// Eight x values converted once, then one FMA per output head.
template <bool kF16>
WB_AVX2 void axpy_avx2(int64_t n, const float* a, int n_y, const uint8_t* x, float* y, size_t ys) {
    __m256 va[kMaxAxpyOutputs];
    for (int h = 0; h < n_y; ++h) va[h] = _mm256_set1_ps(a[h]);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv =
            kF16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i)))
                 : _mm256_loadu_ps(reinterpret_cast<const float*>(x + 4 * i));
        for (int h = 0; h < n_y; ++h) {
            float* yh = y + h * ys + i;
            _mm256_storeu_ps(yh, _mm256_fmadd_ps(va[h], xv, _mm256_loadu_ps(yh)));
        }
    }
    for (; i < n; ++i) {
        float v;
        if (kF16) {
            uint16_t h16;
            std::memcpy(&h16, x + 2 * i, 2);
            v = _cvtsh_ss(h16);
        } else {
            std::memcpy(&v, x + 4 * i, 4);
        }
        for (int h = 0; h < n_y; ++h) y[h * ys + i] = std::fma(a[h], v, y[h * ys + i]);
    }
}

WB_AVX2 void axpy_f32_avx2(int64_t n, const float* a, int n_y, const uint8_t* x, float* y,
                           size_t ys) {
    axpy_avx2<false>(n, a, n_y, x, y, ys);
}

WB_AVX2 void axpy_f16_avx2(int64_t n, const float* a, int n_y, const uint8_t* x, float* y,
                           size_t ys) {
    axpy_avx2<true>(n, a, n_y, x, y, ys);
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
