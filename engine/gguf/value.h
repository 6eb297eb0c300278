#pragma once
// A GGUF metadata value: one of the 13 value types of the GGUF spec
// (ggml/docs/gguf.md, `gguf_metadata_value_type`), arrays included.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wb::gguf {

/// GGUF metadata value types, ids as in the spec.
enum class ValueType : uint32_t {
    Uint8 = 0,
    Int8 = 1,
    Uint16 = 2,
    Int16 = 3,
    Uint32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    Uint64 = 10,
    Int64 = 11,
    Float64 = 12,
};

/// Spec name of a value type ("uint32", "string", ...), "type#N" if unknown.
std::string value_type_name(uint32_t id);

/// One metadata value. Integers of every width are kept in `i` (signed) or
/// `u` (unsigned) so callers can read any integer key without caring which
/// width the writer chose; floats in `f`. Arrays are stored by element kind
/// in compact vectors (a 32000-entry score array is 32000 doubles, not 32000
/// Values); only arrays of arrays use `array_nested`.
struct Value {
    ValueType type = ValueType::Uint8;
    uint64_t u = 0;     ///< Uint8/16/32/64 and Bool (0/1)
    int64_t i = 0;      ///< Int8/16/32/64
    double f = 0.0;     ///< Float32/64
    std::string str;    ///< String

    ValueType array_type = ValueType::Uint8;  ///< element type when type == Array
    std::vector<uint64_t> array_u;            ///< elements of unsigned-int and bool arrays
    std::vector<int64_t> array_i;             ///< elements of signed-int arrays
    std::vector<double> array_f;              ///< elements of float arrays
    std::vector<std::string> array_str;       ///< elements of string arrays
    std::vector<Value> array_nested;          ///< elements of arrays of arrays

    /// Number of elements of an array value (0 for scalars).
    size_t array_size() const;

    bool is_integer() const;
    bool is_float() const { return type == ValueType::Float32 || type == ValueType::Float64; }

    /// The value as a signed integer if it is an integer type whose value
    /// fits int64, else nullopt.
    std::optional<int64_t> as_int() const;
    /// The value as a double if it is an integer or float type, else nullopt.
    std::optional<double> as_double() const;

    /// Short human-readable rendering (arrays: element type, length and the
    /// first few elements), for `workbench-cli info`.
    std::string to_display(size_t max_items = 8) const;
};

}  // namespace wb::gguf
