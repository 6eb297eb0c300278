// CpuModel: loads the weight table as f32 and runs the architecture's graph
// with CpuOps, whose every op is a few plain loops over the ubatch's rows.

#include "model/cpu_model.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "ggml/fp16.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/arch/arch.h"
#include "model/graph.h"
#include "model/rope.h"

namespace wb::model {

namespace {

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

/// GELU, tanh approximation (Hendrycks & Gimpel 2016; ggml_gelu).
float gelu_tanh(float x) {
    const double xd = x;
    return static_cast<float>(
        0.5 * xd * (1.0 + std::tanh(0.7978845608028654 * (xd + 0.044715 * xd * xd * xd))));
}

/// Weights as f32: the parts of a matrix or vector dequantized and stacked.
std::vector<float> dequantize_parts(const ModelDesc& d, const std::vector<uint32_t>& parts) {
    std::vector<float> out;
    for (uint32_t p : parts) {
        const TensorRef& t = d.tensors[p];
        const size_t row = ggml::row_bytes(t.type, t.ne0);  // bytes of one row of ne0 values
        const size_t base = out.size();
        out.resize(base + t.ne0 * t.ne1);
        for (uint64_t r = 0; r < t.ne1; ++r) {
            ggml::dequantize_row(t.type, t.data + r * row, out.data() + base + r * t.ne0, t.ne0,
                                 t.name);
        }
    }
    return out;
}

}  // namespace

/// The graph's ops on host buffers for one ubatch.
class CpuOps final : public Ops {
  public:
    CpuOps(CpuModel& m, const Batch& b, const std::vector<uint32_t>& slots,
           const KvCellTable& table, std::vector<float>& logits)
        : m_(m), hp_(m.desc_.hp), batch_(b), slots_(slots), table_(table), logits_(logits) {
        for (size_t t = 0; t < b.size(); ++t)
            if (b.output[t]) out_rows_.push_back(t);
    }

    Act act(const char* name, uint32_t width, Rows rows) override {
        size_t i = 0;
        while (i < m_.act_names_.size() && m_.act_names_[i] != name) ++i;
        if (i == m_.act_names_.size()) {
            m_.act_names_.emplace_back(name);
            m_.acts_.emplace_back();
        }
        m_.acts_[i].assign(n_rows(rows) * width, 0.0f);  // [n, width]
        return Act{static_cast<uint32_t>(i), 0, width, width, rows};
    }

    void embed(Act y, MatId table, float scale) override {
        const std::vector<float>& emb = m_.mats_[table];  // [n_vocab, n_embd]
        for (size_t t = 0; t < batch_.size(); ++t) {
            const float* e = emb.data() + size_t(batch_.token[t]) * y.width;
            float* yt = row(y, t);
            for (uint32_t i = 0; i < y.width; ++i) yt[i] = e[i] * scale;
        }
    }

    void rms_norm(Act y, Act x, VecId g, float eps) override {
        for (size_t t = 0; t < n_rows(x.rows); ++t)
            rmsnorm(row(y, t), row(x, t), m_.vecs_[g].data(), x.width, eps);
    }

    void add_rms_norm(Act x, Act b, VecId g, Act y, float eps) override {
        add(x, b);
        rms_norm(y, x, g, eps);
    }

    void head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) override {
        std::vector<float> tmp(head_dim);  // [head_dim]
        for (size_t t = 0; t < n_rows(x.rows); ++t) {
            for (uint32_t h = 0; h < n_head; ++h) {
                float* head = row(x, t) + size_t{h} * head_dim;
                rmsnorm(tmp.data(), head, m_.vecs_[g].data(), head_dim, eps);
                std::memcpy(head, tmp.data(), head_dim * sizeof(float));
            }
        }
    }

    void matmul(Act y, Act x, MatId w) override {
        const MatDesc& md = m_.desc_.mats[w];
        for (size_t t = 0; t < n_rows(x.rows); ++t) {
            matvec(row(y, t), m_.mats_[w].data(), row(x, t), static_cast<uint32_t>(md.ne0),
                   static_cast<uint32_t>(md.rows));
        }
    }

    void add_bias(Act y, VecId b) override {
        const std::vector<float>& bias = m_.vecs_[b];  // [width]
        for (size_t t = 0; t < n_rows(y.rows); ++t) {
            float* yt = row(y, t);
            for (uint32_t i = 0; i < y.width; ++i) yt[i] += bias[i];
        }
    }

