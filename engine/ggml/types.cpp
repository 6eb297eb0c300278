#include "ggml/types.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "ggml/quants.h"

namespace wb::ggml {
namespace {

constexpr bool kVkCPU = false, kVkCPU_VK = true;  // backends column -> "shaders read it"

const std::vector<TypeTraits>& table() {
    static const std::vector<TypeTraits> t = {
#define WB_TYPE(id, NAME, name, block, size, backends)                                            \
    {Type::NAME,          #name, #NAME, block, size, true, kVk##backends, &dequantize_row_##NAME, \
     &quantize_row_##NAME},
#define WB_TYPE_KNOWN(id, NAME, name, block, size) \
    {Type::NAME, #name, #NAME, block, size, false, false, nullptr, nullptr},
#include "ggml/types.def"
#undef WB_TYPE
#undef WB_TYPE_KNOWN
    };
    return t;
}

// Index by id (ids are small; removed ids map to nullptr).
const std::array<const TypeTraits*, 64>& by_id() {
    static const std::array<const TypeTraits*, 64> a = [] {
        std::array<const TypeTraits*, 64> r{};
        for (const TypeTraits& t : table()) r.at(static_cast<uint32_t>(t.type)) = &t;
        return r;
    }();
    return a;
}

bool runs_on(const TypeTraits& t, Backend b) {
    return b == Backend::Cpu ? t.computable : t.vulkan;
}

void check_n(const TypeTraits& t, uint64_t n, std::string_view what, std::string_view tensor) {
    if (n % t.block_size != 0) {
        throw std::invalid_argument(std::string(what) + " " + std::string(tensor) + ": " +
                                    std::to_string(n) + " values is not a multiple of " + t.upper +
                                    "'s block size " + std::to_string(t.block_size));
    }
}

}  // namespace

const TypeTraits* type_traits(uint32_t id) noexcept {
    return id < by_id().size() ? by_id()[id] : nullptr;
}

const std::vector<TypeTraits>& all_types() {
    return table();
}

std::vector<Type> supported_types(Backend backend) {
    std::vector<Type> out;
    for (const TypeTraits& t : table())
        if (runs_on(t, backend)) out.push_back(t.type);
    return out;
}

std::string supported_type_names(Backend backend) {
    std::string s;
    for (const TypeTraits& t : table()) {
        if (!runs_on(t, backend)) continue;
        if (!s.empty()) s += ", ";
        s += t.upper;
    }
    return s;
}

std::string type_name(uint32_t id) {
    const TypeTraits* t = type_traits(id);
    return t ? std::string(t->name) : "type#" + std::to_string(id);
}

std::string type_upper_name(uint32_t id) {
    const TypeTraits* t = type_traits(id);
    return t ? std::string(t->upper) : "type#" + std::to_string(id);
}

const TypeTraits* type_by_name(std::string_view name) noexcept {
    auto same = [&](const char* s) {
        const std::string_view v(s);
        return v.size() == name.size() &&
               std::equal(v.begin(), v.end(), name.begin(), [](char a, char b) {
                   return std::tolower(static_cast<unsigned char>(a)) ==
                          std::tolower(static_cast<unsigned char>(b));
               });
    };
    for (const TypeTraits& t : table())
        if (same(t.name)) return &t;
    return nullptr;
}

size_t row_bytes(uint32_t type_id, uint64_t n) {
    const TypeTraits* t = type_traits(type_id);
    if (!t) throw std::invalid_argument("unknown ggml type id " + std::to_string(type_id));
    if (n % t->block_size != 0) {
        throw std::invalid_argument("row of " + std::to_string(n) +
                                    " values is not a multiple of " + t->upper + "'s block size " +
                                    std::to_string(t->block_size));
    }
    return static_cast<size_t>(n / t->block_size * t->type_size);
}

UnsupportedType::UnsupportedType(uint32_t type_id, std::string_view tensor_name, Backend backend)
    : wb::UnsupportedError("tensor type", "unsupported tensor type " + type_upper_name(type_id) +
                                              " in tensor " + std::string(tensor_name) +
                                              " (supported" +
                                              (backend == Backend::Cpu ? "" : " on Vulkan") + ": " +
                                              supported_type_names(backend) + ")"),
      type_id_(type_id) {}

void dequantize_row(uint32_t type_id, const void* src, float* dst, uint64_t n,
                    std::string_view tensor_name) {
    const TypeTraits* t = type_traits(type_id);
    if (!t || !t->computable) throw UnsupportedType(type_id, tensor_name);
    check_n(*t, n, "dequantize", tensor_name);
    t->dequantize(src, dst, static_cast<int64_t>(n));
}

void quantize_row(uint32_t type_id, const float* src, void* dst, uint64_t n,
                  std::string_view tensor_name) {
    const TypeTraits* t = type_traits(type_id);
    if (!t || !t->computable) throw UnsupportedType(type_id, tensor_name);
    check_n(*t, n, "quantize", tensor_name);
    t->quantize(src, dst, static_cast<int64_t>(n));
}

}  // namespace wb::ggml
