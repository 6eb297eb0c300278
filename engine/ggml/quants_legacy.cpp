// The 32-value block types Q4_0 and Q8_0 (ggml-quants.c:
// dequantize_row_<type> and quantize_row_<type>_ref).
// Compiled with -ffp-contract=off (see quants.h).

#include <algorithm>
#include <cmath>

#include "ggml/blocks.h"
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
