#include "exec/cpu/axpy.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "exec/cpu/kv_value.h"

#if defined(__x86_64__) || defined(__i386__)
// GCC 12 warns inside _mm512_cvtph_ps, whose pass-through operand is
// _mm512_undefined_ps() (a false positive: no lane of it is ever read).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define WB_AXPY_AVX2 1
#endif

namespace wb::cpu {

namespace {

// The row X_j of the call's rows.
inline const uint8_t* row_at(const uint8_t* x, size_t xs, const uint32_t* rows, uint32_t j) {
    return x + size_t{rows != nullptr ? rows[j] : j} * xs;
}

template <bool kF16>
void axpy_scalar(int64_t n, const float* a, size_t as, int n_y, const uint8_t* x, size_t xs,
                 const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    for (uint32_t j = 0; j < n_rows; ++j) {
        const uint8_t* xj = row_at(x, xs, rows, j);
        for (int64_t i = 0; i < n; ++i) {
            const float v = kv_value_at<kF16>(xj, i);
            for (int h = 0; h < n_y; ++h) y[h * ys + i] += a[h * as + j] * v;
        }
    }
}

#ifdef WB_AXPY_AVX2
#define WB_AVX2 __attribute__((target("avx2,fma,f16c")))

template <bool kF16>
WB_AVX2 inline __m256 load8(const uint8_t* x, int64_t i) {
    return kF16 ? _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 2 * i)))
                : _mm256_loadu_ps(reinterpret_cast<const float*>(x + 4 * i));
}

// Columns [i, i + 8 * kW) of NH heads' outputs in NH * kW registers for all
// the rows: each row's kW * 8 values converted once, then one FMA per head
// and register. kW = 2 leaves room for 4 heads, kW = 1 for 8, in AVX2's 16
// registers.
template <bool kF16, int kW, int NH>
WB_AVX2 void axpy_block(int64_t i, const float* a, size_t as, const uint8_t* x, size_t xs,
                        const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    __m256 acc[NH][kW];
    for (int h = 0; h < NH; ++h)
        for (int w = 0; w < kW; ++w) acc[h][w] = _mm256_loadu_ps(y + h * ys + i + 8 * w);
    for (uint32_t j = 0; j < n_rows; ++j) {
        const uint8_t* xj = row_at(x, xs, rows, j);
        __m256 v[kW];
        for (int w = 0; w < kW; ++w) v[w] = load8<kF16>(xj, i + 8 * w);
        for (int h = 0; h < NH; ++h) {
            const __m256 ah = _mm256_broadcast_ss(a + h * as + j);
            for (int w = 0; w < kW; ++w) acc[h][w] = _mm256_fmadd_ps(ah, v[w], acc[h][w]);
        }
    }
    for (int h = 0; h < NH; ++h)
        for (int w = 0; w < kW; ++w) _mm256_storeu_ps(y + h * ys + i + 8 * w, acc[h][w]);
}

template <bool kF16, int kW, int kMaxH>
WB_AVX2 void axpy_heads(int64_t i, const float* a, size_t as, int n_y, const uint8_t* x, size_t xs,
                        const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    for (int h = 0; h < n_y; h += kMaxH) {
        const float* ah = a + h * as;
        float* yh = y + h * ys;
        switch (std::min(kMaxH, n_y - h)) {
#define WB_CASE(k)                                                                                 \
    case k:                                                                                        \
        if constexpr (k <= kMaxH) axpy_block<kF16, kW, k>(i, ah, as, x, xs, rows, n_rows, yh, ys); \
        break;
            WB_CASE(1)
            WB_CASE(2)
            WB_CASE(3)
            WB_CASE(4)
            WB_CASE(5)
            WB_CASE(6)
            WB_CASE(7)
            WB_CASE(8)
#undef WB_CASE
            default:
                break;
        }
    }
}

template <bool kF16>
WB_AVX2 void axpy_avx2(int64_t n, const float* a, size_t as, int n_y, const uint8_t* x, size_t xs,
                       const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) axpy_heads<kF16, 2, 4>(i, a, as, n_y, x, xs, rows, n_rows, y, ys);
    for (; i + 8 <= n; i += 8) axpy_heads<kF16, 1, 8>(i, a, as, n_y, x, xs, rows, n_rows, y, ys);
    for (; i < n; ++i) {
        for (uint32_t j = 0; j < n_rows; ++j) {
            const uint8_t* xj = row_at(x, xs, rows, j);
            float v;
            if (kF16) {
                uint16_t h16;
                std::memcpy(&h16, xj + 2 * i, 2);
                v = _cvtsh_ss(h16);
            } else {
                std::memcpy(&v, xj + 4 * i, 4);
            }
            for (int h = 0; h < n_y; ++h) y[h * ys + i] = std::fma(a[h * as + j], v, y[h * ys + i]);
        }
    }
}

