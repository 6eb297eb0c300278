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

}  // namespace

bool has_interleaved_form(uint32_t type) noexcept {
    Form f{};
    return form_of(type, f);
}

void interleave_group(uint32_t type, const uint8_t* src, size_t row_bytes, uint8_t* dst) noexcept {
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
