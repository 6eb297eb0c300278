#include "model/model.h"

#include "ggml/types.h"

namespace wb::model {

namespace {

// Every KV type once: its name (--kv-type, the run log) and its ggml type.
struct KvTypeRow {
    KvType type;
    const char* name;
    ggml::Type ggml;
};
constexpr KvTypeRow kKvTypes[] = {{KvType::F32, "f32", ggml::Type::F32},
                                  {KvType::F16, "f16", ggml::Type::F16},
                                  {KvType::Q8_0, "q8_0", ggml::Type::Q8_0},
                                  {KvType::Q4_0, "q4_0", ggml::Type::Q4_0}};

const KvTypeRow& row_of(KvType t) {
    for (const KvTypeRow& r : kKvTypes)
        if (r.type == t) return r;
    return kKvTypes[0];  // unreachable: every enumerator has a row
}

}  // namespace

const char* kv_type_name(KvType t) {
    return row_of(t).name;
}

std::vector<KvType> kv_types() {
    const KvType def = ContextParams{}.kv_type;
    std::vector<KvType> out{def};
    for (const KvTypeRow& r : kKvTypes)
        if (r.type != def) out.push_back(r.type);
    return out;
}

std::optional<KvType> parse_kv_type(std::string_view name) {
    for (const KvTypeRow& r : kKvTypes)
        if (name == r.name) return r.type;
    return std::nullopt;
}

uint32_t kv_ggml_type(KvType t) {
    return static_cast<uint32_t>(row_of(t).ggml);
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

const model::Profile& Model::profile() const {
    static const model::Profile empty;
    return empty;
}

const HostTimes& Model::host_times() const {
    static const HostTimes empty;
    return empty;
}

}  // namespace wb::model