#define WB_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma,f16c")))

template <bool kF16>
WB_AVX512 inline __m512 load16(const uint8_t* x, int64_t i) {
    return kF16 ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * i)))
                : _mm512_loadu_ps(reinterpret_cast<const float*>(x + 4 * i));
}

// axpy_block with 16 columns a register: NH (up to 8) heads x kW (1, 2)
// registers, 16 of the 32 for kW = 2. Each head's weight is broadcast once
// a row and feeds kW FMAs. The same FMAs in the same order as the AVX2
// block's, so the same bits.
template <bool kF16, int kW, int NH>
WB_AVX512 void axpy_block16(int64_t i, const float* a, size_t as, const uint8_t* x, size_t xs,
                            const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    __m512 acc[NH][kW];
    for (int h = 0; h < NH; ++h)
        for (int w = 0; w < kW; ++w) acc[h][w] = _mm512_loadu_ps(y + h * ys + i + 16 * w);
    for (uint32_t j = 0; j < n_rows; ++j) {
        const uint8_t* xj = row_at(x, xs, rows, j);
        __m512 v[kW];
        for (int w = 0; w < kW; ++w) v[w] = load16<kF16>(xj, i + 16 * w);
        for (int h = 0; h < NH; ++h) {
            const __m512 ah = _mm512_set1_ps(a[h * as + j]);
            for (int w = 0; w < kW; ++w) acc[h][w] = _mm512_fmadd_ps(ah, v[w], acc[h][w]);
        }
    }
    for (int h = 0; h < NH; ++h)
        for (int w = 0; w < kW; ++w) _mm512_storeu_ps(y + h * ys + i + 16 * w, acc[h][w]);
}

template <bool kF16, int kW>
WB_AVX512 void axpy_heads16(int64_t i, const float* a, size_t as, int n_y, const uint8_t* x,
                            size_t xs, const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    switch (n_y) {  // 1..kMaxAxpyOutputs = 8
#define WB_CASE(k)                                                       \
    case k:                                                              \
        axpy_block16<kF16, kW, k>(i, a, as, x, xs, rows, n_rows, y, ys); \
        break;
        WB_CASE(1)
        WB_CASE(2)
        WB_CASE(3)
        WB_CASE(4)
        WB_CASE(5)
        WB_CASE(6)
        WB_CASE(7)
        WB_CASE(8)
#undef WB_CASE
        default:
            break;
    }
}

// Columns in blocks of 32, then 16, all the heads a pass; the rest (n not
// a multiple of 16) through the AVX2 kernel.
template <bool kF16>
WB_AVX512 void axpy_avx512(int64_t n, const float* a, size_t as, int n_y, const uint8_t* x,
                           size_t xs, const uint32_t* rows, uint32_t n_rows, float* y, size_t ys) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) axpy_heads16<kF16, 2>(i, a, as, n_y, x, xs, rows, n_rows, y, ys);
    for (; i + 16 <= n; i += 16) axpy_heads16<kF16, 1>(i, a, as, n_y, x, xs, rows, n_rows, y, ys);
    if (i < n)
        axpy_avx2<kF16>(n - i, a, as, n_y, x + i * (kF16 ? 2 : 4), xs, rows, n_rows, y + i, ys);
}

#undef WB_AVX512
#undef WB_AVX2
#endif

}  // namespace

AxpyFn axpy_kernel(bool x_f16, Isa isa) noexcept {
#ifdef WB_AXPY_AVX2
    if (isa == Isa::Avx512 && isa_available(Isa::Avx512))
        return x_f16 ? axpy_avx512<true> : axpy_avx512<false>;
    if (uses_avx2(isa) && isa_available(Isa::Avx2))
        return x_f16 ? axpy_avx2<true> : axpy_avx2<false>;
#else
    (void)isa;
#endif
    return x_f16 ? axpy_scalar<true> : axpy_scalar<false>;
}

}  // namespace wb::cpu

#if defined(WB_AXPY_AVX2) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
