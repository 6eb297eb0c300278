#pragma once
// ggml tensor types: the one type table (ggml/types.def) as C++. Every
// place that needs to know a type (the GGUF reader's size checks, the CPU
// reference, the quantizer, the Vulkan weight upload and shader choice,
// load-time checks, user messages, test loops) reads it from here.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "errors/errors.h"
#include "ggml/blocks.h"

namespace wb::ggml {

/// ggml type ids as stored in GGUF tensor infos (uint32), one name per row
/// of ggml/types.def (computed with or only known).
enum class Type : uint32_t {
#define WB_TYPE(id, NAME, name, block, size, backends) NAME = id,
#define WB_TYPE_KNOWN(id, NAME, name, block, size) NAME = id,
#include "ggml/types.def"
#undef WB_TYPE
#undef WB_TYPE_KNOWN
};

/// Dequantizes `n` values (a multiple of the block size) from `src` (ggml
/// layout, any alignment) into `dst[n]`.
using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);
/// Quantizes `n` floats (a multiple of the block size) into `dst`
/// (row_bytes(type, n) bytes), bit for bit as ggml's reference quantizer.
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);

/// One row of the type table.
struct TypeTraits {
    Type type;
    const char* name;         ///< ggml's name, e.g. "q4_K" (ggml_type_name)
    const char* upper;        ///< the name users read, e.g. "Q4_K"
    uint32_t block_size;      ///< values per block (1 for plain types)
    uint32_t type_size;       ///< bytes per block
    bool computable;          ///< the CPU reference computes with it
    bool vulkan;              ///< the shaders read it (a GLSL decoder exists)
    DequantizeFn dequantize;  ///< CPU reference; nullptr when not computable
    QuantizeFn quantize;      ///< ggml's reference quantizer; nullptr likewise
};

/// Traits of type id `id`, or nullptr when ggml has no such type (an id
/// removed from ggml, or past the last one). Never throws.
const TypeTraits* type_traits(uint32_t id) noexcept;
inline const TypeTraits* type_traits(Type t) noexcept {
    return type_traits(static_cast<uint32_t>(t));
}

/// Every row of the table, in id order.
const std::vector<TypeTraits>& all_types();

/// Which engine part computes: the CPU reference or the Vulkan shaders.
enum class Backend { Cpu, Vulkan };

/// The types `backend` computes with, in id order (test loops, messages).
std::vector<Type> supported_types(Backend backend);
/// "F32, F16, Q4_0, Q8_0, BF16" for `backend`: what messages list.
std::string supported_type_names(Backend backend);

/// ggml's name of type id `id` ("f32", "q4_K", ...) or "type#<id>" if unknown.
std::string type_name(uint32_t id);
/// The upper-case name users read ("F32", "Q4_K") or "type#<id>".
std::string type_upper_name(uint32_t id);
/// The type whose ggml or upper-case name is `name` (case-insensitive), or
/// nullptr.
const TypeTraits* type_by_name(std::string_view name) noexcept;

/// Bytes of one row of `n` values of type `t`. Throws std::invalid_argument
/// when `n` is not a multiple of the block size or the id is unknown.
size_t row_bytes(uint32_t type_id, uint64_t n);

/// Thrown when a tensor's type exists in ggml (or not) but the engine part
/// that needs it does not compute with it. what(): "unsupported tensor
/// type T in tensor NAME (supported: F32, F16, ...)", or "(supported on
/// Vulkan: ...)" when the Vulkan shaders are what lacks the type.
class UnsupportedType : public wb::UnsupportedError {
  public:
    UnsupportedType(uint32_t type_id, std::string_view tensor_name, Backend backend = Backend::Cpu);
    uint32_t type_id() const { return type_id_; }

  private:
    uint32_t type_id_;
};

/// Dequantize `n` values (n a multiple of the type's block size) from `src`
/// in ggml layout into `dst[n]` as f32, with the table's CPU reference.
/// Throws UnsupportedType (naming `tensor_name`) for a type without one and
/// std::invalid_argument for a bad `n`.
void dequantize_row(uint32_t type_id, const void* src, float* dst, uint64_t n,
                    std::string_view tensor_name = "?");

/// Quantize `n` floats into `dst` (row_bytes(type, n) bytes) with ggml's
/// reference quantizer for the type (no importance matrix). Throws as
/// dequantize_row.
void quantize_row(uint32_t type_id, const float* src, void* dst, uint64_t n,
                  std::string_view tensor_name = "?");

}  // namespace wb::ggml
