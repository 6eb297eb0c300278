// Weight access for every ggml type the shaders compute with: the decoder
// of the type named by the build's define W_<NAME> (one row of
// engine/ggml/types.def each; w_select.glsl is generated from that table),
// reading a [rows, ne0] row-major weight in its ggml layout bound at
// binding 0. `row` counts from the start of the bound piece (weights larger
// than maxStorageBufferRange are bound in pieces of whole rows, so pieces
// start on block boundaries).
//
// A decoder, shaders/types/<name>.glsl, defines either
//
//   W_PLAIN (f32, f16, bf16: one value per element)
//     float w_get(uint row, uint k, uint ne0)   element k of row `row`
//
// or, for block types (ggml's blocks of W_QK values, W_QK a multiple of 32):
//     W_QK, W_BLOCK_BYTES      values and bytes per block (uint macros)
//     W_OFFSET                 defined when values have an offset term (see below)
//     WBlock w_block(uint blk)
//         the state block blk shares (its f16 scales, the packed sub-block
//         scales of a super-block), read once per block; blk counts blocks
//         from the start of the bound piece
//     WUnit w_unit_load(WBlock b, uint blk, uint u)
//         unit u (0 <= u < W_QK / 32: values 32u .. 32u + 31 of the block):
//         its packed quants, loaded with 16-byte reads (w_bytes.glsl) and
//         kept packed (8 to 10 words), plus .am, the affine map from quants
//         to values, one per 16-value half:
//           value[i] = am.x * q[i] + am.y   (i < 16)
//           value[i] = am.z * q[i] + am.w   (i >= 16)
//         (am.y, am.w are 0 unless W_OFFSET: Q4_1, Q5_1, Q2_K, Q4_K, Q5_K)
//     float w_unit_quant(WUnit r, uint i)
//         quant i (0..31) of the loaded unit, a small integer as a float,
//         from registers only (no memory access)
// so a kernel walks a row unit by unit, decodes a super-block's scales
// once for its 8 units, loads each unit's bits once, and can run its dot
// products on the quants, applying each half's scale once (and, with
// W_OFFSET, its offset times the sum of x). w_unit() below gives the 32
// values (get_rows, the tiled mat x mat).
//
// Block decoders include w_bytes.glsl, whose access variant the host
// chooses from the device: W_U16 reads uint16 words (16-bit storage), else
// uint32 words (every device; the host pads buffers to 4 bytes); W_TEX
// (the CPU-device mat x vec, matvec_texel.comp) reads a window of texels
// the kernel fetched, blk then counting blocks from the window's first.
// On W_TEX the plain types (F32, F16, BF16) follow the block contract too,
// as 32-value units with an identity affine map.

#include "w_select.glsl"

#if !defined(W_PLAIN)
const uint W_UNITS = W_QK / 32u;  // 32-value units per block

// The 32 dequantized values of unit u of block blk.
void w_unit(WBlock b, uint blk, uint u, out float v[32]) {
    const WUnit r = w_unit_load(b, blk, u);
    [[unroll]] for (uint i = 0u; i < 16u; ++i) {
        v[i] = r.am.x * w_unit_quant(r, i) + r.am.y;
        v[i + 16u] = r.am.z * w_unit_quant(r, i + 16u) + r.am.w;
    }
}

// Block and unit holding unit g (values 32g .. 32g + 31) of row `row`.
uint w_row_block(uint row, uint g, uint ne0) { return row * (ne0 / W_QK) + g / W_UNITS; }

// The 32 values of unit g of row `row`.
void w_row_unit(uint row, uint g, uint ne0, out float v[32]) {
    const uint blk = w_row_block(row, g, ne0);
    w_unit(w_block(blk), blk, g % W_UNITS, v);
}
#endif
