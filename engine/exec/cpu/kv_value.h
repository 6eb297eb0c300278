#pragma once
// One value of a KV cache row stored as f32 or IEEE half (the KvType), for
// the portable attention kernels (axpy.cpp, attn_scores.cpp).

#include <cstdint>
#include <cstring>

#include "ggml/fp16.h"

namespace wb::cpu {

/// Value i of a row of f16 (kF16) or f32 values at x (any alignment).
template <bool kF16>
float kv_value_at(const uint8_t* x, int64_t i) noexcept {
    if (kF16) {
        uint16_t h16;
        std::memcpy(&h16, x + 2 * i, 2);
        return ggml::fp16_to_fp32(h16);
    }
    float v;
    std::memcpy(&v, x + 4 * i, 4);
    return v;
}

}  // namespace wb::cpu
