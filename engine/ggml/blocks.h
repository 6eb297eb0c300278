#pragma once
// ggml block layouts (ggml-common.h), byte for byte. Fields are read with
// memcpy by the CPU reference (GGUF tensor data is only 32-byte aligned per
// tensor, and the structs are packed by construction: every member is a
// byte array or a uint16_t at an even offset).

#include <cstdint>

namespace wb::ggml {

/// Values per block of the 32-value types (ggml QK4_0, QK8_0, ...).
inline constexpr int kQK = 32;

/// ggml block_q8_0: 32 int8 quants sharing one f16 scale.
/// x[i] = d * qs[i]. 34 bytes.
struct BlockQ8_0 {
    uint16_t d;      // scale, IEEE binary16 bits
    int8_t qs[kQK];  // quants
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml block_q8_0 is 34 bytes");

/// ggml block_q4_0: 32 4-bit quants sharing one f16 scale. Byte j holds
/// element j in its low nibble and element j+16 in its high nibble;
/// x = d * (nibble - 8). 18 bytes.
struct BlockQ4_0 {
    uint16_t d;           // scale, IEEE binary16 bits
    uint8_t qs[kQK / 2];  // nibbles
};
static_assert(sizeof(BlockQ4_0) == 18, "ggml block_q4_0 is 18 bytes");

}  // namespace wb::ggml
