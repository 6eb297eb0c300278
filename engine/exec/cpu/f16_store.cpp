#include "exec/cpu/f16_store.h"

#include <cstring>

#include "ggml/fp16.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WB_F16_STORE_AVX2 1
#endif

namespace wb::cpu {

namespace {

void store_scalar(const float* x, uint8_t* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = ggml::fp32_to_fp16(x[i]);
        std::memcpy(out + 2 * i, &h, 2);
    }
}

#ifdef WB_F16_STORE_AVX2
__attribute__((target("avx2,f16c"))) void store_avx2(const float* x, uint8_t* out, int64_t n) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 qnan = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000));
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        // vcvtps2ph keeps a NaN's top payload bits; the portable rounding
        // (and ggml's) gives sign | 0x7E00: drop the payload first.
        const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        v = _mm256_blendv_ps(v, _mm256_or_ps(_mm256_and_ps(v, sign), qnan), nan);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i),
                         _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    store_scalar(x + i, out + 2 * i, n - i);
}
#endif

}  // namespace

F16StoreFn f16_store_kernel(Isa isa) noexcept {
#ifdef WB_F16_STORE_AVX2
    if (uses_avx2(isa) && isa_available(Isa::Avx2)) return store_avx2;
#else
    (void)isa;
#endif
    return store_scalar;
}

}  // namespace wb::cpu
