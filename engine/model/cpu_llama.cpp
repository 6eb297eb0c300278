#include "model/cpu_llama.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ggml/fp16.h"
#include "ggml/types.h"
#include "gguf/gguf.h"

namespace wb::model {

namespace {

/// Dequantizes tensor `name` to f32 after checking its shape is
/// [ne0, ne1] (ggml order; ne1 = 1 for vectors). Result: [ne1, ne0] row-major.
std::vector<float> load_tensor(const gguf::File& f, const std::string& name, uint64_t ne0,
                               uint64_t ne1) {
    const gguf::TensorInfo& t = f.tensor(name);
    if (t.ne[0] != ne0 || t.ne[1] != ne1 || t.ne[2] != 1 || t.ne[3] != 1) {
        std::string want = ne1 == 1 ? "[" + std::to_string(ne0) + "]"
                                    : "[" + std::to_string(ne0) + ", " + std::to_string(ne1) + "]";
        throw gguf::Error(f.path(), t.info_offset, "tensor '" + name + "'",
                          "shape " + t.shape_string() + ", expected " + want);
    }
    const ggml::TypeTraits* tt = ggml::type_traits(t.type);
    if (!tt || !tt->computable) throw ggml::UnsupportedType(t.type, name);
    const size_t row = ggml::row_bytes(t.type, ne0);  // bytes of one row of ne0 values
    std::vector<float> out(ne0 * ne1);                // [ne1, ne0]
    for (uint64_t r = 0; r < ne1; ++r) {
        ggml::dequantize_row(t.type, t.data + r * row, out.data() + r * ne0, ne0, name);
    }
    return out;
}

/// out[n_out] = W[n_out, n_in] x[n_in]. Eight float partial sums per row
/// (what a SIMD dot product does) keep it fast without -ffast-math.
void matvec(float* out, const float* w, const float* x, uint32_t n_in, uint32_t n_out) {
    for (uint32_t o = 0; o < n_out; ++o) {
        const float* row = w + size_t{o} * n_in;
        float acc[8] = {};
        uint32_t i = 0;
        for (; i + 8 <= n_in; i += 8) {
            for (uint32_t l = 0; l < 8; ++l) acc[l] += row[i + l] * x[i + l];
        }
        float sum =
            ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
        for (; i < n_in; ++i) sum += row[i] * x[i];
        out[o] = sum;
    }
}

/// out[n] = x[n] / sqrt(mean(x^2) + eps) * weight[n] (RMSNorm, Zhang &
/// Sennrich 2019; llama.cpp's ggml_rms_norm then ggml_mul). Sum in double.
void rmsnorm(float* out, const float* x, const float* weight, uint32_t n, float eps) {
    double ss = 0.0;
    for (uint32_t i = 0; i < n; ++i) ss += double{x[i]} * double{x[i]};
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + double{eps}));
    for (uint32_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * weight[i];
}

float silu(float x) {
    return x / (1.0f + std::exp(-x));
}

}  // namespace

CpuLlama::CpuLlama(const gguf::File& f, const ContextParams& ctx)
    : hp_(HParams::from_gguf(f)), ctx_(ctx), cells_(ctx.n_ctx, ctx.n_seq_max, hp_.n_vocab) {
    const uint32_t n_embd = hp_.n_embd;
    const uint32_t n_kv_dim = hp_.n_head_kv * hp_.head_dim;
    token_embd_ = load_tensor(f, "token_embd.weight", n_embd, hp_.n_vocab);
    output_norm_ = load_tensor(f, "output_norm.weight", n_embd, 1);
    if (!hp_.tied_embeddings) output_ = load_tensor(f, "output.weight", n_embd, hp_.n_vocab);
    layers_.resize(hp_.n_layer);
    for (uint32_t l = 0; l < hp_.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        Layer& L = layers_[l];
        L.attn_norm = load_tensor(f, p + "attn_norm.weight", n_embd, 1);
        L.wq = load_tensor(f, p + "attn_q.weight", n_embd, n_embd);
        L.wk = load_tensor(f, p + "attn_k.weight", n_embd, n_kv_dim);
        L.wv = load_tensor(f, p + "attn_v.weight", n_embd, n_kv_dim);
        L.wo = load_tensor(f, p + "attn_output.weight", n_embd, n_embd);
        L.ffn_norm = load_tensor(f, p + "ffn_norm.weight", n_embd, 1);
        L.w_gate = load_tensor(f, p + "ffn_gate.weight", n_embd, hp_.n_ff);
        L.w_up = load_tensor(f, p + "ffn_up.weight", n_embd, hp_.n_ff);
        L.w_down = load_tensor(f, p + "ffn_down.weight", hp_.n_ff, n_embd);
        L.k_cache.assign(size_t{ctx.n_ctx} * n_kv_dim, 0.0f);
        L.v_cache.assign(size_t{ctx.n_ctx} * n_kv_dim, 0.0f);
    }
}

