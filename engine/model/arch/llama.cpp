// llama (Llama 1/2/3.x, Mistral, SmolLM, TinyLlama, ...): the spec and the
// decoder graph that llama, qwen2, qwen3 and phi3 share. The graph follows
// llama.cpp's build_llama / build_qwen2 / build_qwen3 / build_phi3
// (src/models/*.cpp); what differs between them is in their weight tables
// (biases, QK-norm, fused tensors), read here as optional weights.

#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

namespace {

/// Llama keys beyond the common ones: a sliding window when the file sets
/// one (Mistral 7B v0.1 style: every layer), and nothing else.
void read_llama(const gguf::File& f, HParams& hp) {
    hp.n_swa = arch::read_u32_opt(f, hp, "attention.sliding_window");
    if (hp.n_swa > 0) hp.swa_layers.assign(hp.swa_layers.size(), 1);
}

void describe_llama(TensorTable& t, ModelDesc& d) {
    describe_io(t, d);
    // Llama 3.x long-context RoPE: per-frequency divisors (llama.cpp reads
    // rope_freqs.weight for every layer; convert_hf_to_gguf.py writes it
    // from rope_scaling {factor, low/high_freq_factor, original length}).
    const int32_t ff = t.optional("rope_freqs.weight", d.hp.n_rot / 2);
    if (ff != kNoWeight) d.hp.rope_freq_factors = t.values(static_cast<uint32_t>(ff));
    describe_split_layers(t, d, /*qkv_bias=*/false, /*qk_norm=*/false, /*post_norms=*/false);
}

}  // namespace

AttnParams layer_attn_params(const HParams& hp, uint32_t l) {
    AttnParams p;
    p.layer = l;
    p.n_head = hp.n_head;
    p.n_head_kv = hp.n_head_kv;
    p.head_dim = hp.head_dim;
    p.scale = hp.attn_scale;
    p.softcap = hp.attn_softcap;
    p.window = hp.is_swa(l) ? hp.n_swa : 0;
    return p;
}

void output_head(const ModelDesc& d, Ops& ops, Act x) {
    const HParams& hp = d.hp;
    Act xo = ops.act("x_out", hp.n_embd, Rows::Outputs);            // [n_out, n_embd]
    Act xo_norm = ops.act("x_out_norm", hp.n_embd, Rows::Outputs);  // [n_out, n_embd]
    Act logits = ops.act("logits", hp.n_vocab, Rows::Outputs);      // [n_out, n_vocab]
    ops.gather_outputs(xo, x);
    ops.rms_norm(xo_norm, xo, d.output_norm, hp.rms_eps);
    ops.matmul(logits, xo_norm, d.output);
    if (hp.final_softcap > 0.0f) ops.softcap(logits, hp.final_softcap);
    ops.logits(logits);
}

const ArchSpec kArchLlama = {"llama", RopeMode::Normal, 9, read_llama, describe_llama, graph_llama};

//   x = token_embd[token]
//   per layer l:
//     xb = RMSNorm(x) * attn_norm
//     q | k | v = Wqkv xb (+ bias)             [qwen2: biases]
//     q, k = RMSNorm per head * q_norm, k_norm  [qwen3]
//     RoPE(q, k, pos); K/V cache[cell] = k, v
//     att = softmax(q K^T / sqrt(head_dim)) V   (GQA, causal, window if set)
//     x += Wo att
//     xb = RMSNorm(x) * ffn_norm
//     x += Wdown (silu(Wgate xb) * Wup xb)      (SwiGLU)
//   logits = Woutput (RMSNorm(x) * output_norm) (Woutput = token_embd when tied)
void graph_llama(const ModelDesc& d, Ops& ops) {
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
    Act gate_up = ops.act("gate_up", 2 * n_ff);    // [n_tok, 2 n_ff] gate | up
    Act ff = ops.act("ff", n_ff);                  // [n_tok, n_ff] silu(gate) * up

    ops.embed(x, d.token_embd, hp.embd_scale);
    // Each residual add is fused with the RMSNorm after it (the FFN norm,
    // the next layer's attention norm); the last one stands alone because
    // the output norm runs on the gathered output rows only.
    ops.rms_norm(xb, x, d.layers[0].attn_norm, eps);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        const LayerDesc& L = d.layers[l];
        ops.matmul(qkv, xb, L.qkv);
        if (L.qkv_bias != kNoWeight) ops.add_bias(qkv, L.qkv_bias);
        if (L.q_norm != kNoWeight) {
            ops.head_rms_norm(q, hp.n_head, hp.head_dim, L.q_norm, eps);
            ops.head_rms_norm(k, hp.n_head_kv, hp.head_dim, L.k_norm, eps);
        }
        ops.rope(q, hp.n_head, k, hp.n_head_kv, hp.head_dim, hp.layer_rope(l));
        ops.kv_write(l, k, v);
        ops.attention(att, q, layer_attn_params(hp, l));
        ops.matmul(proj, att, L.wo);
        ops.add_rms_norm(x, proj, L.ffn_norm, xb, eps);
        ops.matmul(gate_up, xb, L.gate_up);
        ops.glu(ff, gate_up.cols(0, n_ff), gate_up.cols(n_ff, n_ff), hp.ffn_act);
        ops.matmul(proj, ff, L.down);
        if (l + 1 < hp.n_layer) {
            ops.add_rms_norm(x, proj, d.layers[l + 1].attn_norm, xb, eps);
        } else {
            ops.add(x, proj);
        }
    }
    output_head(d, ops, x);
}

}  // namespace wb::model
