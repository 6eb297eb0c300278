// F32, F16 and BF16 rows: copies and exact conversions (ggml_fp16_to_fp32_row,
// ggml_fp32_to_fp16_row, ggml_bf16_to_fp32_row, ggml_fp32_to_bf16_row).

#include <cstring>

#include "ggml/fp16.h"
#include "ggml/quants.h"

namespace wb::ggml {

void dequantize_row_F32(const void* src, float* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantize_row_F32(const float* src, void* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantize_row_F16(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, b + 2 * i, 2);
        dst[i] = fp16_to_fp32(h);
    }
}

void quantize_row_F16(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_fp16(src[i]);
        std::memcpy(b + 2 * i, &h, 2);
    }
}

void dequantize_row_BF16(const void* src, float* dst, int64_t n) {
    const auto* b = static_cast<const uint8_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, b + 2 * i, 2);
        dst[i] = bf16_to_fp32(h);
    }
}

void quantize_row_BF16(const float* src, void* dst, int64_t n) {
    auto* b = static_cast<uint8_t*>(dst);
    for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = fp32_to_bf16(src[i]);
        std::memcpy(b + 2 * i, &h, 2);
    }
}

}  // namespace wb::ggml
