#include "cpu/interleave.h"

#include <cstring>

#include "ggml/types.h"

namespace wb::cpu {

namespace {

/// A type's block in ggml (bytes) and in a group's slices: values per
/// 4-byte lane of a slice (Q4_0's byte holds two values), slices a block.
struct Form {
    size_t block_bytes;  // one row's block: f16 scale + quants
    int slices;          // 32-byte slices per group-block
    uint8_t flip;        // XOR applied to every quant byte (Q8_0: to unsigned)
};

bool form_of(uint32_t type, Form& f) noexcept {
    switch (static_cast<ggml::Type>(type)) {
        case ggml::Type::Q4_0:
            f = {18, 4, 0x00};
            return true;
        case ggml::Type::Q8_0:
            f = {34, 8, 0x80};
            return true;
        default:
            return false;
    }
}

// Q4_K's group-block (header comment): scales, then 32 slices.
constexpr size_t kQ4K = 144;  // one row's block: f16 d, f16 dmin, 12 scale bytes, 128 nibble bytes

void interleave_q4_k(const uint8_t* src, size_t row_bytes, uint8_t* dst) noexcept {
    for (size_t b = 0; b < row_bytes / kQ4K; ++b) {
        uint8_t* out = dst + b * kGroupRows * kQ4K;
        for (int r = 0; r < kGroupRows; ++r) {
            const uint8_t* blk = src + r * row_bytes + b * kQ4K;
            std::memcpy(out + 2 * r, blk, 2);           // d
            std::memcpy(out + 16 + 2 * r, blk + 2, 2);  // dmin
            for (int k = 0; k < 12; ++k) out[32 + 8 * k + r] = blk[4 + k];
            for (int sl = 0; sl < 32; ++sl)
                std::memcpy(out + 128 + 32 * sl + 4 * r, blk + 16 + 4 * sl, 4);
        }
    }
}

void deinterleave_q4_k(const uint8_t* group, size_t row_bytes, int r, uint8_t* dst) noexcept {
    for (size_t b = 0; b < row_bytes / kQ4K; ++b) {
        const uint8_t* in = group + b * kGroupRows * kQ4K;
        uint8_t* blk = dst + b * kQ4K;
        std::memcpy(blk, in + 2 * r, 2);
        std::memcpy(blk + 2, in + 16 + 2 * r, 2);
        for (int k = 0; k < 12; ++k) blk[4 + k] = in[32 + 8 * k + r];
        for (int sl = 0; sl < 32; ++sl)
            std::memcpy(blk + 16 + 4 * sl, in + 128 + 32 * sl + 4 * r, 4);
    }
}

// Q6_K's group-block (header comment): d, scales, ql slices, qh slices.
constexpr size_t kQ6K = 210;  // one row's block: 128 ql, 64 qh, 16 int8 scales, f16 d

void interleave_q6_k(const uint8_t* src, size_t row_bytes, uint8_t* dst) noexcept {
    for (size_t b = 0; b < row_bytes / kQ6K; ++b) {
        uint8_t* out = dst + b * kGroupRows * kQ6K;
        for (int r = 0; r < kGroupRows; ++r) {
            const uint8_t* blk = src + r * row_bytes + b * kQ6K;
            std::memcpy(out + 2 * r, blk + 208, 2);
            for (int k = 0; k < 16; ++k) out[16 + 8 * k + r] = blk[192 + k];
            for (int sl = 0; sl < 32; ++sl)
                std::memcpy(out + 144 + 32 * sl + 4 * r, blk + 4 * sl, 4);
            for (int sl = 0; sl < 16; ++sl)
                std::memcpy(out + 1168 + 32 * sl + 4 * r, blk + 128 + 4 * sl, 4);
        }
    }
}

void deinterleave_q6_k(const uint8_t* group, size_t row_bytes, int r, uint8_t* dst) noexcept {
    for (size_t b = 0; b < row_bytes / kQ6K; ++b) {
        const uint8_t* in = group + b * kGroupRows * kQ6K;
        uint8_t* blk = dst + b * kQ6K;
        std::memcpy(blk + 208, in + 2 * r, 2);
        for (int k = 0; k < 16; ++k) blk[192 + k] = in[16 + 8 * k + r];
        for (int sl = 0; sl < 32; ++sl) std::memcpy(blk + 4 * sl, in + 144 + 32 * sl + 4 * r, 4);
        for (int sl = 0; sl < 16; ++sl)
            std::memcpy(blk + 128 + 4 * sl, in + 1168 + 32 * sl + 4 * r, 4);
    }
}

}  // namespace

bool has_interleaved_form(uint32_t type) noexcept {
    Form f{};
    const auto t = static_cast<ggml::Type>(type);
    return form_of(type, f) || t == ggml::Type::Q4_K || t == ggml::Type::Q6_K;
}

void interleave_group(uint32_t type, const uint8_t* src, size_t row_bytes, uint8_t* dst) noexcept {
    if (static_cast<ggml::Type>(type) == ggml::Type::Q4_K)
        return interleave_q4_k(src, row_bytes, dst);
    if (static_cast<ggml::Type>(type) == ggml::Type::Q6_K)
        return interleave_q6_k(src, row_bytes, dst);
    Form f{};
    if (!form_of(type, f)) return;
    const size_t nb = row_bytes / f.block_bytes;
    for (size_t b = 0; b < nb; ++b) {
        uint8_t* out = dst + b * kGroupRows * f.block_bytes;
        for (int r = 0; r < kGroupRows; ++r) {
            const uint8_t* blk = src + r * row_bytes + b * f.block_bytes;
            std::memcpy(out + 2 * r, blk, 2);  // f16 scale
            for (int l = 0; l < f.slices; ++l)
                for (int j = 0; j < 4; ++j)
                    out[16 + 32 * l + 4 * r + j] = blk[2 + 4 * l + j] ^ f.flip;
        }
    }
}

void deinterleave_row(uint32_t type, const uint8_t* group, size_t row_bytes, int r,
                      uint8_t* dst) noexcept {
    if (static_cast<ggml::Type>(type) == ggml::Type::Q4_K)
        return deinterleave_q4_k(group, row_bytes, r, dst);
    if (static_cast<ggml::Type>(type) == ggml::Type::Q6_K)
        return deinterleave_q6_k(group, row_bytes, r, dst);
    Form f{};
    if (!form_of(type, f)) return;
    const size_t nb = row_bytes / f.block_bytes;
    for (size_t b = 0; b < nb; ++b) {
        const uint8_t* in = group + b * kGroupRows * f.block_bytes;
        uint8_t* blk = dst + b * f.block_bytes;
        std::memcpy(blk, in + 2 * r, 2);
        for (int l = 0; l < f.slices; ++l)
            for (int j = 0; j < 4; ++j) blk[2 + 4 * l + j] = in[16 + 32 * l + 4 * r + j] ^ f.flip;
    }
}

}  // namespace wb::cpu
