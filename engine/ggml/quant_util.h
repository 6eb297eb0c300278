#pragma once
// Helpers shared by the quants_*.cpp files (not part of the engine's API).

#include <cstdint>
#include <cstring>

#include "ggml/fp16.h"

namespace wb::ggml::detail {

/// Little-endian field reads/writes at any alignment.
inline uint16_t load_u16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline float load_f16(const uint8_t* p) {
    return fp16_to_fp32(load_u16(p));
}
inline void store_u16(uint8_t* p, uint16_t v) {
    std::memcpy(p, &v, 2);
}
inline void store_u32(uint8_t* p, uint32_t v) {
    std::memcpy(p, &v, 4);
}
inline void store_f16(uint8_t* p, float v) {
    store_u16(p, fp32_to_fp16(v));
}

/// ggml's nearest_int: round to nearest, ties to even, by adding 1.5 * 2^23
/// and reading the low mantissa bits (ggml-quants.c). Valid for
/// |v| <= 4194303.
inline int nearest_int(float v) {
    const float t = v + 12582912.0f;
    int32_t i;
    std::memcpy(&i, &t, sizeof i);
    return (i & 0x007FFFFF) - 0x00400000;
}

}  // namespace wb::ggml::detail
