#pragma once
// llama-architecture hyperparameters read from GGUF metadata, with
// llama.cpp's defaults for optional keys (rope freq base 10000, ...).

#include <cstdint>
#include <string>

namespace wb::gguf {
class File;
}

namespace wb::model {

/// How RoPE pairs the dimensions of a head: Normal rotates adjacent pairs
/// (x[2i], x[2i+1]) as llama does; NeoX rotates (x[i], x[i + n_rot/2]).
/// (RoFormer, Su et al. 2021; ggml's GGML_ROPE_TYPE_NORM / _NEOX.)
enum class RopeMode { Normal, NeoX };

struct HParams {
    std::string arch;          ///< general.architecture ("llama", ...)
    std::string name;          ///< general.name, may be empty
    uint32_t n_vocab = 0;      ///< tokens (rows of token_embd)
    uint32_t n_ctx_train = 0;  ///< <arch>.context_length
    uint32_t n_embd = 0;       ///< <arch>.embedding_length
    uint32_t n_layer = 0;      ///< <arch>.block_count
    uint32_t n_head = 0;       ///< <arch>.attention.head_count
    uint32_t n_head_kv = 0;    ///< <arch>.attention.head_count_kv (default n_head)
    uint32_t n_ff = 0;         ///< <arch>.feed_forward_length
    uint32_t head_dim = 0;     ///< n_embd / n_head (or <arch>.attention.key_length)
    uint32_t n_rot = 0;        ///< <arch>.rope.dimension_count (default head_dim)
    float rms_eps = 1e-5f;     ///< <arch>.attention.layer_norm_rms_epsilon
    float rope_freq_base = 10000.0f;  ///< <arch>.rope.freq_base
    RopeMode rope_mode = RopeMode::Normal;
    bool tied_embeddings = false;     ///< output.weight absent: logits use token_embd

    /// Reads and validates the hyperparameters. Throws gguf::Error naming
    /// the key when one is missing, zero, or inconsistent (n_head not a
    /// multiple of n_head_kv, n_embd not n_head * head_dim, ...), and
    /// std::runtime_error "unsupported architecture X" for other archs.
    static HParams from_gguf(const gguf::File& file);
};

}  // namespace wb::model
