#include "ggml/types.h"

#include <array>
#include <cstring>

#include "ggml/fp16.h"

namespace wb::ggml {
namespace {

// Indexed by ggml type id; {nullptr,...} marks ids ggml removed. Sizes follow
// ggml-common.h (QK_K = 256 for the k- and i-quants).
constexpr TypeTraits kNone{nullptr, 0, 0, false};
constexpr std::array<TypeTraits, 40> kTraits = {{
    {"f32", 1, 4, true},        // 0
    {"f16", 1, 2, true},        // 1
    {"q4_0", 32, 18, true},     // 2
    {"q4_1", 32, 20, false},    // 3
    kNone,                      // 4 (q4_2, removed)
    kNone,                      // 5 (q4_3, removed)
    {"q5_0", 32, 22, false},    // 6
    {"q5_1", 32, 24, false},    // 7
    {"q8_0", 32, 34, true},     // 8
    {"q8_1", 32, 36, false},    // 9
    {"q2_k", 256, 84, false},   // 10
    {"q3_k", 256, 110, false},  // 11
    {"q4_k", 256, 144, false},  // 12
    {"q5_k", 256, 176, false},  // 13
    {"q6_k", 256, 210, false},  // 14
    {"q8_k", 256, 292, false},  // 15
    {"iq2_xxs", 256, 66, false},  // 16
    {"iq2_xs", 256, 74, false},   // 17
    {"iq3_xxs", 256, 98, false},  // 18
    {"iq1_s", 256, 50, false},    // 19
    {"iq4_nl", 32, 18, false},    // 20
    {"iq3_s", 256, 110, false},   // 21
    {"iq2_s", 256, 82, false},    // 22
    {"iq4_xs", 256, 136, false},  // 23
    {"i8", 1, 1, false},          // 24
    {"i16", 1, 2, false},         // 25
    {"i32", 1, 4, false},         // 26
    {"i64", 1, 8, false},         // 27
    {"f64", 1, 8, false},         // 28
    {"iq1_m", 256, 56, false},    // 29
    {"bf16", 1, 2, true},         // 30
    kNone,                        // 31 (q4_0_4_4, removed)
    kNone,                        // 32 (q4_0_4_8, removed)
    kNone,                        // 33 (q4_0_8_8, removed)
    {"tq1_0", 256, 54, false},    // 34
    {"tq2_0", 256, 66, false},    // 35
    kNone,                        // 36 (iq4_nl_4_4, removed)
    kNone,                        // 37 (iq4_nl_4_8, removed)
    kNone,                        // 38 (iq4_nl_8_8, removed)
    {"mxfp4", 32, 17, false},     // 39
}};

}  // namespace

const TypeTraits* type_traits(uint32_t id) noexcept {
    if (id >= kTraits.size() || kTraits[id].name == nullptr) return nullptr;
    return &kTraits[id];
}

std::string type_name(uint32_t id) {
    const TypeTraits* t = type_traits(id);
    return t ? std::string(t->name) : "type#" + std::to_string(id);
}

size_t row_bytes(uint32_t type_id, uint64_t n) {
    const TypeTraits* t = type_traits(type_id);
    if (!t) throw std::invalid_argument("unknown ggml type id " + std::to_string(type_id));
    if (n % t->block_size != 0) {
        throw std::invalid_argument("row of " + std::to_string(n) + " values is not a multiple of " +
                                    type_name(type_id) + "'s block size " +
                                    std::to_string(t->block_size));
    }
    return static_cast<size_t>(n / t->block_size * t->type_size);
}

UnsupportedType::UnsupportedType(uint32_t type_id, std::string_view tensor_name)
    : std::runtime_error("unsupported tensor type " + type_name(type_id) + " in tensor " +
                         std::string(tensor_name)) {}

void dequantize_row(uint32_t type_id, const void* src, float* dst, uint64_t n,
                    std::string_view tensor_name) {
    const TypeTraits* t = type_traits(type_id);
    if (!t || !t->computable) throw UnsupportedType(type_id, tensor_name);
    if (n % t->block_size != 0) {
        throw std::invalid_argument("dequantize " + std::string(tensor_name) + ": " +
                                    std::to_string(n) + " values is not a multiple of block size " +
                                    std::to_string(t->block_size));
    }
    const auto* bytes = static_cast<const uint8_t*>(src);
    switch (static_cast<Type>(type_id)) {
        case Type::F32:
            std::memcpy(dst, src, n * sizeof(float));
            return;
        case Type::F16:
            for (uint64_t i = 0; i < n; ++i) {
                uint16_t h;
                std::memcpy(&h, bytes + 2 * i, 2);
                dst[i] = fp16_to_fp32(h);
            }
            return;
        case Type::BF16:
            for (uint64_t i = 0; i < n; ++i) {
                uint16_t b;
                std::memcpy(&b, bytes + 2 * i, 2);
                dst[i] = bf16_to_fp32(b);
            }
            return;
        case Type::Q8_0:
            for (uint64_t b = 0; b < n / kQK; ++b) {
                BlockQ8_0 blk;  // copied: GGUF data is only 32-byte aligned per tensor
                std::memcpy(&blk, bytes + b * sizeof(BlockQ8_0), sizeof blk);
                const float d = fp16_to_fp32(blk.d);
                for (int j = 0; j < kQK; ++j) dst[b * kQK + j] = d * static_cast<float>(blk.qs[j]);
            }
            return;
        case Type::Q4_0:
            for (uint64_t b = 0; b < n / kQK; ++b) {
                BlockQ4_0 blk;
                std::memcpy(&blk, bytes + b * sizeof(BlockQ4_0), sizeof blk);
                const float d = fp16_to_fp32(blk.d);
                for (int j = 0; j < kQK / 2; ++j) {
                    dst[b * kQK + j] = d * static_cast<float>((blk.qs[j] & 0x0F) - 8);
                    dst[b * kQK + j + kQK / 2] = d * static_cast<float>((blk.qs[j] >> 4) - 8);
                }
            }
            return;
    }
    throw UnsupportedType(type_id, tensor_name);
}

}  // namespace wb::ggml
