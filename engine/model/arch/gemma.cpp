// gemma2 and gemma3 (dense text models): the spec and graph, after
// llama.cpp's src/models/gemma2-iswa.cpp and gemma3.cpp and its
// load_hparams for them (src/llama-model.cpp):
//  - token embeddings scaled by sqrt(n_embd);
//  - GeGLU (GELU, tanh approximation) feed-forward;
//  - RMSNorm after attention and after the FFN, before each residual add
//    (norm weights are stored with gemma's +1 already applied);
//  - query scale 1/sqrt(head_dim), except the 27B shapes (46 layers for
//    gemma2, 62 for gemma3) where it is 1/sqrt(n_embd / n_head)
//    (gemma_pytorch's query_pre_attn_scalar; GGUF has no key for it);
//  - sliding-window attention on some layers: gemma2 window
//    attention.sliding_window (default 4096) on even layers; gemma3 window
//    on every layer but each sliding_window_pattern-th (default 6), whose
//    RoPE has its own base rope.freq_base_swa (default 10000) and no
//    linear scaling;
//  - gemma2: attention scores and final logits soft-capped
//    (attn_logit_softcapping, final_logit_softcapping);
//  - gemma3: per-head RMSNorm of Q and K before RoPE.

#include <cmath>

#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

namespace {

/// llama.cpp's hparams.set_swa_pattern(n): layer l is a sliding-window
/// layer unless l % n == n - 1 (n == 0: all of them).
void set_swa_pattern(HParams& hp, uint32_t n) {
    for (uint32_t l = 0; l < hp.swa_layers.size(); ++l)
        hp.swa_layers[l] = n == 0 || (l % n) < (n - 1) ? 1 : 0;
}

void query_scale(HParams& hp, uint32_t n_layer_27b) {
    const double d = hp.n_layer == n_layer_27b ? double(hp.n_embd) / hp.n_head : hp.head_dim;
    hp.attn_scale = static_cast<float>(1.0 / std::sqrt(d));
}

void read_gemma2(const gguf::File& f, HParams& hp) {
    hp.ffn_act = FfnActivation::GeluTanh;
    hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    hp.n_swa = arch::read_u32_opt(f, hp, "attention.sliding_window");
    if (!f.find(hp.arch + ".attention.sliding_window")) hp.n_swa = 4096;  // gemma 2's value
    set_swa_pattern(hp, 2);
    hp.attn_softcap = arch::read_positive_opt(f, hp, "attn_logit_softcapping");
    hp.final_softcap = arch::read_positive_opt(f, hp, "final_logit_softcapping");
    query_scale(hp, 46);
}

void read_gemma3(const gguf::File& f, HParams& hp) {
    hp.ffn_act = FfnActivation::GeluTanh;
    hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
    hp.n_swa = arch::read_u32_opt(f, hp, "attention.sliding_window");
    if (hp.n_swa == 0) {
        // Absent, or present as 0: say which (a 0 window would let the
        // local layers see no token at all).
        const bool present = f.find(hp.arch + ".attention.sliding_window") != nullptr;
        throw gguf::Error(f.path(), std::nullopt,
                          "metadata key '" + hp.arch + ".attention.sliding_window'",
                          present ? "value 0 is not a window: gemma3's local layers need a "
                                    "sliding window of at least 1 token"
                                  : "missing (required for gemma3)");
    }
    const uint32_t pattern = arch::read_u32_opt(f, hp, "attention.sliding_window_pattern");
    set_swa_pattern(hp, f.find(hp.arch + ".attention.sliding_window_pattern") ? pattern : 6);
    const float base_swa = arch::read_positive_opt(f, hp, "rope.freq_base_swa");
    hp.rope_swa.freq_base = base_swa > 0.0f ? base_swa : 10000.0f;
    hp.rope_swa.freq_scale = 1.0f;
    hp.final_softcap = arch::read_positive_opt(f, hp, "final_logit_softcapping");
    query_scale(hp, 62);
}

void describe_gemma2(TensorTable& t, ModelDesc& d) {
    describe_io(t, d);
    describe_split_layers(t, d, /*qkv_bias=*/false, /*qk_norm=*/false, /*post_norms=*/true);
}

void describe_gemma3(TensorTable& t, ModelDesc& d) {
    describe_io(t, d);
    describe_split_layers(t, d, /*qkv_bias=*/false, /*qk_norm=*/true, /*post_norms=*/true);
}

}  // namespace

