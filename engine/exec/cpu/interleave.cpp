#include "exec/cpu/interleave.h"

#include <cstring>
#include <type_traits>

#include "ggml/types.h"

namespace wb::cpu {

namespace {

/// One field of a type's block as a group-block holds it: `bytes` bytes at
/// `src` in each row's block, cut into chunks of `chunk` bytes; chunk c of
/// row r lands at dst + 8 chunk c + chunk r (the 8 rows' chunk c side by
/// side), each byte XOR `flip`.
struct Piece {
    uint16_t src, bytes, chunk, dst;
    uint8_t flip;
};

/// A type's interleaved form (the header comment, as data).
struct Form {
    size_t block_bytes;  // one row's block
    int n_pieces;
    Piece pieces[4];
};

const Form* form_of(uint32_t type) noexcept {
    static const Form f16{16, 1, {{0, 16, 2, 0, 0}}};
    static const Form q4_0{18, 2, {{0, 2, 2, 0, 0}, {2, 16, 4, 16, 0}}};
    static const Form q8_0{34, 2, {{0, 2, 2, 0, 0}, {2, 32, 4, 16, 0x80}}};
    static const Form q4_k{
        144, 4, {{0, 2, 2, 0, 0}, {2, 2, 2, 16, 0}, {4, 12, 1, 32, 0}, {16, 128, 4, 128, 0}}};
    static const Form q6_k{
        210,
        4,
        {{208, 2, 2, 0, 0}, {192, 16, 1, 16, 0}, {0, 128, 4, 144, 0}, {128, 64, 4, 1168, 0}}};
    switch (static_cast<ggml::Type>(type)) {
        case ggml::Type::F16:
        case ggml::Type::BF16:  // 2-byte values like F16's
            return &f16;
        case ggml::Type::Q4_0:
            return &q4_0;
        case ggml::Type::Q8_0:
            return &q8_0;
        case ggml::Type::Q4_K:
            return &q4_k;
        case ggml::Type::Q6_K:
            return &q6_k;
        default:
            return nullptr;
    }
}

/// Byte k of chunk c of row r of a piece, in the group-block.
size_t group_at(const Piece& p, int r, int c, int k) noexcept {
    return size_t{p.dst} + size_t{kGroupRows} * p.chunk * c + size_t{p.chunk} * r + k;
}

}  // namespace

size_t interleave_block_bytes(uint32_t type) noexcept {
    const Form* f = form_of(type);
    return f ? f->block_bytes : 0;
}

namespace {

/// The chunks of one piece of one row's block, `kChunk` bytes a move (the
/// flip repeated over the chunk's bytes): the whole model passes through
/// here at load, and a byte a step was most of the load time.
template <int kChunk>
void move_chunks(const Piece& p, const uint8_t* blk, int r, uint8_t* out) noexcept {
    using Word = std::conditional_t<kChunk == 4, uint32_t,
                                    std::conditional_t<kChunk == 2, uint16_t, uint8_t>>;
    const auto flip = static_cast<Word>(p.flip * static_cast<Word>(0x01010101u));
    for (int c = 0; c < p.bytes / kChunk; ++c) {
        Word w;
        std::memcpy(&w, blk + p.src + kChunk * c, kChunk);
        w = static_cast<Word>(w ^ flip);
        std::memcpy(out + group_at(p, r, c, 0), &w, kChunk);
    }
}

}  // namespace

void interleave_group(uint32_t type, const uint8_t* src, size_t row_bytes, uint8_t* dst) noexcept {
    const Form* f = form_of(type);
    if (f == nullptr) return;
    for (size_t b = 0; b < row_bytes / f->block_bytes; ++b) {
        uint8_t* out = dst + b * kGroupRows * f->block_bytes;
        for (int r = 0; r < kGroupRows; ++r) {
            const uint8_t* blk = src + r * row_bytes + b * f->block_bytes;
            for (int i = 0; i < f->n_pieces; ++i) {
                const Piece& p = f->pieces[i];
                if (p.chunk == 4) {
                    move_chunks<4>(p, blk, r, out);
                } else if (p.chunk == 2) {
                    move_chunks<2>(p, blk, r, out);
                } else {
                    move_chunks<1>(p, blk, r, out);
                }
            }
        }
    }
}

void deinterleave_row(uint32_t type, const uint8_t* group, size_t row_bytes, int r,
                      uint8_t* dst) noexcept {
    const Form* f = form_of(type);
    if (f == nullptr) return;
    for (size_t b = 0; b < row_bytes / f->block_bytes; ++b) {
        const uint8_t* in = group + b * kGroupRows * f->block_bytes;
        uint8_t* blk = dst + b * f->block_bytes;
        for (int i = 0; i < f->n_pieces; ++i) {
            const Piece& p = f->pieces[i];
            for (int c = 0; c < p.bytes / p.chunk; ++c)
                for (int k = 0; k < p.chunk; ++k)
                    blk[p.src + p.chunk * c + k] = in[group_at(p, r, c, k)] ^ p.flip;
        }
    }
}

}  // namespace wb::cpu