    void rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
              const RopeConfig& rc) override {
        const uint32_t half = hp_.n_rot / 2;
        std::vector<float> cs(batch_.size() * half * 2);  // [n_tok, n_rot/2, (cos, sin)]
        rope_cos_sin(hp_, rc, batch_.pos.data(), batch_.size(), cs.data());
        for (size_t t = 0; t < batch_.size(); ++t) {
            rotate(row(q, t), n_head, head_dim, &cs[t * half * 2]);
            rotate(row(k, t), n_head_kv, head_dim, &cs[t * half * 2]);
        }
    }

    void kv_write(uint32_t layer, Act k, Act v) override {
        const uint32_t kv_dim = hp_.kv_dim();
        for (size_t t = 0; t < batch_.size(); ++t) {
            float* kc = &m_.k_cache_[layer][size_t{slots_[t]} * kv_dim];  // [kv_dim]
            float* vc = &m_.v_cache_[layer][size_t{slots_[t]} * kv_dim];  // [kv_dim]
            for (uint32_t i = 0; i < kv_dim; ++i) {
                kc[i] = to_cache(row(k, t)[i]);
                vc[i] = to_cache(row(v, t)[i]);
            }
        }
    }

    void attention(Act o, Act q, const AttnParams& a) override {
        const uint32_t hd = a.head_dim, kv_dim = a.n_head_kv * hd;
        const uint32_t group = a.n_head / a.n_head_kv;        // query heads per kv head (GQA)
        const std::vector<float>& kc = m_.k_cache_[a.layer];  // [n_ctx, kv_dim]
        const std::vector<float>& vc = m_.v_cache_[a.layer];  // [n_ctx, kv_dim]
        std::vector<double> p;                                // [span] weights of one head
        for (size_t t = 0; t < batch_.size(); ++t) {
            // The token's sequence's cells by position 0..pos; a window
            // keeps the last `window` of them.
            uint32_t first = table_.spans[2 * t], n_span = table_.spans[2 * t + 1];
            if (a.window > 0 && n_span > a.window) {
                first += n_span - a.window;
                n_span = a.window;
            }
            const uint32_t* span = &table_.cells[first];  // [n_span] cells
            p.resize(n_span);
            for (uint32_t h = 0; h < a.n_head; ++h) {
                const float* qh = row(q, t) + size_t{h} * hd;  // [head_dim]
                const size_t kv_col = size_t{h / group} * hd;
                // scores, soft-cap, softmax with max subtraction, in double
                double mx = -INFINITY;
                for (uint32_t j = 0; j < n_span; ++j) {
                    const float* kj = &kc[size_t{span[j]} * kv_dim + kv_col];
                    float dot = 0.0f;
                    for (uint32_t d = 0; d < hd; ++d) dot += qh[d] * kj[d];
                    p[j] = double{dot * a.scale};
                    if (a.softcap > 0.0f) {
                        const double cap = a.softcap;
                        p[j] = cap * std::tanh(p[j] / cap);
                    }
                    mx = std::max(mx, p[j]);
                }
                double sum = 0.0;
                for (uint32_t j = 0; j < n_span; ++j) {
                    p[j] = std::exp(p[j] - mx);
                    sum += p[j];
                }
                float* oh = row(o, t) + size_t{h} * hd;  // [head_dim]
                for (uint32_t d = 0; d < hd; ++d) {
                    double acc = 0.0;
                    for (uint32_t j = 0; j < n_span; ++j)
                        acc += p[j] * double{vc[size_t{span[j]} * kv_dim + kv_col + d]};
                    oh[d] = static_cast<float>(acc / sum);
                }
            }
        }
    }

    void glu(Act y, Act gate, Act up, FfnActivation act) override {
        for (size_t t = 0; t < n_rows(y.rows); ++t) {
            const float* g = row(gate, t);
            const float* u = row(up, t);
            float* yt = row(y, t);
            for (uint32_t i = 0; i < y.width; ++i)
                yt[i] = (act == FfnActivation::SiLU ? silu(g[i]) : gelu_tanh(g[i])) * u[i];
        }
    }

    void add(Act x, Act b) override {
        for (size_t t = 0; t < n_rows(x.rows); ++t) {
            float* xt = row(x, t);
            const float* bt = row(b, t);
            for (uint32_t i = 0; i < x.width; ++i) xt[i] += bt[i];
        }
    }

    void gather_outputs(Act y, Act x) override {
        for (size_t i = 0; i < out_rows_.size(); ++i)
            std::memcpy(row(y, i), row(x, out_rows_[i]), x.width * sizeof(float));
    }

    void softcap(Act x, float cap) override {
        for (size_t t = 0; t < n_rows(x.rows); ++t) {
            float* xt = row(x, t);
            for (uint32_t i = 0; i < x.width; ++i)
                xt[i] = static_cast<float>(double{cap} * std::tanh(double{xt[i]} / double{cap}));
        }
    }

    void logits(Act x) override {
        logits_.resize(out_rows_.size() * x.width);  // [n_out, n_vocab]
        for (size_t i = 0; i < out_rows_.size(); ++i)
            std::memcpy(&logits_[i * x.width], row(x, i), x.width * sizeof(float));
    }

  private:
    size_t n_rows(Rows r) const { return r == Rows::Tokens ? batch_.size() : out_rows_.size(); }
    float* row(const Act& a, size_t r) { return m_.acts_[a.buf].data() + r * a.stride + a.col; }
    /// What a cache element becomes when stored (identity for F32, f16 rounding for F16).
    float to_cache(float v) const {
        if (m_.ctx_.kv_type == KvType::F16) return ggml::fp16_to_fp32(ggml::fp32_to_fp16(v));
        return v;
    }
    /// Rotates the first n_rot dims of each of n_heads heads of x
    /// ([n_heads, head_dim]) by cs ([n_rot/2, (cos, sin)]).
    void rotate(float* x, uint32_t n_heads, uint32_t head_dim, const float* cs) const {
        const uint32_t half = hp_.n_rot / 2;
        for (uint32_t h = 0; h < n_heads; ++h) {
            float* head = x + size_t{h} * head_dim;
            for (uint32_t i = 0; i < half; ++i) {
                // Normal pairs adjacent dims; NeoX pairs dim i with dim i + n_rot/2.
                const uint32_t a = hp_.rope_mode == RopeMode::Normal ? 2 * i : i;
                const uint32_t b = hp_.rope_mode == RopeMode::Normal ? 2 * i + 1 : i + half;
                const float c = cs[2 * i], s = cs[2 * i + 1];
                const float x0 = head[a], x1 = head[b];
                head[a] = x0 * c - x1 * s;
                head[b] = x0 * s + x1 * c;
            }
        }
    }

    CpuModel& m_;
    const HParams& hp_;
    const Batch& batch_;
    const std::vector<uint32_t>& slots_;
    const KvCellTable& table_;
    std::vector<float>& logits_;
    std::vector<size_t> out_rows_;  // [n_out] batch rows whose logits are returned
};

