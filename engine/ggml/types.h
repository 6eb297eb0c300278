#pragma once
// ggml tensor types: ids, block sizes and block layouts exactly as ggml
// defines them (ggml/include/ggml.h `enum ggml_type`, ggml-common.h block
// structs), plus CPU dequantization to f32, the reference every shader and
// the quantizer are checked against.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wb::ggml {

/// ggml type ids as stored in GGUF tensor infos (uint32). Only the types the
/// engine computes with are named; every id ggml knows has traits (see
/// type_traits) so files with other types parse and report them by name.
enum class Type : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q8_0 = 8,
    BF16 = 30,
};

/// Values per Q4_0 / Q8_0 block (ggml QK4_0 / QK8_0).
inline constexpr int kQK = 32;

/// ggml block_q8_0: 32 int8 quants sharing one f16 scale.
/// x[i] = d * qs[i]. 34 bytes, no padding (ggml-common.h).
struct BlockQ8_0 {
    uint16_t d;       // scale, IEEE binary16 bits
    int8_t qs[kQK];   // quants
};
static_assert(sizeof(BlockQ8_0) == 34, "ggml block_q8_0 is 34 bytes");

/// ggml block_q4_0: 32 4-bit quants sharing one f16 scale. Byte j holds
/// element j in its low nibble and element j+16 in its high nibble;
/// x = d * (nibble - 8). 18 bytes (ggml-common.h).
struct BlockQ4_0 {
    uint16_t d;            // scale, IEEE binary16 bits
    uint8_t qs[kQK / 2];   // nibbles
};
static_assert(sizeof(BlockQ4_0) == 18, "ggml block_q4_0 is 18 bytes");

/// Size facts of one ggml type.
struct TypeTraits {
    const char* name;     ///< ggml's name, e.g. "q4_0"
    uint32_t block_size;  ///< values per block (1 for plain types)
    uint32_t type_size;   ///< bytes per block
    bool computable;      ///< the engine can dequantize / compute with it
};

/// Traits of type id `id`, or nullptr when ggml has no such type (an id
/// removed from ggml, or past the last one). Never throws.
const TypeTraits* type_traits(uint32_t id) noexcept;

/// Name of type id `id` ("f32", "q4_k", ...) or "type#<id>" if unknown.
std::string type_name(uint32_t id);

/// Bytes of one row of `n` values of type `t`. Throws std::invalid_argument
/// when `n` is not a multiple of the block size or the id is unknown.
size_t row_bytes(uint32_t type_id, uint64_t n);

/// Thrown when a tensor's type exists in ggml but the engine does not
/// compute with it. what(): "unsupported tensor type T in tensor NAME".
class UnsupportedType : public std::runtime_error {
public:
    UnsupportedType(uint32_t type_id, std::string_view tensor_name);
};

/// Dequantize `n` values (n a multiple of the type's block size) from `src`
/// in ggml layout into `dst[n]` as f32. Supports F32, F16, BF16, Q8_0, Q4_0.
/// Throws UnsupportedType (naming `tensor_name`) for other types and
/// std::invalid_argument for a bad `n`.
void dequantize_row(uint32_t type_id, const void* src, float* dst, uint64_t n,
                    std::string_view tensor_name = "?");

}  // namespace wb::ggml
