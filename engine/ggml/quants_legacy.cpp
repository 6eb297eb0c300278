// The 32-value block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and IQ4_NL
// (ggml-quants.c: dequantize_row_<type>, quantize_row_<type>_ref, and
// quantize_iq4_nl, which llama-quantize uses for IQ4_NL).
// Compiled with -ffp-contract=off (see quants.h).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ggml/blocks.h"
#include "ggml/iq4nl.h"
#include "ggml/quant_util.h"
#include "ggml/quants.h"

namespace wb::ggml {

using namespace detail;

void dequantize_row_Q4_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / kQK; ++i, b += sizeof(BlockQ4_0), dst += kQK) {
        const float d = load_f16(b);
        for (int j = 0; j < kQK / 2; ++j) {
            const int x0 = (b[2 + j] & 0x0F) - 8;
            const int x1 = (b[2 + j] >> 4) - 8;
            dst[j] = static_cast<float>(x0) * d;
            dst[j + kQK / 2] = static_cast<float>(x1) * d;
        }
    }
}

// d = max / -8 where max is the value of largest |x| (first on a tie, sign
// kept); q = min(15, (int8)(x * id + 8.5f)), the multiply and the add
// rounded separately.
void quantize_row_Q4_0(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, b += sizeof(BlockQ4_0), x += kQK) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(b, d);
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[j + kQK / 2] * id;
            const auto q0 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x0 + 8.5f)));
            const auto q1 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x1 + 8.5f)));
            b[2 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void dequantize_row_Q8_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / kQK; ++i, b += sizeof(BlockQ8_0), dst += kQK) {
        const float d = load_f16(b);
        for (int j = 0; j < kQK; ++j)
            dst[j] = static_cast<float>(static_cast<int8_t>(b[2 + j])) * d;
    }
}

// d = amax / 127, q = roundf(x * id) (half away from zero).
void quantize_row_Q8_0(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, b += sizeof(BlockQ8_0), x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(b, d);
        for (int j = 0; j < kQK; ++j) {
            const float x0 = x[j] * id;
            b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(std::round(x0)));
        }
    }
}

}  // namespace wb::ggml

namespace wb::ggml {

using namespace detail;

// --- Q4_1 (block_q4_1: f16 d, f16 m, 16 bytes of nibbles; x = q * d + m) ---

void dequantize_row_Q4_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / kQK; ++i, b += 20, dst += kQK) {
        const float d = load_f16(b), m = load_f16(b + 2);
        for (int j = 0; j < kQK / 2; ++j) {
            const int x0 = b[4 + j] & 0x0F;
            const int x1 = b[4 + j] >> 4;
            dst[j] = static_cast<float>(x0) * d + m;
            dst[j + kQK / 2] = static_cast<float>(x1) * d + m;
        }
    }
}

// d = (max - min) / 15, m = min; q = min(15, (int8)((x - min) * id + 0.5f)).
void quantize_row_Q4_1(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, b += 20, x += kQK) {
        float min = std::numeric_limits<float>::max(), max = -std::numeric_limits<float>::max();
        for (int j = 0; j < kQK; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(b, d);
        store_f16(b + 2, min);
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[j + kQK / 2] - min) * id;
            const auto q0 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x0 + 0.5f)));
            const auto q1 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x1 + 0.5f)));
            b[4 + j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

// --- Q5_0 (block_q5_0: f16 d, u32 qh (bit j = 5th bit of value j), 16 bytes
// of low nibbles; x = d * (q - 16)) ---

void dequantize_row_Q5_0(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / kQK; ++i, b += 22, dst += kQK) {
        const float d = load_f16(b);
        const uint32_t qh = load_u32(b + 2);
        for (int j = 0; j < kQK / 2; ++j) {
            const uint32_t h0 = ((qh >> j) << 4) & 0x10u;
            const uint32_t h1 = (qh >> (j + 12)) & 0x10u;
            const int x0 = static_cast<int>((b[6 + j] & 0x0Fu) | h0) - 16;
            const int x1 = static_cast<int>((b[6 + j] >> 4) | h1) - 16;
            dst[j] = static_cast<float>(x0) * d;
            dst[j + kQK / 2] = static_cast<float>(x1) * d;
        }
    }
}

// d = max / -16 (max: the value of largest |x|, sign kept);
// q = min(31, (int8)(x * id + 16.5f)).
void quantize_row_Q5_0(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, b += 22, x += kQK) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            if (amax < std::fabs(x[j])) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        const float d = max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(b, d);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = x[j] * id;
            const float x1 = x[j + kQK / 2] * id;
            const auto q0 =
                static_cast<uint8_t>(std::min<int>(31, static_cast<int8_t>(x0 + 16.5f)));
            const auto q1 =
                static_cast<uint8_t>(std::min<int>(31, static_cast<int8_t>(x1 + 16.5f)));
            b[6 + j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= ((q0 & 0x10u) >> 4) << j;
            qh |= ((q1 & 0x10u) >> 4) << (j + kQK / 2);
        }
        store_u32(b + 2, qh);
    }
}

// --- Q5_1 (block_q5_1: f16 d, f16 m, u32 qh, 16 bytes; x = q * d + m) ---