float CpuLlama::to_cache(float v) const {
    if (ctx_.kv_type == KvType::F16) return ggml::fp16_to_fp32(ggml::fp32_to_fp16(v));
    return v;
}

void CpuLlama::rope(float* x, uint32_t n_heads, int32_t pos) const {
    const uint32_t half = hp_.n_rot / 2;
    for (uint32_t h = 0; h < n_heads; ++h) {
        float* head = x + size_t{h} * hp_.head_dim;  // [head_dim]
        for (uint32_t i = 0; i < half; ++i) {
            // theta_i = pos * base^(-2i / n_rot)  (RoFormer eq. 15)
            const double theta = pos * std::pow(double{hp_.rope_freq_base},
                                                -2.0 * i / static_cast<double>(hp_.n_rot));
            const float c = static_cast<float>(std::cos(theta));
            const float s = static_cast<float>(std::sin(theta));
            // Normal pairs adjacent dims; NeoX pairs dim i with dim i + n_rot/2.
            const uint32_t a = hp_.rope_mode == RopeMode::Normal ? 2 * i : i;
            const uint32_t b = hp_.rope_mode == RopeMode::Normal ? 2 * i + 1 : i + half;
            const float x0 = head[a], x1 = head[b];
            head[a] = x0 * c - x1 * s;
            head[b] = x0 * s + x1 * c;
        }
    }
}

