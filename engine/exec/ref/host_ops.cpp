#include "exec/ref/host_ops.h"

#include <cmath>
#include <cstring>

#include "model/rope.h"

namespace wb::model {

namespace {

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

/// Rotates the first n_rot dims of each of n_heads heads of x
/// ([n_heads, head_dim]) by cs ([n_rot/2, (cos, sin)]).
void rotate(const HParams& hp, float* x, uint32_t n_heads, uint32_t head_dim, const float* cs) {
    const uint32_t half = hp.n_rot / 2;
    for (uint32_t h = 0; h < n_heads; ++h) {
        float* head = x + size_t{h} * head_dim;
        for (uint32_t i = 0; i < half; ++i) {
            // Normal pairs adjacent dims; NeoX pairs dim i with dim i + n_rot/2.
            const uint32_t a = hp.rope_mode == RopeMode::Normal ? 2 * i : i;
            const uint32_t b = hp.rope_mode == RopeMode::Normal ? 2 * i + 1 : i + half;
            const float c = cs[2 * i], s = cs[2 * i + 1];
            const float x0 = head[a], x1 = head[b];
            head[a] = x0 * c - x1 * s;
            head[b] = x0 * s + x1 * c;
        }
    }
}

}  // namespace

HostOps::HostOps(HostActs& acts, const std::vector<std::vector<float>>& vecs, const HParams& hp,
                 const Batch& batch, std::vector<float>& logits)
    : hp_(hp), batch_(batch), acts_(acts), vecs_(vecs), logits_(logits) {
    for (size_t t = 0; t < batch.size(); ++t)
        if (batch.output[t]) out_rows_.push_back(t);
}

void HostOps::for_rows(size_t n, uint32_t, const std::function<void(size_t)>& fn) {
    for (size_t r = 0; r < n; ++r) fn(r);
}

Act HostOps::act(const char* name, uint32_t width, Rows rows) {
    size_t i = 0;
    while (i < acts_.names.size() && acts_.names[i] != name) ++i;
    if (i == acts_.names.size()) {
        acts_.names.emplace_back(name);
        acts_.bufs.emplace_back();
    }
    acts_.bufs[i].assign(n_rows(rows) * width, 0.0f);  // [n, width]
    return Act{static_cast<uint32_t>(i), 0, width, width, rows};
}

void HostOps::rms_norm(Act y, Act x, VecId g, float eps) {
    const float* gv = vecs_[g].data();  // [width]
    for_rows(n_rows(x.rows), x.width,
             [&](size_t t) { rmsnorm(row(y, t), row(x, t), gv, x.width, eps); });
}

void HostOps::add_rms_norm(Act x, Act b, VecId g, Act y, float eps) {
    const float* gv = vecs_[g].data();  // [width]
    for_rows(n_rows(x.rows), x.width, [&](size_t t) {
        float* xt = row(x, t);
        const float* bt = row(b, t);
        for (uint32_t i = 0; i < x.width; ++i) xt[i] += bt[i];
        rmsnorm(row(y, t), xt, gv, x.width, eps);
    });
}

void HostOps::head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) {
    const float* gv = vecs_[g].data();  // [head_dim]
    for_rows(n_rows(x.rows), x.width, [&](size_t t) {
        std::vector<float> tmp(head_dim);  // [head_dim] one normalized head
        for (uint32_t h = 0; h < n_head; ++h) {
            float* head = row(x, t) + size_t{h} * head_dim;
            rmsnorm(tmp.data(), head, gv, head_dim, eps);
            std::memcpy(head, tmp.data(), head_dim * sizeof(float));
        }
    });
}

void HostOps::add_bias(Act y, VecId b) {
    const float* bias = vecs_[b].data();  // [width]
    for_rows(n_rows(y.rows), y.width, [&](size_t t) {
        float* yt = row(y, t);
        for (uint32_t i = 0; i < y.width; ++i) yt[i] += bias[i];
    });
}

void HostOps::rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
                   const RopeConfig& rc) {
    const uint32_t half = hp_.n_rot / 2;
    std::vector<float> cs(batch_.size() * half * 2);  // [n_tok, n_rot/2, (cos, sin)]
    rope_cos_sin(hp_, rc, batch_.pos.data(), batch_.size(), cs.data());
    for_rows(batch_.size(), q.width, [&](size_t t) {
        rotate(hp_, row(q, t), n_head, head_dim, &cs[t * half * 2]);
        rotate(hp_, row(k, t), n_head_kv, head_dim, &cs[t * half * 2]);
    });
}

void HostOps::glu(Act y, Act gate, Act up, FfnActivation act) {
    for_rows(n_rows(y.rows), y.width, [&](size_t t) {
        const float* g = row(gate, t);
        const float* u = row(up, t);
        float* yt = row(y, t);
        for (uint32_t i = 0; i < y.width; ++i)
            yt[i] = (act == FfnActivation::SiLU ? silu(g[i]) : gelu_tanh(g[i])) * u[i];
    });
}

void HostOps::add(Act x, Act b) {
    for_rows(n_rows(x.rows), x.width, [&](size_t t) {
        float* xt = row(x, t);
        const float* bt = row(b, t);
        for (uint32_t i = 0; i < x.width; ++i) xt[i] += bt[i];
    });
}

void HostOps::gather_outputs(Act y, Act x) {
    for (size_t i = 0; i < out_rows_.size(); ++i)
        std::memcpy(row(y, i), row(x, out_rows_[i]), x.width * sizeof(float));
}

void HostOps::softcap(Act x, float cap) {
    for_rows(n_rows(x.rows), x.width, [&](size_t t) {
        float* xt = row(x, t);
        for (uint32_t i = 0; i < x.width; ++i)
            xt[i] = static_cast<float>(double{cap} * std::tanh(double{xt[i]} / double{cap}));
    });
}

void HostOps::logits(Act x) {
    logits_.resize(out_rows_.size() * x.width);  // [n_out, n_vocab]
    for (size_t i = 0; i < out_rows_.size(); ++i)
        std::memcpy(&logits_[i * x.width], row(x, i), x.width * sizeof(float));
}

}  // namespace wb::model
