#include "gguf/value.h"

#include <array>
#include <cstdio>
#include <limits>

namespace wb::gguf {

std::string value_type_name(uint32_t id) {
    static constexpr std::array<const char*, 13> kNames = {
        "uint8", "int8",  "uint16", "int16",  "uint32", "int32",  "float32",
        "bool",  "string", "array", "uint64", "int64", "float64"};
    return id < kNames.size() ? kNames[id] : "type#" + std::to_string(id);
}

size_t Value::array_size() const {
    if (type != ValueType::Array) return 0;
    return array_u.size() + array_i.size() + array_f.size() + array_str.size() +
           array_nested.size();
}

bool Value::is_integer() const {
    switch (type) {
        case ValueType::Uint8:
        case ValueType::Int8:
        case ValueType::Uint16:
        case ValueType::Int16:
        case ValueType::Uint32:
        case ValueType::Int32:
        case ValueType::Uint64:
        case ValueType::Int64:
            return true;
        default:
            return false;
    }
}

std::optional<int64_t> Value::as_int() const {
    switch (type) {
        case ValueType::Uint8:
        case ValueType::Uint16:
        case ValueType::Uint32:
        case ValueType::Uint64:
            if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
            return static_cast<int64_t>(u);
        case ValueType::Int8:
        case ValueType::Int16:
        case ValueType::Int32:
        case ValueType::Int64:
            return i;
        default:
            return std::nullopt;
    }
}

std::optional<double> Value::as_double() const {
    if (is_float()) return f;
    if (type == ValueType::Int8 || type == ValueType::Int16 || type == ValueType::Int32 ||
        type == ValueType::Int64)
        return static_cast<double>(i);
    if (is_integer()) return static_cast<double>(u);
    return std::nullopt;
}

std::string Value::to_display(size_t max_items) const {
    switch (type) {
        case ValueType::String: {
            std::string s = str.size() > 60 ? str.substr(0, 57) + "..." : str;
            for (char& c : s)
                if (c == '\n' || c == '\r' || c == '\t') c = ' ';
            // Built by append: GCC 12 at -O3 gives a false -Wrestrict on "lit" + str.
            std::string quoted;
            quoted.reserve(s.size() + 2);
            quoted.push_back('"');
            quoted.append(s);
            quoted.push_back('"');
            return quoted;
        }
        case ValueType::Bool:
            return u ? "true" : "false";
        case ValueType::Float32:
        case ValueType::Float64: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.9g", f);
            return buf;
        }
        case ValueType::Array: {
            const size_t n = array_size();
            std::string out = "[";
            out.append(value_type_name(static_cast<uint32_t>(array_type)));
            out.append(" x ").append(std::to_string(n)).append("]");
            if (n == 0) return out;
            out += " {";
            for (size_t k = 0; k < n && k < max_items; ++k) {
                if (k) out += ", ";
                Value e;  // render one element through the scalar path
                e.type = array_type;
                if (!array_u.empty()) e.u = array_u[k];
                if (!array_i.empty()) e.i = array_i[k];
                if (!array_f.empty()) e.f = array_f[k];
                if (!array_str.empty()) e.str = array_str[k];
                out += array_nested.empty() ? e.to_display(max_items)
                                            : array_nested[k].to_display(max_items);
            }
            if (n > max_items) out += ", ...";
            return out + "}";
        }
        default:
            if (auto v = as_int()) return std::to_string(*v);
            return std::to_string(u);
    }
}

}  // namespace wb::gguf
