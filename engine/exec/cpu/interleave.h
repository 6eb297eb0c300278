#pragma once
// Weights repacked at load so that one SIMD register holds eight rows: the
// matrix x matrix and matrix x vector kernels then sum eight output rows in
// the eight int32 lanes of one register (one vpdpbusd per four values of
// eight rows, the activations' four bytes broadcast), with no horizontal
// sum per row and the block scales applied as one vector. This is the idea
// of ggml's CPU "repack" buffers (block_q4_0x8 and friends); the layout
// below is this engine's own and only ever lives in memory.
//
// A group is 8 consecutive rows of n values (n a multiple of 32); its bytes
// are the 8 rows' bytes (8 * row_bytes), reordered block by block. For
// block b (values 32b .. 32b+31; for F16 values 8b .. 8b+7):
//  - F16 (16 bytes a row-block of 8 values, 128 a group-block): value j of
//    the 8 rows side by side (16 bytes at 16j, row r at 2r), so one F16C
//    load gives value j of 8 rows as 8 floats: a kernel multiplies it by
//    token t's value j broadcast, an outer product of 8 rows and the tile's
//    tokens, with no horizontal sum and each activation read once per 8 rows.
//    BF16 rows take the same form (2-byte values; a shift widens them).
//  - Q4_0 (18 bytes a row-block, 144 a group-block): the 8 rows' f16 scales
//    d_0..d_7 (16 bytes), then 4 slices L = 0..3 of 32 bytes; slice L holds
//    bytes 4L..4L+3 of each row's 16 nibble bytes, row r at 4r. A byte's low
//    nibble is value 4L + j, its high nibble value 16 + 4L + j (ggml's order).
//  - Q8_0 (34 bytes a row-block, 272 a group-block): the 8 scales, then 8
//    slices L = 0..7 of 32 bytes; slice L holds int8 values 4L..4L+3 of each
//    row, row r at 4r, stored as q + 128 (q XOR 0x80, 0..255) so the kernels
//    can take them as vpdpbusd's unsigned operand and subtract 128 sum(a).
//  - Q4_K (144 bytes a row-block of 256 values, 1152 a group-block): the 8
//    rows' f16 d (16 bytes), their f16 dmin (16 bytes), their 12 packed
//    scale bytes with byte k of row r at 8k + r (96 bytes: eight rows'
//    byte k load as one 8-byte vector and unpack lane-wise), then 32 slices
//    sl = 8g + L (g = 0..3, L = 0..7) of 32 bytes: bytes 32g + 4L .. +3 of
//    each row's 128 nibble bytes, row r at 4r. Low nibbles are sub-block 2g,
//    values 4L + j; high nibbles sub-block 2g + 1, values 4L + j.
//  - Q6_K (210 bytes a row-block of 256 values, 1680 a group-block): the 8
//    rows' f16 d (16 bytes), their 16 int8 scales with scale k of row r at
//    16 + 8k + r (128 bytes), 32 slices of the 128 low-bit bytes (ql; slice
//    sl at 144 + 32 sl holds bytes 4sl .. +3 of each row, row r at 4r), then
//    16 slices of the 64 high-bit bytes (qh; at 1168 + 32 sl, likewise).

#include <cstddef>
#include <cstdint>

namespace wb::cpu {

/// How the rows of a weight part are stored.
enum class Layout : uint8_t {
    Rows,          ///< ggml's layout, row after row
    Interleaved8,  ///< groups of 8 rows as above (rows a multiple of 8)
};

/// Rows in one interleaved group.
inline constexpr int kGroupRows = 8;

/// Bytes of one row's block in `type`'s interleaved form (F16 and BF16 16, Q4_0 18,
/// Q8_0 34, Q4_K 144, Q6_K 210), or 0 when the type has none. A row can
/// be interleaved when its bytes are a whole number of these.
size_t interleave_block_bytes(uint32_t type) noexcept;

/// Writes the group form of 8 rows: src holds 8 rows of `type`, row_bytes
/// each (ggml layout, consecutive); dst receives 8 * row_bytes bytes. The
/// type must have an interleaved form (F16, BF16, Q4_0, Q8_0, Q4_K, Q6_K: the
/// types whose kernels.def row names an 8-row kernel; others are left
/// alone) and row_bytes be whole blocks (interleave_block_bytes; checked by
/// the caller).
void interleave_group(uint32_t type, const uint8_t* src, size_t row_bytes, uint8_t* dst) noexcept;

/// The inverse for one row: writes row r (0..7) of the group at `group` in
/// ggml's layout into dst (row_bytes bytes). Used where single rows are
/// read (an embedding lookup from a tied output matrix, the dequantizing
/// fallback).
void deinterleave_row(uint32_t type, const uint8_t* group, size_t row_bytes, int r,
                      uint8_t* dst) noexcept;

}  // namespace wb::cpu
