#pragma once
// CPU reference forward pass of the llama architecture: plain f32 loops in
// the style of llama2.c's run.c, one buffer per intermediate with its shape
// written next to it. It is the ground truth the Vulkan shaders are checked
// against, so it favours reading like the math over speed.
//
// The graph mirrors llama.cpp's build_llama (src/llama-model.cpp):
//   x = token_embd[token]
//   per layer l:
//     xb = RMSNorm(x) * attn_norm
//     q = Wq xb, k = Wk xb, v = Wv xb; RoPE(q, k, pos)
//     K/V cache[cell] = k, v   (rounded to f16 when KvType::F16)
//     o = softmax(q K^T / sqrt(head_dim)) V over the cells of the token's own sequence
//         with pos <= its pos (KvCells::cell_table; GQA: q head h reads kv head h / group)
//     x += Wo o
//     xb = RMSNorm(x) * ffn_norm
//     x += Wdown (silu(Wgate xb) * Wup xb)
//   logits = Woutput (RMSNorm(x) * output_norm)   (Woutput = token_embd when tied)

#include <cstdint>
#include <string>
#include <vector>

#include "model/kv_cells.h"
#include "model/model.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

class CpuLlama : public Model {
  public:
    /// Reads hyperparameters and dequantizes every weight of `file` to f32
    /// (types F32, F16, BF16, Q8_0, Q4_0), and allocates the KV cache for
    /// `ctx`. The File may be closed afterwards. Throws: gguf::Error for a
    /// missing tensor or a tensor whose shape disagrees with the
    /// hyperparameters (naming the tensor, its shape and the expected
    /// one); ggml::UnsupportedType naming the tensor for other types;
    /// std::invalid_argument for n_ctx or n_seq_max of 0; whatever
    /// HParams::from_gguf throws.
    CpuLlama(const gguf::File& file, const ContextParams& ctx);

    const HParams& hparams() const override { return hp_; }
    const ContextParams& context() const override { return ctx_; }
    std::string backend_name() const override { return "cpu"; }
    void decode(const Batch& batch, std::vector<float>& logits) override;
    void seq_rm(int32_t seq_id) override { cells_.seq_rm(seq_id); }
    uint32_t n_free_cells() const override { return cells_.n_free(); }

    /// The cache bookkeeping (read-only), e.g. for tests and the UI.
    const KvCells& cells() const { return cells_; }

  private:
    /// One transformer block's weights, f32. Matrices are [n_out, n_in]
    /// row-major: row o holds the n_in weights of output o (ggml's
    /// [ne0 = n_in, ne1 = n_out]).
    struct Layer {
        std::vector<float> attn_norm;  // [n_embd]
        std::vector<float> wq;         // [n_embd, n_embd]
        std::vector<float> wk;         // [n_kv_dim, n_embd]   n_kv_dim = n_head_kv * head_dim
        std::vector<float> wv;         // [n_kv_dim, n_embd]
        std::vector<float> wo;         // [n_embd, n_embd]
        std::vector<float> ffn_norm;   // [n_embd]
        std::vector<float> w_gate;     // [n_ff, n_embd]
        std::vector<float> w_up;       // [n_ff, n_embd]
        std::vector<float> w_down;     // [n_embd, n_ff]
        std::vector<float> k_cache;    // [n_ctx, n_kv_dim] K of the token in each cell
        std::vector<float> v_cache;    // [n_ctx, n_kv_dim] V of the token in each cell
    };

    /// Rotates the first n_rot dims of each head of `x` ([n_heads, head_dim]) by `pos`.
    void rope(float* x, uint32_t n_heads, int32_t pos) const;
    /// What a cache element becomes when stored (identity for F32, f16 rounding for F16).
    float to_cache(float v) const;

    HParams hp_;
    ContextParams ctx_;
    KvCells cells_;
    std::vector<float> token_embd_;   // [n_vocab, n_embd]
    std::vector<float> output_norm_;  // [n_embd]
    std::vector<float> output_;       // [n_vocab, n_embd]; empty when tied (use token_embd_)
    std::vector<Layer> layers_;       // [n_layer]
};

}  // namespace wb::model