CpuModel::CpuModel(const gguf::File& f, const ContextParams& ctx)
    : desc_(ModelDesc::from_gguf(f)),
      ctx_(ctx),
      cells_(ctx.n_ctx, ctx.n_seq_max, desc_.hp.n_vocab) {
    for (const MatDesc& m : desc_.mats) mats_.push_back(dequantize_parts(desc_, m.parts));
    for (const VecDesc& v : desc_.vecs) vecs_.push_back(dequantize_parts(desc_, v.parts));
    for (TensorRef& t : desc_.tensors) t.data = nullptr;  // the File may close
    const size_t kv = size_t{ctx.n_ctx} * desc_.hp.kv_dim();
    k_cache_.assign(desc_.hp.n_layer, std::vector<float>(kv, 0.0f));
    v_cache_.assign(desc_.hp.n_layer, std::vector<float>(kv, 0.0f));
}

uint64_t CpuModel::weight_bytes() const {
    uint64_t n = 0;
    for (const auto& m : mats_) n += m.size() * sizeof(float);
    for (const auto& v : vecs_) n += v.size() * sizeof(float);
    return n;
}

uint64_t CpuModel::kv_bytes() const {
    uint64_t n = 0;
    for (size_t l = 0; l < k_cache_.size(); ++l)
        n += (k_cache_[l].size() + v_cache_[l].size()) * sizeof(float);
    return n;
}

void CpuModel::decode(const Batch& batch, std::vector<float>& logits) {
    const std::vector<uint32_t> slots = cells_.find_slots(batch);  // [n] cell per token
    const KvCellTable table = cells_.cell_table(batch, slots);     // cells each token attends to
    CpuOps ops(*this, batch, slots, table, logits);
    logits.clear();
    desc_.arch->graph(desc_, ops);
    cells_.commit(batch, slots);
}

MemoryReport CpuModel::memory_report() const {
    MemoryReport r;
    r.weights = weight_bytes();
    r.kv_cache = kv_bytes();
    return r;
}

}  // namespace wb::model
