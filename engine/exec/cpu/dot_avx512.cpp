// The AVX-512 kernels (isa.h: Isa::Avx512), compiled for any x86-64 with
// per-function target attributes and chosen at run time. Only the kernels
// that gain from 512-bit registers are here, as dot_x16 (two adjacent
// interleaved groups, 16 rows a register); every other kernel of the level
// is the AVX-VNNI one (AVX2's on a CPU without AVX-VNNI). Each dot_x16
// computes, lane by lane, the same operations in the same order as the
// 256-bit dot_x8 it stands in for, so the sums are bit for bit the same
// whichever of the two a row goes through (a matrix's odd last group, or
// the thread count moving chunk edges).

#include "exec/cpu/dot.h"
#include "ggml/types.h"

#if defined(__x86_64__) || defined(__i386__)

// GCC 12 warns inside _mm512_cvtph_ps, whose pass-through operand is
// _mm512_undefined_ps() (a false positive: no lane of it is ever read).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#define WB_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

namespace wb::cpu::detail {

namespace {

// F16, two groups (cpu/interleave.h; each 8 rows x n values, 16 n bytes):
// value i of the 16 rows as 16 floats (group 0's 8 in the low half) times
// token t's value i broadcast; two accumulators per token as dot_x8_f16 in
// dot_avx2.cpp, summed in its order. Up to 8 tokens a call: one conversion
// of the weights feeds 8 FMAs (16 accumulators of the 32 registers).
template <int NT>
WB_AVX512 void dot_x16_f16_t(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, float* out,
                             size_t os) {
    constexpr int U = 2;
    const uint8_t* g1 = g + 16 * n;  // the next group
    __m512 acc[NT][U];
    const float* x[NT];
    for (int t = 0; t < NT; ++t) {
        x[t] = reinterpret_cast<const float*>(act + t * as);
        for (int u = 0; u < U; ++u) acc[t][u] = _mm512_setzero_ps();
    }
    for (int64_t i = 0; i < n; i += U) {  // n is a multiple of 8
        for (int u = 0; u < U; ++u) {
            const __m256i h = _mm256_inserti128_si256(
                _mm256_castsi128_si256(
                    _mm_loadu_si128(reinterpret_cast<const __m128i*>(g + 16 * (i + u)))),
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(g1 + 16 * (i + u))), 1);
            const __m512 w = _mm512_cvtph_ps(h);
            for (int t = 0; t < NT; ++t)
                acc[t][u] = _mm512_fmadd_ps(w, _mm512_set1_ps(x[t][i + u]), acc[t][u]);
        }
    }
    for (int t = 0; t < NT; ++t) {
        __m512 s = acc[t][0];
        for (int u = 1; u < U; ++u) s = _mm512_add_ps(s, acc[t][u]);
        _mm512_storeu_ps(out + t * os, s);
    }
}

void dot_x16_f16(int64_t n, const uint8_t* g, const uint8_t* act, size_t as, int nt, float* out,
                 size_t os) {
    switch (nt) {
        case 1:
            return dot_x16_f16_t<1>(n, g, act, as, out, os);
        case 2:
            return dot_x16_f16_t<2>(n, g, act, as, out, os);
        case 3:
            return dot_x16_f16_t<3>(n, g, act, as, out, os);
        case 4:
            return dot_x16_f16_t<4>(n, g, act, as, out, os);
        case 5:
            return dot_x16_f16_t<5>(n, g, act, as, out, os);
        case 6:
            return dot_x16_f16_t<6>(n, g, act, as, out, os);
        case 7:
            return dot_x16_f16_t<7>(n, g, act, as, out, os);
        default:
            return dot_x16_f16_t<8>(n, g, act, as, out, os);
    }
}

/// The 256-bit table this level builds on.
const WeightKernel* base_kernel(uint32_t type) noexcept {
    return isa_available(Isa::AvxVnni) ? avxvnni_kernel(type) : avx2_kernel(type);
}

}  // namespace

const WeightKernel* avx512_kernel(uint32_t type) noexcept {
    const WeightKernel* base = base_kernel(type);
    if (base == nullptr) return nullptr;
    switch (static_cast<ggml::Type>(type)) {
        case ggml::Type::F16: {
            static const WeightKernel k{base->act, base->dot, base->dot_x8, dot_x16_f16};
            return &k;
        }
        default:
            return base;
    }
}

}  // namespace wb::cpu::detail

#pragma GCC diagnostic pop

#else

namespace wb::cpu::detail {
const WeightKernel* avx512_kernel(uint32_t) noexcept {
    return nullptr;
}
}  // namespace wb::cpu::detail

#endif
