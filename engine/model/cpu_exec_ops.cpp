// The graph's ops for CpuExecModel: matmuls through engine/cpu's threaded
// quantized kernels, attention threaded over (token, head), the cheap
// element-wise ops threaded over rows only when a ubatch has many.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/matmul.h"
#include "ggml/fp16.h"
#include "ggml/types.h"
#include "model/arch/arch.h"
#include "model/cpu_exec_model.h"
#include "model/graph.h"
#include "model/rope.h"

namespace wb::model {

namespace {

/// out = x / sqrt(mean(x^2) + eps) * g (RMSNorm; sum of squares in double
/// as the reference does).
void rmsnorm(float* out, const float* x, const float* g, uint32_t n, float eps) {
    double ss = 0.0;
    for (uint32_t i = 0; i < n; ++i) ss += double{x[i]} * double{x[i]};
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + double{eps}));
    for (uint32_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * g[i];
}

float silu(float x) {
    return x / (1.0f + std::exp(-x));
}

/// GELU, tanh approximation (Hendrycks & Gimpel 2016; ggml_gelu).
float gelu_tanh(float x) {
    return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
}

float dot(const float* a, const float* b, uint32_t n) {
    float acc[8] = {};
    uint32_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (uint32_t l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

// Rows below this many elements in all are not worth waking the pool for.
constexpr size_t kParallelElems = 1 << 15;

}  // namespace

class CpuExecOps final : public Ops {
  public:
    CpuExecOps(CpuExecModel& m, const Batch& b, const std::vector<uint32_t>& slots,
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
        const cpu::Weight& w = m_.mats_[table];  // [n_vocab, n_embd]
        for (size_t t = 0; t < batch_.size(); ++t) {
            uint64_t r = static_cast<uint64_t>(batch_.token[t]);
            size_t p = 0;
            while (r >= w.parts[p].rows) r -= w.parts[p++].rows;
            float* yt = row(y, t);
            ggml::dequantize_row(w.parts[p].type, w.parts[p].data + r * w.parts[p].row_bytes, yt,
                                 y.width);
            for (uint32_t i = 0; i < y.width; ++i) yt[i] *= scale;
        }
    }

    void rms_norm(Act y, Act x, VecId g, float eps) override {
        const float* gv = m_.vecs_[g].data();
        for_rows(x.rows, x.width,
                 [&](size_t t) { rmsnorm(row(y, t), row(x, t), gv, x.width, eps); });
    }

    void add_rms_norm(Act x, Act b, VecId g, Act y, float eps) override {
        const float* gv = m_.vecs_[g].data();
        for_rows(x.rows, x.width, [&](size_t t) {
            float* xt = row(x, t);
            const float* bt = row(b, t);
            for (uint32_t i = 0; i < x.width; ++i) xt[i] += bt[i];
            rmsnorm(row(y, t), xt, gv, x.width, eps);
        });
    }

    void head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) override {
        const float* gv = m_.vecs_[g].data();
        for_rows(x.rows, x.width, [&](size_t t) {
            float tmp[1024];
            std::vector<float> big;
            float* buf = tmp;
            if (head_dim > 1024) {
                big.resize(head_dim);
                buf = big.data();
            }
            for (uint32_t h = 0; h < n_head; ++h) {
                float* head = row(x, t) + size_t{h} * head_dim;
                rmsnorm(buf, head, gv, head_dim, eps);
                std::memcpy(head, buf, head_dim * sizeof(float));
            }
        });
    }

    void matmul(Act y, Act x, MatId w) override {
        const size_t n = n_rows(x.rows);
        if (n == 0) return;
        cpu::matmul(m_.pool_, m_.isa_, m_.mats_[w], row(x, 0), x.stride, n, row(y, 0), y.stride,
                    m_.scratch_, m_.int8_acts_);
    }

    void add_bias(Act y, VecId b) override {
        const float* bias = m_.vecs_[b].data();  // [width]
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
        for_rows(Rows::Tokens, q.width, [&](size_t t) {
            rotate(row(q, t), n_head, head_dim, &cs[t * half * 2]);
            rotate(row(k, t), n_head_kv, head_dim, &cs[t * half * 2]);
        });
    }

    void kv_write(uint32_t layer, Act k, Act v) override {
        const uint32_t kv_dim = hp_.kv_dim();
        const bool f16 = m_.ctx_.kv_type == KvType::F16;
        for (size_t t = 0; t < batch_.size(); ++t) {
            float* kc = &m_.k_cache_[layer][size_t{slots_[t]} * kv_dim];  // [kv_dim]
            float* vc = &m_.v_cache_[layer][size_t{slots_[t]} * kv_dim];  // [kv_dim]
            std::memcpy(kc, row(k, t), kv_dim * sizeof(float));
            std::memcpy(vc, row(v, t), kv_dim * sizeof(float));
            if (f16) {  // what an f16 cache holds
                for (uint32_t i = 0; i < kv_dim; ++i) {
                    kc[i] = ggml::fp16_to_fp32(ggml::fp32_to_fp16(kc[i]));
                    vc[i] = ggml::fp16_to_fp32(ggml::fp32_to_fp16(vc[i]));
                }
            }
        }
    }

    void attention(Act o, Act q, const AttnParams& a) override {
        const uint32_t hd = a.head_dim, kv_dim = a.n_head_kv * hd;
        const uint32_t group = a.n_head / a.n_head_kv;  // query heads per kv head (GQA)
        const float* kc = m_.k_cache_[a.layer].data();  // [n_ctx, kv_dim]
        const float* vc = m_.v_cache_[a.layer].data();  // [n_ctx, kv_dim]
        const auto task = [&](uint32_t i, unsigned thread) {
            const size_t t = i / a.n_head;
            const uint32_t h = i % a.n_head;
            // The token's sequence's cells by position; a window keeps the last ones.
            uint32_t first = table_.spans[2 * t], n_span = table_.spans[2 * t + 1];
            if (a.window > 0 && n_span > a.window) {
                first += n_span - a.window;
                n_span = a.window;
            }
            const uint32_t* span = &table_.cells[first];
            std::vector<float>& p = m_.attn_scratch_[thread];
            p.resize(n_span);
            const float* qh = row(q, t) + size_t{h} * hd;
            const size_t kv_col = size_t{h / group} * hd;
            float mx = -INFINITY;
            for (uint32_t j = 0; j < n_span; ++j) {
                float s = dot(qh, kc + size_t{span[j]} * kv_dim + kv_col, hd) * a.scale;
                if (a.softcap > 0.0f) s = a.softcap * std::tanh(s / a.softcap);
                p[j] = s;
                mx = std::max(mx, s);
            }
            float sum = 0.0f;
            for (uint32_t j = 0; j < n_span; ++j) {
                p[j] = std::exp(p[j] - mx);
                sum += p[j];
            }
            float* oh = row(o, t) + size_t{h} * hd;
            std::fill(oh, oh + hd, 0.0f);
            for (uint32_t j = 0; j < n_span; ++j) {
                const float* vj = vc + size_t{span[j]} * kv_dim + kv_col;
                const float pj = p[j];
                for (uint32_t d = 0; d < hd; ++d) oh[d] += pj * vj[d];
            }
            const float inv = 1.0f / sum;
            for (uint32_t d = 0; d < hd; ++d) oh[d] *= inv;
        };
        m_.pool_.run(static_cast<uint32_t>(batch_.size() * a.n_head), task);
    }

    void glu(Act y, Act gate, Act up, FfnActivation act) override {
        for_rows(y.rows, y.width, [&](size_t t) {
            const float* g = row(gate, t);
            const float* u = row(up, t);
            float* yt = row(y, t);
            if (act == FfnActivation::SiLU) {
                for (uint32_t i = 0; i < y.width; ++i) yt[i] = silu(g[i]) * u[i];
            } else {
                for (uint32_t i = 0; i < y.width; ++i) yt[i] = gelu_tanh(g[i]) * u[i];
            }
        });
    }

    void add(Act x, Act b) override {
        for_rows(x.rows, x.width, [&](size_t t) {
            float* xt = row(x, t);
            const float* bt = row(b, t);
            for (uint32_t i = 0; i < x.width; ++i) xt[i] += bt[i];
        });
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

    /// fn(t) for every row of an activation of `rows` x `width`: on the pool
    /// when there is enough work, else on this thread.
    template <class F>
    void for_rows(Rows rows, uint32_t width, F&& fn) {
        const size_t n = n_rows(rows);
        if (n > 1 && n * width >= kParallelElems) {
            m_.pool_.run(static_cast<uint32_t>(n), [&](uint32_t t, unsigned) { fn(t); });
        } else {
            for (size_t t = 0; t < n; ++t) fn(t);
        }
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

    CpuExecModel& m_;
    const HParams& hp_;
    const Batch& batch_;
    const std::vector<uint32_t>& slots_;
    const KvCellTable& table_;
    std::vector<float>& logits_;
    std::vector<size_t> out_rows_;  // [n_out] batch rows whose logits are returned
};

void CpuExecModel::decode(const Batch& batch, std::vector<float>& logits) {
    const std::vector<uint32_t> slots = cells_.find_slots(batch);  // [n] cell per token
    const KvCellTable table = cells_.cell_table(batch, slots);     // cells each token attends to
    CpuExecOps ops(*this, batch, slots, table, logits);
    logits.clear();
    desc_.arch->graph(desc_, ops);
    cells_.commit(batch, slots);
}

}  // namespace wb::model