void dequantize_row_Q5_1(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / kQK; ++i, b += 24, dst += kQK) {
        const float d = load_f16(b), m = load_f16(b + 2);
        const uint32_t qh = load_u32(b + 4);
        for (int j = 0; j < kQK / 2; ++j) {
            const uint32_t h0 = ((qh >> j) << 4) & 0x10u;
            const uint32_t h1 = (qh >> (j + 12)) & 0x10u;
            const int x0 = static_cast<int>((b[8 + j] & 0x0Fu) | h0);
            const int x1 = static_cast<int>((b[8 + j] >> 4) | h1);
            dst[j] = static_cast<float>(x0) * d + m;
            dst[j + kQK / 2] = static_cast<float>(x1) * d + m;
        }
    }
}

// d = (max - min) / 31, m = min; q = (uint8)((x - min) * id + 0.5f).
void quantize_row_Q5_1(const float* x, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, b += 24, x += kQK) {
        float min = std::numeric_limits<float>::max(), max = -std::numeric_limits<float>::max();
        for (int j = 0; j < kQK; ++j) {
            if (x[j] < min) min = x[j];
            if (x[j] > max) max = x[j];
        }
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        store_f16(b, d);
        store_f16(b + 2, min);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const float x0 = (x[j] - min) * id;
            const float x1 = (x[j + kQK / 2] - min) * id;
            const auto q0 = static_cast<uint8_t>(x0 + 0.5f);
            const auto q1 = static_cast<uint8_t>(x1 + 0.5f);
            b[8 + j] = static_cast<uint8_t>((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= ((q0 & 0x10u) >> 4) << j;
            qh |= ((q1 & 0x10u) >> 4) << (j + kQK / 2);
        }
        store_u32(b + 4, qh);
    }
}

// --- IQ4_NL (block_iq4_nl: f16 d, 16 bytes of nibbles indexing a fixed
// non-linear table; x = d * kIq4nlValues[q]) ---

namespace {

// Index of the table value nearest x (the upper one on a tie), as ggml's
// best_index_int8: level i is chosen once x reaches the midpoint of values
// i-1 and i (compared as 2x against their integer sum, both exact).
int best_index_iq4nl(float x) {
    const float x2 = x + x;
    int idx = 0;
    for (int step = 8; step > 0; step >>= 1) {
        const int j = idx + step;
        idx = (x2 >= static_cast<float>(kIq4nlValues[j - 1] + kIq4nlValues[j])) ? j : idx;
    }
    return idx;
}

}  // namespace

void dequantize_row_IQ4_NL(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n / kQK; ++i, b += 18, dst += kQK) {
        const float d = load_f16(b);
        for (int j = 0; j < kQK / 2; ++j) {
            dst[j] = d * static_cast<float>(kIq4nlValues[b[2 + j] & 0x0F]);
            dst[j + kQK / 2] = d * static_cast<float>(kIq4nlValues[b[2 + j] >> 4]);
        }
    }
}

// ggml's quantize_iq4_nl without an importance matrix (what llama-quantize
// and ggml_quantize_chunk run): per block weights x^2; a first scale from
// the value of largest |x| against the table's first entry, refined by
// least squares, then 15 trial scales (ntry = 7) keeping the best
// weighted fit; d stored as f16 and the indices chosen with 1/d.
void quantize_row_IQ4_NL(const float* x, void* dst, int64_t n) {
    constexpr int ntry = 7;
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n / kQK; ++i, b += 18, x += kQK) {
        float weight[kQK];
        uint8_t L[kQK];
        for (int j = 0; j < kQK; ++j) weight[j] = x[j] * x[j];
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            const float ax = std::fabs(x[j]);
            if (ax > amax) {
                amax = ax;
                max = x[j];
            }
        }
        float d = 0.0f;  // an all-zero block (|x| < GROUP_MAX_EPS) keeps d = 0
        if (amax >= 1e-15f) {
            d = -max / static_cast<float>(kIq4nlValues[0]);
            float id = 1.0f / d;
            float sumqx = 0.0f, sumq2 = 0.0f;
            for (int j = 0; j < kQK; ++j) {
                const float al = id * x[j];
                const int l = best_index_iq4nl(al);
                L[j] = static_cast<uint8_t>(l);
                const float q = static_cast<float>(kIq4nlValues[l]);
                const float w = weight[j];
                sumqx += w * q * x[j];
                sumq2 += w * q * q;
            }
            d = sumq2 > 0.0f ? sumqx / sumq2 : 0.0f;
            float best = d * sumqx;
            for (int itry = -ntry; itry <= ntry; ++itry) {
                id = static_cast<float>(itry + kIq4nlValues[0]) / max;
                sumqx = sumq2 = 0.0f;
                for (int j = 0; j < kQK; ++j) {
                    const float al = id * x[j];
                    const int l = best_index_iq4nl(al);
                    const float q = static_cast<float>(kIq4nlValues[l]);
                    const float w = weight[j];
                    sumqx += w * q * x[j];
                    sumq2 += w * q * q;
                }
                if (sumq2 > 0.0f && sumqx * sumqx > best * sumq2) {
                    d = sumqx / sumq2;
                    best = d * sumqx;
                }
            }
        }
        store_f16(b, d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < kQK; ++j) L[j] = static_cast<uint8_t>(best_index_iq4nl(id * x[j]));
        for (int j = 0; j < kQK / 2; ++j)
            b[2 + j] = static_cast<uint8_t>(L[j] | (L[j + kQK / 2] << 4));
    }
}

}  // namespace wb::ggml
