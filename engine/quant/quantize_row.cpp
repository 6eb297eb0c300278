#include "quant/quantize_row.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ggml/fp16.h"

// The unfused rounding of x*id + 8.5f is part of the reference behaviour (see
// the header); CMake compiles this file with -ffp-contract=off, and the two
// steps are also stored in separate named floats below.

namespace wb::quant {

namespace {

void check_n(int64_t n, const char* what) {
    if (n < 0 || n % ggml::kQK != 0) {
        throw std::invalid_argument(std::string(what) + ": row length " + std::to_string(n) +
                                    " is not a multiple of " + std::to_string(ggml::kQK));
    }
}

}  // namespace

void quantize_row_q8_0(const float* x, ggml::BlockQ8_0* y, int64_t n) {
    check_n(n, "quantize_row_q8_0");
    const int64_t nb = n / ggml::kQK;
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * ggml::kQK;
        float amax = 0.0f;  // absolute max of the block
        for (int j = 0; j < ggml::kQK; ++j) amax = std::max(amax, std::fabs(xb[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = ggml::fp32_to_fp16(d);
        for (int j = 0; j < ggml::kQK; ++j) {
            const float x0 = xb[j] * id;
            y[b].qs[j] = static_cast<int8_t>(std::round(x0));  // roundf: half away from zero
        }
    }
}

void quantize_row_q4_0(const float* x, ggml::BlockQ4_0* y, int64_t n) {
    check_n(n, "quantize_row_q4_0");
    const int64_t nb = n / ggml::kQK;
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * ggml::kQK;
        float amax = 0.0f;  // largest |x|
        float max = 0.0f;   // the element holding it, sign kept (first on a tie)
        for (int j = 0; j < ggml::kQK; ++j) {
            if (amax < std::fabs(xb[j])) {
                amax = std::fabs(xb[j]);
                max = xb[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = ggml::fp32_to_fp16(d);
        for (int j = 0; j < ggml::kQK / 2; ++j) {
            // Two separately rounded steps, as unfused C evaluates them.
            const float s0 = xb[j] * id;
            const float s1 = xb[j + ggml::kQK / 2] * id;
            const float t0 = s0 + 8.5f;
            const float t1 = s1 + 8.5f;
            const uint8_t q0 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(t0)));
            const uint8_t q1 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(t1)));
            y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

void quantize_row_f16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = ggml::fp32_to_fp16(x[i]);
}

void quantize_row(uint32_t type, const float* x, void* dst, int64_t n) {
    switch (static_cast<ggml::Type>(type)) {
        case ggml::Type::F32:
            std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float));
            return;
        case ggml::Type::F16:
            quantize_row_f16(x, static_cast<uint16_t*>(dst), n);
            return;
        case ggml::Type::Q8_0:
            quantize_row_q8_0(x, static_cast<ggml::BlockQ8_0*>(dst), n);
            return;
        case ggml::Type::Q4_0:
            quantize_row_q4_0(x, static_cast<ggml::BlockQ4_0*>(dst), n);
            return;
        default:
            throw ggml::UnsupportedType(type, "(quantizer target)");
    }
}

}  // namespace wb::quant
