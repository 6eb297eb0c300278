#include "exec/vk/weights.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "ggml/types.h"

namespace wb::vk {

uint64_t DeviceWeight::rows_per_piece(uint64_t row_bytes, uint64_t binding_limit) {
    return row_bytes ? binding_limit / row_bytes : 0;
}

DeviceWeight DeviceWeight::upload(Context& ctx, const std::string& name, uint32_t type,
                                  uint64_t ne0, uint64_t n_rows, const void* data,
                                  Purpose purpose) {
    return upload_stacked(ctx, name, type, ne0, {Part{data, n_rows}}, purpose);
}

DeviceWeight DeviceWeight::upload_stacked(Context& ctx, const std::string& name, uint32_t type,
                                          uint64_t ne0, const std::vector<Part>& parts,
                                          Purpose purpose) {
    const ggml::TypeTraits* tt = ggml::type_traits(type);
    if (!tt || !tt->vulkan) throw ggml::UnsupportedType(type, name, ggml::Backend::Vulkan);
    uint64_t n_rows = 0;
    for (const Part& part : parts) n_rows += part.rows;
    if (ne0 > std::numeric_limits<uint32_t>::max() ||
        n_rows > std::numeric_limits<uint32_t>::max()) {
        throw std::invalid_argument("weight " + name + ": shape too large for the shaders");
    }
    const uint64_t row_bytes = ggml::row_bytes(type, ne0);  // throws on a bad ne0
    const uint64_t per_piece = rows_per_piece(row_bytes, ctx.binding_limit());
    if (per_piece == 0) {
        throw std::invalid_argument("weight " + name + ": one row is " + std::to_string(row_bytes) +
                                    " bytes, more than the " + std::to_string(ctx.binding_limit()) +
                                    "-byte storage-buffer binding limit");
    }
    DeviceWeight w;
    w.name_ = name;
    w.type_ = type;
    w.ne0_ = static_cast<uint32_t>(ne0);
    w.n_rows_ = static_cast<uint32_t>(n_rows);
    size_t part = 0;        // part holding global row r
    uint64_t part_row = 0;  // r's row within that part
    for (uint64_t r = 0; r < n_rows; r += per_piece) {
        const uint64_t rows = std::min(per_piece, n_rows - r);
        WeightPiece piece;
        piece.buffer = Buffer(ctx, rows * row_bytes, Memory::Device, purpose);
        // The piece's rows may come from several parts: one upload per run.
        for (uint64_t done = 0; done < rows;) {
            while (part_row == parts[part].rows) ++part, part_row = 0;
            const uint64_t n = std::min(rows - done, parts[part].rows - part_row);
            piece.buffer.upload(
                static_cast<const uint8_t*>(parts[part].data) + part_row * row_bytes, n * row_bytes,
                done * row_bytes);
            done += n;
            part_row += n;
        }
        piece.row_begin = static_cast<uint32_t>(r);
        piece.rows = static_cast<uint32_t>(rows);
        w.pieces_.push_back(std::move(piece));
    }
    return w;
}

uint64_t DeviceWeight::bytes() const {
    uint64_t b = 0;
    for (const auto& p : pieces_) b += p.buffer.size();
    return b;
}

}  // namespace wb::vk
