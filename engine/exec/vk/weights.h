#pragma once
// A weight matrix in device memory, in its ggml layout (no conversion), as
// one or more pieces of whole rows so that no storage-buffer binding spans
// more than Context::binding_limit() (lavapipe: 128 MiB). Pieces hold whole
// rows, so they start on block (and 256-value super-block) boundaries, as
// the shaders' decoders need. Kernels dispatch once per piece with the
// piece's first row as an offset.

#include <cstdint>
#include <string>
#include <vector>

#include "exec/vk/buffer.h"
#include "exec/vk/context.h"

namespace wb::vk {

/// Rows [row_begin, row_begin + rows) of a weight in their own buffer.
struct WeightPiece {
    Buffer buffer;           ///< [rows, row_bytes] in ggml layout
    uint32_t row_begin = 0;  ///< global index of the first row
    uint32_t rows = 0;
};

class DeviceWeight {
  public:
    DeviceWeight() = default;

    /// Uploads `data` ([n_rows, ne0] of ggml type `type`, row-major, ggml
    /// block layout) through staging into device-local pieces. Throws
    /// ggml::UnsupportedType (naming `name`) for types the shaders do not
    /// read (rows of ggml/types.def without VK), std::invalid_argument when one row
    /// is larger than the binding limit or ne0 does not fit the type's
    /// blocks, and vk::Error when allocation fails.
    static DeviceWeight upload(Context& ctx, const std::string& name, uint32_t type, uint64_t ne0,
                               uint64_t n_rows, const void* data,
                               Purpose purpose = Purpose::Weights);

    /// Rows of one source matrix for upload_stacked: [rows, ne0] in ggml layout.
    struct Part {
        const void* data = nullptr;
        uint64_t rows = 0;
    };
    /// Uploads `parts` stacked by rows as one weight ([sum of rows, ne0],
    /// the parts' rows in order), without a host copy: e.g. Q, K and V
    /// projections as one [q_dim + 2 kv_dim, n_embd] matrix, so one
    /// mat x vec dispatch computes all three. All parts share `type` and
    /// ne0. Throws as upload().
    static DeviceWeight upload_stacked(Context& ctx, const std::string& name, uint32_t type,
                                       uint64_t ne0, const std::vector<Part>& parts,
                                       Purpose purpose = Purpose::Weights);

    /// Rows per piece for a weight of `row_bytes` under `binding_limit`.
    static uint64_t rows_per_piece(uint64_t row_bytes, uint64_t binding_limit);

    const std::string& name() const { return name_; }
    uint32_t type() const { return type_; }
    uint32_t ne0() const { return ne0_; }        ///< row length (input dim)
    uint32_t n_rows() const { return n_rows_; }  ///< output dim
    const std::vector<WeightPiece>& pieces() const { return pieces_; }
    uint64_t bytes() const;  ///< device bytes over all pieces

  private:
    std::string name_;
    uint32_t type_ = 0;
    uint32_t ne0_ = 0;
    uint32_t n_rows_ = 0;
    std::vector<WeightPiece> pieces_;
};

}  // namespace wb::vk
