#include "ggml/fp16.h"

#include <bit>
#include <cstring>

namespace wb::ggml {

float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;  // +-0
        } else {
            // Subnormal half: normalise into a float exponent.
            int e = -1;
            do {
                ++e;
                mant <<= 1;
            } while ((mant & 0x400u) == 0);
            mant &= 0x3FFu;
            bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13);
        }
    } else if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (mant << 13);  // inf or NaN (payload kept)
    } else {
        bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
    }
    return std::bit_cast<float>(bits);
}

uint16_t fp32_to_fp16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t abs = x & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u) {  // inf or NaN
        return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477FF000u) {  // rounds to >= 65520: overflow to inf
        return static_cast<uint16_t>(sign | 0x7C00u);
    }
    if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or 0
        if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal (2^-25)
        const uint32_t e = abs >> 23;
        const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
        const uint32_t shift = 126u - e;  // 14 + (127 - e) - 1 ... gives mantissa bits of the subnormal
        // value = m * 2^(e-150); subnormal half unit = 2^-24 -> q = m >> (126 - e)
        uint32_t q = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return static_cast<uint16_t>(sign | q);
    }
    // Normal: rebias exponent, round mantissa from 23 to 10 bits (ties to even).
    uint32_t h = ((abs >> 13) - ((127u - 15u) << 10));
    const uint32_t rem = abs & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // carry may bump the exponent: correct
    return static_cast<uint16_t>(sign | h);
}

float bf16_to_fp32(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t fp32_to_bf16(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 64u);  // quiet NaN
    x += 0x7FFFu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

}  // namespace wb::ggml