void CpuLlama::decode(const Batch& batch, std::vector<float>& logits) {
    const std::vector<uint32_t> slots = cells_.find_slots(batch);  // [n] cell per token
    const KvCellTable table = cells_.cell_table(batch, slots);     // cells each token attends to

    const size_t n = batch.size();
    const uint32_t n_embd = hp_.n_embd, n_ff = hp_.n_ff, hd = hp_.head_dim;
    const uint32_t n_head = hp_.n_head, n_head_kv = hp_.n_head_kv;
    const uint32_t n_kv_dim = n_head_kv * hd;
    const uint32_t group = n_head / n_head_kv;  // query heads per kv head (GQA)
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

    std::vector<float> x(n * n_embd);         // [n, n_embd] residual stream
    std::vector<float> xb(n_embd);            // [n_embd] normed input of one token
    std::vector<float> q(n * n_embd);         // [n, n_head * head_dim]
    std::vector<float> k(n_kv_dim);           // [n_head_kv * head_dim] of one token
    std::vector<float> v(n_kv_dim);           // [n_head_kv * head_dim] of one token
    std::vector<float> attn(n_embd);          // [n_head * head_dim] attention output of one token
    std::vector<float> proj(n_embd);          // [n_embd] Wo attn or Wdown h
    std::vector<float> gate(n_ff), up(n_ff);  // [n_ff]
    std::vector<double> p;                    // [span] attention weights of one head

    for (size_t t = 0; t < n; ++t) {
        const float* e = token_embd_.data() + size_t(batch.token[t]) * n_embd;
        std::memcpy(&x[t * n_embd], e, n_embd * sizeof(float));
    }

    for (Layer& L : layers_) {
        // Q for every token; K/V straight into the token's cache cell, so
        // attention below sees the whole batch (each token's span of the
        // cell table stops at its own position: causality).
        for (size_t t = 0; t < n; ++t) {
            rmsnorm(xb.data(), &x[t * n_embd], L.attn_norm.data(), n_embd, hp_.rms_eps);
            matvec(&q[t * n_embd], L.wq.data(), xb.data(), n_embd, n_embd);
            matvec(k.data(), L.wk.data(), xb.data(), n_embd, n_kv_dim);
            matvec(v.data(), L.wv.data(), xb.data(), n_embd, n_kv_dim);
            rope(&q[t * n_embd], n_head, batch.pos[t]);
            rope(k.data(), n_head_kv, batch.pos[t]);
            float* kc = &L.k_cache[size_t{slots[t]} * n_kv_dim];  // [n_kv_dim]
            float* vc = &L.v_cache[size_t{slots[t]} * n_kv_dim];  // [n_kv_dim]
            for (uint32_t i = 0; i < n_kv_dim; ++i) {
                kc[i] = to_cache(k[i]);
                vc[i] = to_cache(v[i]);
            }
        }
        for (size_t t = 0; t < n; ++t) {
            const uint32_t* span = &table.cells[table.spans[2 * t]];  // [n_span] cells, by pos
            const uint32_t n_span = table.spans[2 * t + 1];
            p.resize(n_span);
            for (uint32_t h = 0; h < n_head; ++h) {
                const float* qh = &q[t * n_embd + size_t{h} * hd];  // [head_dim]
                const uint32_t kvh = h / group;
                // scores, softmax with max subtraction, in double
                double mx = -INFINITY;
                for (uint32_t j = 0; j < n_span; ++j) {
                    const float* kj = &L.k_cache[size_t{span[j]} * n_kv_dim + size_t{kvh} * hd];
                    float dot = 0.0f;
                    for (uint32_t d = 0; d < hd; ++d) dot += qh[d] * kj[d];
                    p[j] = double{dot * scale};
                    mx = std::max(mx, p[j]);
                }
                double sum = 0.0;
                for (uint32_t j = 0; j < n_span; ++j) {
                    p[j] = std::exp(p[j] - mx);
                    sum += p[j];
                }
                float* oh = &attn[size_t{h} * hd];  // [head_dim]
                for (uint32_t d = 0; d < hd; ++d) {
                    double acc = 0.0;
                    for (uint32_t j = 0; j < n_span; ++j) {
                        acc += p[j] *
                               double{L.v_cache[size_t{span[j]} * n_kv_dim + size_t{kvh} * hd + d]};
                    }
                    oh[d] = static_cast<float>(acc / sum);
                }
            }
            float* xt = &x[t * n_embd];  // [n_embd]
            matvec(proj.data(), L.wo.data(), attn.data(), n_embd, n_embd);
            for (uint32_t i = 0; i < n_embd; ++i) xt[i] += proj[i];

            // SwiGLU feed-forward (Shazeer 2020): down(silu(gate xb) * up xb)
            rmsnorm(xb.data(), xt, L.ffn_norm.data(), n_embd, hp_.rms_eps);
            matvec(gate.data(), L.w_gate.data(), xb.data(), n_embd, n_ff);
            matvec(up.data(), L.w_up.data(), xb.data(), n_embd, n_ff);
            for (uint32_t i = 0; i < n_ff; ++i) gate[i] = silu(gate[i]) * up[i];
            matvec(proj.data(), L.w_down.data(), gate.data(), n_ff, n_embd);
            for (uint32_t i = 0; i < n_embd; ++i) xt[i] += proj[i];
        }
    }

    const float* w_out =
        hp_.tied_embeddings ? token_embd_.data() : output_.data();  // [n_vocab, n_embd]
    logits.assign(batch.n_outputs() * hp_.n_vocab, 0.0f);           // [n_outputs, n_vocab]
    size_t row = 0;
    for (size_t t = 0; t < n; ++t) {
        if (!batch.output[t]) continue;
        rmsnorm(xb.data(), &x[t * n_embd], output_norm_.data(), n_embd, hp_.rms_eps);
        matvec(&logits[row * hp_.n_vocab], w_out, xb.data(), n_embd, hp_.n_vocab);
        ++row;
    }
    cells_.commit(batch, slots);
}

}  // namespace wb::model
