#include "model/model.h"

#include "ggml/types.h"

namespace wb::model {

const char* kv_type_name(KvType t) {
    switch (t) {
        case KvType::F32:
            return "f32";
        case KvType::F16:
            return "f16";
        case KvType::Q8_0:
            return "q8_0";
        case KvType::Q4_0:
            return "q4_0";
    }
    return "?";
}

std::optional<KvType> parse_kv_type(std::string_view name) {
    for (KvType t : {KvType::F32, KvType::F16, KvType::Q8_0, KvType::Q4_0})
        if (name == kv_type_name(t)) return t;
    return std::nullopt;
}

uint32_t kv_ggml_type(KvType t) {
    ggml::Type g = ggml::Type::F32;
    switch (t) {
        case KvType::F32:
            g = ggml::Type::F32;
            break;
        case KvType::F16:
            g = ggml::Type::F16;
            break;
        case KvType::Q8_0:
            g = ggml::Type::Q8_0;
            break;
        case KvType::Q4_0:
            g = ggml::Type::Q4_0;
            break;
    }
    return static_cast<uint32_t>(g);
}

uint32_t kv_block_values(KvType t) {
    return t == KvType::Q8_0 || t == KvType::Q4_0 ? 32 : 1;
}

uint64_t kv_row_bytes(KvType t, uint64_t n) {
    if (n % kv_block_values(t) != 0)
        throw std::invalid_argument(std::string("kv_row_bytes: ") + std::to_string(n) +
                                    " values are not whole " + kv_type_name(t) + " blocks");
    return ggml::row_bytes(kv_ggml_type(t), n);
}

std::string kv_type_problem(KvType t, uint32_t head_dim) {
    const uint32_t b = kv_block_values(t);
    if (head_dim % b == 0) return {};
    return std::string("KV cache type ") + kv_type_name(t) +
           " needs a head dimension that is a multiple of " + std::to_string(b) +
           " (one block per 32 values); this model's is " + std::to_string(head_dim) +
           ": use f16 or f32";
}

std::string kv_type_vulkan_problem(KvType t) {
    if (t == KvType::F16 || t == KvType::F32) return {};
    return std::string("KV cache type ") + kv_type_name(t) +
           " runs on the CPU backend (--backend cpu, or the CPU device); the Vulkan backend "
           "caches K/V as f16 or f32";
}

const vk::Profile& Model::profile() const {
    static const vk::Profile empty;
    return empty;
}

const HostTimes& Model::host_times() const {
    static const HostTimes empty;
    return empty;
}

}  // namespace wb::model
