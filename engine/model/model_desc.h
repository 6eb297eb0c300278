#pragma once
// What a loaded model is, independent of the backend: its hyperparameters,
// its architecture spec, and one table of its weights, built once by the
// spec (engine/model/arch/) from the GGUF tensors. Every executor (the CPU
// reference, the Vulkan engine, the memory planner) loads or sizes exactly
// the tensors of this table; none has its own tensor list.
//
// Weights are referred to by id: a MatId names a weight matrix that may be
// several GGUF tensors stacked by rows (Q|K|V or gate|up of a layer; one
// fused tensor where the file has one, phi3's attn_qkv), a VecId a vector
// (a norm weight, or Q|K|V biases stacked the same way).

#include <cstdint>
#include <string>
#include <vector>

#include "model/hparams.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

struct ArchSpec;

using MatId = int32_t;
using VecId = int32_t;
inline constexpr int32_t kNoWeight = -1;

/// One GGUF tensor of the model, checked against its expected shape.
struct TensorRef {
    std::string name;
    uint32_t type = 0;              ///< ggml type id
    uint64_t ne0 = 0;               ///< row length (input dimension of a matrix)
    uint64_t ne1 = 1;               ///< rows (1 for vectors)
    uint64_t nbytes = 0;            ///< bytes in the file
    const uint8_t* data = nullptr;  ///< into the File's mapping: valid only while it is open
};

/// A weight matrix [rows, ne0] (row r holds the ne0 weights of output r):
/// the tensors `parts` stacked by rows, in order.
struct MatDesc {
    std::vector<uint32_t> parts;  ///< indices into ModelDesc::tensors
    uint64_t ne0 = 0;
    uint64_t rows = 0;
    std::string label;  ///< "blk.0.attn_q.weight+blk.0.attn_k.weight+..."
};

/// A vector [n]: the 1-D tensors `parts` concatenated.
struct VecDesc {
    std::vector<uint32_t> parts;
    uint64_t n = 0;
};

/// The weights of one transformer block. Absent ones are kNoWeight.
struct LayerDesc {
    VecId attn_norm = kNoWeight;       ///< [n_embd]
    MatId qkv = kNoWeight;             ///< [q_dim + 2 kv_dim, n_embd]: Q rows, K rows, V rows
    VecId qkv_bias = kNoWeight;        ///< [q_dim + 2 kv_dim] (qwen2)
    VecId q_norm = kNoWeight;          ///< [head_dim] per-head RMSNorm of Q (qwen3, gemma3)
    VecId k_norm = kNoWeight;          ///< [head_dim] per-head RMSNorm of K
    MatId wo = kNoWeight;              ///< [n_embd, q_dim]
    VecId post_attn_norm = kNoWeight;  ///< [n_embd] (gemma2/3)
    VecId ffn_norm = kNoWeight;        ///< [n_embd]
    MatId gate_up = kNoWeight;         ///< [2 n_ff, n_embd]: gate rows, then up rows
    MatId down = kNoWeight;            ///< [n_embd, n_ff]
    VecId post_ffn_norm = kNoWeight;   ///< [n_embd] (gemma2/3)
};

struct ModelDesc {
    HParams hp;
    const ArchSpec* arch = nullptr;
    std::vector<TensorRef> tensors;  ///< every tensor of the file, each used by a Mat or Vec
    std::vector<MatDesc> mats;
    std::vector<VecDesc> vecs;
    MatId token_embd = kNoWeight;  ///< [n_vocab, n_embd]
    MatId output = kNoWeight;      ///< [n_vocab, n_embd]; == token_embd when tied
    VecId output_norm = kNoWeight;
    std::vector<LayerDesc> layers;  ///< [n_layer]

    /// Reads the hyperparameters (HParams::from_gguf) and lets the
    /// architecture's spec build the weight table from `file`. Throws what
    /// HParams::from_gguf throws; gguf::Error naming the file and tensor
    /// when a required tensor is missing or has another shape, when the
    /// file holds a tensor the architecture does not have ("not part of
    /// architecture X": never silently ignored), or naming
    /// `<arch>.block_count` when it exceeds the file's tensor count
    /// (checked before the table is built, so a hostile block_count costs
    /// nothing); ggml::UnsupportedType
    /// naming the tensor for a type the engine cannot compute with. The
    /// tensors' `data` pointers are valid while `file` is open.
    static ModelDesc from_gguf(const gguf::File& file);
};

}  // namespace wb::model
