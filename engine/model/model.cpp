#include "model/model.h"

namespace wb::model {

const char* kv_type_name(KvType t) {
    return t == KvType::F16 ? "f16" : "f32";
}

std::optional<KvType> parse_kv_type(std::string_view name) {
    if (name == "f32") return KvType::F32;
    if (name == "f16") return KvType::F16;
    return std::nullopt;
}

uint32_t kv_type_bytes(KvType t) {
    return t == KvType::F16 ? 2 : 4;
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
