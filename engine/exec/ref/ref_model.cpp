// RefModel: loads the weight table as f32 and runs the architecture's graph
// with CpuOps, whose every op is a few plain loops over the ubatch's rows.

#include "exec/ref/ref_model.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "exec/ref/host_ops.h"
#include "ggml/fp16.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/arch/arch.h"
#include "model/graph.h"

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

/// The graph's ops on host buffers for one ubatch: the row-wise ops from
/// HostOps, and here the embedding, matmul, KV writes and attention as
/// plain loops on f32 weights.
class CpuOps final : public HostOps {
  public:
    CpuOps(RefModel& m, const Batch& b, const std::vector<uint32_t>& slots,
           const KvCellTable& table, std::vector<float>& logits)
        : HostOps(m.acts_, m.vecs_, m.desc_.hp, b, logits), m_(m), slots_(slots), table_(table) {}

    void embed(Act y, MatId table, float scale) override {
        const std::vector<float>& emb = m_.mats_[table];  // [n_vocab, n_embd]
        for (size_t t = 0; t < batch_.size(); ++t) {
            const float* e = emb.data() + size_t(batch_.token[t]) * y.width;
            float* yt = row(y, t);
            for (uint32_t i = 0; i < y.width; ++i) yt[i] = e[i] * scale;
        }
    }

    void matmul(Act y, Act x, MatId w) override {
        const MatDesc& md = m_.desc_.mats[w];
        for (size_t t = 0; t < n_rows(x.rows); ++t) {
            matvec(row(y, t), m_.mats_[w].data(), row(x, t), static_cast<uint32_t>(md.ne0),
                   static_cast<uint32_t>(md.rows));
        }
    }

    void kv_write(uint32_t layer, Act k, Act v) override {
        const uint32_t kv_dim = hp_.kv_dim();
        for (size_t t = 0; t < batch_.size(); ++t) {
            float* kc = &m_.k_cache_[layer][size_t{slots_[t]} * kv_dim];  // [kv_dim]
            float* vc = &m_.v_cache_[layer][size_t{slots_[t]} * kv_dim];  // [kv_dim]
            if (kv_block_values(m_.ctx_.kv_type) > 1) {  // q8_0 / q4_0: through the blocks
                round_trip(row(k, t), kc, kv_dim);
                round_trip(row(v, t), vc, kv_dim);
                continue;
            }
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

  private:
    /// What a cache element becomes when stored (identity for F32, f16 rounding for F16).
    float to_cache(float v) const {
        if (m_.ctx_.kv_type == KvType::F16) return ggml::fp16_to_fp32(ggml::fp32_to_fp16(v));
        return v;
    }

    /// dst[n] = the values of src[n] as a block-quantized cache row holds
    /// them: ggml's reference quantizer, then its dequantizer.
    void round_trip(const float* src, float* dst, uint32_t n) const {
        const uint32_t type = kv_ggml_type(m_.ctx_.kv_type);
        std::vector<uint8_t> blocks(ggml::row_bytes(type, n));
        ggml::quantize_row(type, src, blocks.data(), n, "K/V cache");
        ggml::dequantize_row(type, blocks.data(), dst, n, "K/V cache");
    }

    RefModel& m_;
    const std::vector<uint32_t>& slots_;
    const KvCellTable& table_;
};

RefModel::RefModel(const gguf::File& f, const ContextParams& ctx)
    : desc_(ModelDesc::from_gguf(f)),
      ctx_(ctx),
      cells_(ctx.n_ctx, ctx.n_seq_max, desc_.hp.n_vocab, ctx.kv_block_size) {
    if (const std::string p = kv_type_problem(ctx.kv_type, desc_.hp.head_dim); !p.empty())
        throw std::invalid_argument(p);
    for (const MatDesc& m : desc_.mats) mats_.push_back(dequantize_parts(desc_, m.parts));
    for (const VecDesc& v : desc_.vecs) vecs_.push_back(dequantize_parts(desc_, v.parts));
    for (TensorRef& t : desc_.tensors) t.data = nullptr;  // the File may close
    const size_t kv = size_t{cells_.size()} * desc_.hp.kv_dim();
    k_cache_.assign(desc_.hp.n_layer, std::vector<float>(kv, 0.0f));
    v_cache_.assign(desc_.hp.n_layer, std::vector<float>(kv, 0.0f));
}

uint64_t RefModel::weight_bytes() const {
    uint64_t n = 0;
    for (const auto& m : mats_) n += m.size() * sizeof(float);
    for (const auto& v : vecs_) n += v.size() * sizeof(float);
    return n;
}

uint64_t RefModel::kv_bytes() const {
    uint64_t n = 0;
    for (size_t l = 0; l < k_cache_.size(); ++l)
        n += (k_cache_[l].size() + v_cache_[l].size()) * sizeof(float);
    return n;
}

void RefModel::decode(const Batch& batch, std::vector<float>& logits) {
    const std::vector<uint32_t> slots = cells_.find_slots(batch);  // [n] cell per token
    const KvCellTable table = cells_.cell_table(batch, slots);     // cells each token attends to
    CpuOps ops(*this, batch, slots, table, logits);
    logits.clear();
    desc_.arch->graph(desc_, ops);
    cells_.commit(batch, slots);
}

MemoryReport RefModel::memory_report() const {
    MemoryReport r;
    r.weights = weight_bytes();
    r.kv_cache = kv_bytes();
    return r;
}

}  // namespace wb::model
