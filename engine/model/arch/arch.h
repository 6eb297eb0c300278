#pragma once
// An architecture spec: what differs between the model families this
// engine runs, as data plus two functions. Adding an architecture is a
// file in this folder with its spec (and, if no existing graph fits, its
// graph function) and its row in archs.def.

#include <cstdint>
#include <string>
#include <string_view>

#include "model/graph.h"
#include "model/hparams.h"
#include "model/model_desc.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

class TensorTable;

struct ArchSpec {
    const char* name;    ///< general.architecture
    RopeMode rope_mode;  ///< llama.cpp's llama_model_rope_type() for it
    /// Fewest tensors one block has (the file must hold at least
    /// n_layer times this, checked before the table is built).
    uint32_t min_layer_tensors;
    /// Reads the architecture's own keys into `hp` after the common ones
    /// (HParams::from_gguf); throws gguf::Error naming a bad key.
    void (*read_hparams)(const gguf::File& f, HParams& hp);
    /// Declares the architecture's tensors (required and optional, with
    /// their shapes) through `t` and records the weight ids in `d`.
    void (*describe)(TensorTable& t, ModelDesc& d);
    /// The forward pass of one ubatch.
    void (*graph)(const ModelDesc& d, Ops& ops);
};

/// The spec of `arch`, or nullptr.
const ArchSpec* find_arch(std::string_view arch);
/// "gemma2, gemma3, llama, phi3, qwen2, qwen3".
std::string supported_arch_list();

/// Builds a ModelDesc's weight table from a file, checking every shape.
class TensorTable {
  public:
    TensorTable(const gguf::File& f, ModelDesc& d) : f_(f), d_(d) {}

    /// Tensor `name` with shape [ne0, ne1] (ggml order, ne1 = 1 for a
    /// vector); throws gguf::Error "missing tensor" or naming the shapes.
    uint32_t require(const std::string& name, uint64_t ne0, uint64_t ne1 = 1);
    /// As require(), or kNoWeight when the file has no tensor `name`.
    int32_t optional(const std::string& name, uint64_t ne0, uint64_t ne1 = 1);
    /// A matrix of tensors stacked by rows (same ne0).
    MatId mat(std::initializer_list<uint32_t> parts);
    /// A vector of 1-D tensors concatenated; kNoWeight if any part is kNoWeight.
    VecId vec(std::initializer_list<int32_t> parts);
    /// Dequantized values of a tensor of the table (host-side use, e.g.
    /// RoPE frequency factors), [ne1 * ne0].
    std::vector<float> values(uint32_t tensor) const;

    const gguf::File& file() const { return f_; }
    const HParams& hp() const { return d_.hp; }

  private:
    const gguf::File& f_;
    ModelDesc& d_;
};

/// "blk.<l>.<suffix>"
std::string layer_tensor(uint32_t l, const char* suffix);

/// Architecture-independent helpers for specs.
namespace arch {
/// Shared by the llama-family specs: an optional positive uint32 key
/// `<arch>.<suffix>` (0 when absent).
uint32_t read_u32_opt(const gguf::File& f, const HParams& hp, const std::string& suffix);
/// An optional float key `<arch>.<suffix>` that must be positive when present (0 when absent).
float read_positive_opt(const gguf::File& f, const HParams& hp, const std::string& suffix);
}  // namespace arch

// The specs, one per file in this folder (archs.def); declared here so that
// each file's definition has external linkage.
#define WB_ARCH(spec) extern const ArchSpec spec;
#include "model/arch/archs.def"
#undef WB_ARCH

/// The decoder graph of llama, mistral, qwen2, qwen3 and phi3 (arch/llama.cpp).
void graph_llama(const ModelDesc& d, Ops& ops);
/// The decoder graph of gemma2 and gemma3 (arch/gemma.cpp).
void graph_gemma(const ModelDesc& d, Ops& ops);
/// The attention settings of layer `l`: scale, soft-cap, and the window
/// on sliding-window layers.
AttnParams layer_attn_params(const HParams& hp, uint32_t l);
/// The output head every decoder graph ends with: the rows of the residual
/// stream `x` [n_tok, n_embd] that want logits are gathered to [n_out,
/// n_embd], RMS-normed with output_norm, multiplied by Woutput (token_embd
/// when tied) into logits [n_out, n_vocab], soft-capped when
/// final_softcap > 0 (gemma2), and handed to ops.logits().
void output_head(const ModelDesc& d, Ops& ops, Act x);
/// Tensors every llama-family layer has in split form (attn_q/k/v,
/// ffn_gate/up) plus the given options; used by llama, qwen2, qwen3, gemma2, gemma3.
void describe_split_layers(TensorTable& t, ModelDesc& d, bool qkv_bias, bool qk_norm,
                           bool post_norms);
/// token_embd, output_norm and output (absent = tied to token_embd).
void describe_io(TensorTable& t, ModelDesc& d);

}  // namespace wb::model