const ArchSpec kArchGemma2 = {"gemma2",    RopeMode::NeoX,  11,
                              read_gemma2, describe_gemma2, graph_gemma};
const ArchSpec kArchGemma3 = {"gemma3",    RopeMode::NeoX,  13,
                              read_gemma3, describe_gemma3, graph_gemma};

//   x = token_embd[token] * sqrt(n_embd)
//   per layer l:
//     xb = RMSNorm(x) * attn_norm
//     q | k | v = Wqkv xb;  q, k = RMSNorm per head * q_norm, k_norm   [gemma3]
//     RoPE(q, k, pos) with the layer's frequencies; K/V cache[cell] = k, v
//     att = softmax(cap(q K^T * scale)) V  (window on sliding layers; cap [gemma2])
//     x += RMSNorm(Wo att) * post_attention_norm
//     xb = RMSNorm(x) * ffn_norm
//     x += RMSNorm(Wdown (gelu(Wgate xb) * Wup xb)) * post_ffw_norm
//   logits = cap(Woutput (RMSNorm(x) * output_norm))                 [gemma2]
void graph_gemma(const ModelDesc& d, Ops& ops) {
    const HParams& hp = d.hp;
    const uint32_t n_embd = hp.n_embd, n_ff = hp.n_ff, q_dim = hp.q_dim(), kv_dim = hp.kv_dim();
    const float eps = hp.rms_eps;
    Act x = ops.act("x", n_embd);                  // [n_tok, n_embd] residual stream
    Act xb = ops.act("xb", n_embd);                // [n_tok, n_embd] normed input of a sublayer
    Act qkv = ops.act("qkv", q_dim + 2 * kv_dim);  // [n_tok, q_dim + 2 kv_dim] q | k | v
    Act q = qkv.cols(0, q_dim);                    // [n_tok, n_head * head_dim]
    Act k = qkv.cols(q_dim, kv_dim);               // [n_tok, n_head_kv * head_dim]
    Act v = qkv.cols(q_dim + kv_dim, kv_dim);      // [n_tok, n_head_kv * head_dim]
    Act att = ops.act("att", q_dim);               // [n_tok, q_dim] attention output
    Act proj = ops.act("proj", n_embd);            // [n_tok, n_embd] Wo att, or Wdown ff
    Act post = ops.act("post", n_embd);            // [n_tok, n_embd] proj after its post-norm
    Act gate_up = ops.act("gate_up", 2 * n_ff);    // [n_tok, 2 n_ff] gate | up
    Act ff = ops.act("ff", n_ff);                  // [n_tok, n_ff] gelu(gate) * up

    ops.embed(x, d.token_embd, hp.embd_scale);
    ops.rms_norm(xb, x, d.layers[0].attn_norm, eps);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        const LayerDesc& L = d.layers[l];
        ops.matmul(qkv, xb, L.qkv);
        if (L.q_norm != kNoWeight) {
            ops.head_rms_norm(q, hp.n_head, hp.head_dim, L.q_norm, eps);
            ops.head_rms_norm(k, hp.n_head_kv, hp.head_dim, L.k_norm, eps);
        }
        ops.rope(q, hp.n_head, k, hp.n_head_kv, hp.head_dim, hp.layer_rope(l));
        ops.kv_write(l, k, v);
        ops.attention(att, q, layer_attn_params(hp, l));
        ops.matmul(proj, att, L.wo);
        ops.rms_norm(post, proj, L.post_attn_norm, eps);
        ops.add_rms_norm(x, post, L.ffn_norm, xb, eps);
        ops.matmul(gate_up, xb, L.gate_up);
        ops.glu(ff, gate_up.cols(0, n_ff), gate_up.cols(n_ff, n_ff), hp.ffn_act);
        ops.matmul(proj, ff, L.down);
        ops.rms_norm(post, proj, L.post_ffn_norm, eps);
        if (l + 1 < hp.n_layer) {
            ops.add_rms_norm(x, post, d.layers[l + 1].attn_norm, xb, eps);
        } else {
            ops.add(x, post);
        }
    }
    output_head(d, ops, x);
}

}  // namespace wb::model
