#pragma once
// Hyperparameters of a decoder-only transformer read from GGUF metadata
// (llama.cpp's `<arch>.*` keys, src/llama-arch.cpp LLM_KV names, with
// llama.cpp's defaults for optional keys), for every architecture this
// engine runs. The common keys are read here; each architecture's own keys
// (soft-caps, sliding window, ...) by its spec in engine/model/arch/.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "errors/errors.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

/// How RoPE pairs the dimensions of a head: Normal rotates adjacent pairs
/// (x[2i], x[2i+1]) as llama does; NeoX rotates (x[i], x[i + n_rot/2]).
/// (RoFormer, Su et al. 2021; ggml's GGML_ROPE_TYPE_NORM / _NEOX.)
enum class RopeMode { Normal, NeoX };

/// Activation of the gated feed-forward: SiLU gives SwiGLU (llama, qwen,
/// phi3; Shazeer 2020), GeluTanh gives GeGLU with the tanh approximation of
/// GELU (gemma; Hendrycks & Gimpel 2016).
enum class FfnActivation { SiLU, GeluTanh };

/// One RoPE frequency set. Pair i of a head at position p rotates by
///   theta_i = p * freq_scale * freq_base^(-2i / n_rot) / freq_factor[i]
/// (ggml_rope_ext with ext_factor 0: linear scaling is freq_scale = 1 /
/// rope.scaling.factor; Llama-3 frequency factors come from rope_freqs.weight).
struct RopeConfig {
    float freq_base = 10000.0f;  ///< <arch>.rope.freq_base
    float freq_scale = 1.0f;     ///< 1 / <arch>.rope.scaling.factor (linear scaling)
};

/// A model this engine does not run: an architecture it has no spec for,
/// or an option of a supported one it does not implement (mixture of
/// experts, MLA, recurrent layers, ALiBi, YaRN, ...). what() reads
/// "<path>: unsupported architecture 'X' (general.architecture); supported:
/// llama, ..." or "<path>: metadata key 'K' = V: <what it is> is not
/// supported (supported architectures: ...)".
/// Its feature() is "architecture" for an unknown architecture, "architecture
/// option" otherwise; field() names the metadata key or tensor.
class UnsupportedModel : public wb::UnsupportedError {
  public:
    UnsupportedModel(const std::string& what, std::string feature, std::string field)
        : UnsupportedError(std::move(feature), what, std::move(field)) {}
};

struct HParams {
    std::string arch;          ///< general.architecture ("llama", "qwen2", ...)
    std::string name;          ///< general.name, may be empty
    uint32_t n_vocab = 0;      ///< tokens (rows of token_embd)
    uint32_t n_ctx_train = 0;  ///< <arch>.context_length
    uint32_t n_embd = 0;       ///< <arch>.embedding_length
    uint32_t n_layer = 0;      ///< <arch>.block_count
    uint32_t n_head = 0;       ///< <arch>.attention.head_count
    uint32_t n_head_kv = 0;    ///< <arch>.attention.head_count_kv (default n_head)
    uint32_t n_ff = 0;         ///< <arch>.feed_forward_length
    /// <arch>.attention.key_length (default n_embd / n_head); n_head *
    /// head_dim may differ from n_embd (qwen3, gemma3).
    uint32_t head_dim = 0;
    uint32_t n_rot = 0;  ///< <arch>.rope.dimension_count (default head_dim; less = partial rotary)
    float rms_eps = 1e-5f;            ///< <arch>.attention.layer_norm_rms_epsilon
    float rope_freq_base = 10000.0f;  ///< <arch>.rope.freq_base (= rope.freq_base)
    RopeMode rope_mode = RopeMode::Normal;
    bool tied_embeddings = false;  ///< output.weight absent: logits use token_embd

    // ---- architecture options (set by the spec, engine/model/arch/) ----
    FfnActivation ffn_act = FfnActivation::SiLU;
    float embd_scale = 1.0f;     ///< token embeddings are multiplied by this (gemma: sqrt(n_embd))
    float attn_scale = 0.0f;     ///< multiplies q.k before the softmax (default 1/sqrt(head_dim))
    float attn_softcap = 0.0f;   ///< scores become c * tanh(s / c) when > 0 (gemma2)
    float final_softcap = 0.0f;  ///< logits become c * tanh(l / c) when > 0 (gemma2)
    /// Sliding-window attention: a token at position p of a layer with
    /// swa_layers[l] != 0 attends to positions (p - n_swa, p] only
    /// (llama.cpp's LLAMA_SWA_TYPE_STANDARD). 0 = no window anywhere.
    uint32_t n_swa = 0;
    std::vector<uint8_t> swa_layers;  ///< [n_layer] 1 = sliding-window layer
    RopeConfig rope;                  ///< RoPE of full-attention layers
    RopeConfig rope_swa;  ///< RoPE of sliding-window layers (gemma3: own base and scale)
    std::vector<float> rope_freq_factors;  ///< [n_rot/2] divisors of each frequency, or empty

    /// Whether layer `l` uses the sliding window.
    bool is_swa(uint32_t l) const { return n_swa > 0 && l < swa_layers.size() && swa_layers[l]; }
    /// The RoPE set of layer `l`.
    const RopeConfig& layer_rope(uint32_t l) const { return is_swa(l) ? rope_swa : rope; }
    /// Values per token in the KV cache of one layer: n_head_kv * head_dim.
    uint32_t kv_dim() const { return n_head_kv * head_dim; }
    /// Query width: n_head * head_dim.
    uint32_t q_dim() const { return n_head * head_dim; }

    /// Reads and validates the hyperparameters, dispatching on
    /// general.architecture to the architecture's spec for its own keys.
    /// Throws gguf::Error naming the key when one is missing, zero, or
    /// inconsistent (n_head not a multiple of n_head_kv, a tokenizer token
    /// list whose length is not token_embd's row count, ...), and
    /// UnsupportedModel for an architecture or an option (mixture of
    /// experts, ALiBi, YaRN, ...) the engine does not run, naming the key,
    /// its value and the supported architectures.
    static HParams from_gguf(const gguf::File& file);
};

}  // namespace wb::model
