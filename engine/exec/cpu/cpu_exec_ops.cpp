// The graph's ops for CpuExecModel: matmuls through this folder's threaded
// quantized kernels, attention threaded over (token, head), the cheap
// element-wise ops threaded over rows only when a ubatch has many.

#include <algorithm>
#include <cmath>
#include <cstring>

#include "exec/cpu/cpu_exec_model.h"
#include "exec/cpu/f16_store.h"
#include "exec/cpu/matmul.h"
#include "exec/ref/host_ops.h"
#include "ggml/fp16.h"
#include "ggml/types.h"
#include "model/arch/arch.h"
#include "model/graph.h"
#include "model/timed_ops.h"

namespace wb::model {

namespace {

// Rows below this many elements in all are not worth waking the pool for.
constexpr size_t kParallelElems = 1 << 15;

}  // namespace

/// The graph's ops for one ubatch: the row-wise ops from HostOps (rows
/// spread over the pool when a ubatch has many), and here the embedding,
/// the quantized matmuls, KV writes and attention threaded over
/// (token, head).
class CpuExecOps final : public HostOps {
  public:
    CpuExecOps(CpuExecModel& m, const Batch& b, const std::vector<uint32_t>& slots,
               const KvCellTable& table, std::vector<float>& logits)
        : HostOps(m.acts_, m.vecs_, m.desc_.hp, b, logits), m_(m), slots_(slots), table_(table) {}

    void embed(Act y, MatId table, float scale) override {
        const cpu::Weight& w = m_.mats_[table];  // [n_vocab, n_embd]
        for (size_t t = 0; t < batch_.size(); ++t) {
            uint64_t r = static_cast<uint64_t>(batch_.token[t]);
            size_t p = 0;
            while (r >= w.parts[p].rows) r -= w.parts[p++].rows;
            float* yt = row(y, t);
            const cpu::WeightPart& part = w.parts[p];
            const uint8_t* src = part.data + r * part.row_bytes;
            std::vector<uint8_t> bytes;  // the row in ggml's layout, from an interleaved group
            if (part.layout == cpu::Layout::Interleaved8) {
                bytes.resize(part.row_bytes);
                cpu::deinterleave_row(
                    part.type, part.data + r / cpu::kGroupRows * cpu::kGroupRows * part.row_bytes,
                    part.row_bytes, static_cast<int>(r % cpu::kGroupRows), bytes.data());
                src = bytes.data();
            }
            ggml::dequantize_row(part.type, src, yt, y.width);
            for (uint32_t i = 0; i < y.width; ++i) yt[i] *= scale;
        }
    }

    void matmul(Act y, Act x, MatId w) override {
        const size_t n = n_rows(x.rows);
        if (n == 0) return;
        cpu::matmul(*m_.pool_, m_.isa_, m_.mats_[w], row(x, 0), x.stride, n, row(y, 0), y.stride,
                    m_.scratch_, m_.int8_acts_);
    }

    void glu(Act y, Act gate, Act up, FfnActivation act) override {
        if (act != FfnActivation::SiLU) return HostOps::glu(y, gate, up, act);
        const cpu::SiluGluFn f = m_.silu_glu_;
        for_rows(n_rows(y.rows), y.width,
                 [&](size_t t) { f(y.width, row(gate, t), row(up, t), row(y, t)); });
    }

    void kv_write(uint32_t layer, Act k, Act v) override {
        const uint32_t kv_dim = hp_.kv_dim();
        const KvType type = m_.ctx_.kv_type;
        const size_t row_bytes = kv_row_bytes(type, kv_dim);
        const cpu::F16StoreFn to_f16 = m_.f16_store_;
        for_rows(batch_.size(), 2 * kv_dim, [&](size_t t) {
            uint8_t* kc = &m_.k_cache_[layer][size_t{slots_[t]} * row_bytes];  // [kv_dim]
            uint8_t* vc = &m_.v_cache_[layer][size_t{slots_[t]} * row_bytes];  // [kv_dim]
            switch (type) {
                case KvType::F32:
                    std::memcpy(kc, row(k, t), kv_dim * sizeof(float));
                    std::memcpy(vc, row(v, t), kv_dim * sizeof(float));
                    return;
                case KvType::F16:  // round to nearest even, as ggml's cpy
                    to_f16(row(k, t), kc, kv_dim);
                    to_f16(row(v, t), vc, kv_dim);
                    return;
                default:  // blocks of 32 by ggml's reference quantizer
                    ggml::quantize_row(kv_ggml_type(type), row(k, t), kc, kv_dim, "K cache");
                    ggml::quantize_row(kv_ggml_type(type), row(v, t), vc, kv_dim, "V cache");
                    return;
            }
        });
    }

    void attention(Act o, Act q, const AttnParams& a) override {
        const uint32_t hd = a.head_dim, kv_dim = a.n_head_kv * hd;
        const uint32_t group = a.n_head / a.n_head_kv;  // query heads per kv head (GQA)
        const KvType type = m_.ctx_.kv_type;
        const uint8_t* kc = m_.k_cache_[a.layer].data();  // [n_ctx, kv_dim] of the cache type
        const uint8_t* vc = m_.v_cache_[a.layer].data();  // [n_ctx, kv_dim] of the cache type
        const size_t row_bytes = kv_row_bytes(type, kv_dim);
        const size_t head_bytes = kv_row_bytes(type, hd);  // one kv head's part of a row
        const cpu::DotFn k_dot = m_.k_dot_->dot;
        const cpu::ActKind q_kind = m_.k_dot_->act;  // F32, or Q8_0 for a block-quantized K
        const size_t q_bytes =                       // one query head as k_dot reads it
            q_kind == cpu::ActKind::F32 ? hd * sizeof(float) : cpu::act_row_bytes(q_kind, hd);
        const bool v_blocks = type == KvType::Q8_0 || type == KvType::Q4_0;
        const cpu::AxpyFn v_axpy = m_.v_axpy_;
        const cpu::SoftmaxFn softmax = m_.softmax_;
        // The span kernel (f16/f32 keys) takes head sizes in whole SIMD
        // widths; other keys go one by one through the weight dot kernel.
        const cpu::ScoresFn k_scores =
            hd % 8 == 0 && hd <= cpu::kMaxScoresDim ? m_.k_scores_ : nullptr;
        // A task is one token and `sub` query heads sharing one kv head, so
        // each cached key and value row is read and converted once for all
        // of them (grouped-query attention); the group is split in halves
        // while there are fewer than two tasks per thread.
        uint32_t sub = group;
        while (sub % 2 == 0 &&
               batch_.size() * a.n_head_kv * (group / sub) < 2 * size_t{m_.pool_->size()})
            sub /= 2;
        const uint32_t per_token = a.n_head / sub;  // tasks a token
        const auto task = [&](uint32_t i, unsigned thread) {
            const size_t t = i / per_token;
            const uint32_t h0 = (i % per_token) * sub;  // first query head of the task
            // The token's sequence's cells by position; a window keeps the last ones.
            uint32_t first = table_.spans[2 * t], n_span = table_.spans[2 * t + 1];
            if (a.window > 0 && n_span > a.window) {
                first += n_span - a.window;
                n_span = a.window;
            }
            const uint32_t* span = &table_.cells[first];
            std::vector<float>& p = m_.attn_scratch_[thread];
            // [sub, n_span] scores, then weights; [sub] 1/sum; [hd] a value row as f32
            p.resize(size_t{sub} * n_span + sub + hd);
            const auto* qh = reinterpret_cast<const uint8_t*>(row(q, t) + size_t{h0} * hd);
            if (q_kind != cpu::ActKind::F32) {  // [sub] query heads as int8 blocks
                std::vector<uint8_t>& qq = m_.attn_qbuf_[thread];
                qq.resize(size_t{sub} * q_bytes);
                for (uint32_t h = 0; h < sub; ++h)
                    cpu::quantize_act(q_kind, row(q, t) + size_t{h0 + h} * hd, &qq[h * q_bytes], hd,
                                      m_.isa_);
                qh = qq.data();
            }
            const size_t kv_col = size_t{h0 / group} * head_bytes;  // byte offset of the kv head
            if (k_scores != nullptr) {  // all the span's keys in one call
                k_scores(hd, row(q, t) + size_t{h0} * hd, hd, static_cast<int>(sub), kc + kv_col,
                         row_bytes, span, n_span, p.data(), n_span);
            } else {
                for (uint32_t j = 0; j < n_span; ++j) {
                    const uint8_t* kj = kc + span[j] * row_bytes + kv_col;  // K_j: [hd]
                    for (uint32_t h = 0; h < sub; h += cpu::kMaxTile)
                        k_dot(hd, kj, qh + size_t{h} * q_bytes, q_bytes,
                              static_cast<int>(std::min<uint32_t>(cpu::kMaxTile, sub - h)),
                              &p[size_t{h} * n_span + j], n_span);
                }
            }
            float* inv = &p[size_t{sub} * n_span];  // 1 / sum per head
            for (uint32_t h = 0; h < sub; ++h) {
                float* ph = &p[size_t{h} * n_span];
                float scale = a.scale;
                if (a.softcap > 0.0f) {  // Gemma 2: softcap * tanh(s / softcap), then as is
                    for (uint32_t j = 0; j < n_span; ++j)
                        ph[j] = a.softcap * std::tanh(ph[j] * a.scale / a.softcap);
                    scale = 1.0f;
                }
                inv[h] = 1.0f / softmax(ph, n_span, scale);
            }
            float* oh = row(o, t) + size_t{h0} * hd;  // [sub, hd]
            std::fill(oh, oh + size_t{sub} * hd, 0.0f);
            // oh_h += sum_j p_hj * V_j, V_j: [hd]
            const uint8_t* v0 = vc + kv_col;  // V rows of the kv head, row_bytes apart
            for (uint32_t h = 0; h < sub; h += cpu::kMaxAxpyOutputs) {
                const int n_y = static_cast<int>(std::min<uint32_t>(cpu::kMaxAxpyOutputs, sub - h));
                const float* ph = &p[size_t{h} * n_span];
                float* oy = oh + size_t{h} * hd;
                if (!v_blocks) {  // all rows in one call: the sums stay in registers
                    v_axpy(hd, ph, n_span, n_y, v0, row_bytes, span, n_span, oy, hd);
                    continue;
                }
                float* vf = &p[size_t{sub} * n_span + sub];  // V_j expanded to f32
                for (uint32_t j = 0; j < n_span; ++j) {
                    ggml::dequantize_row(kv_ggml_type(type), v0 + span[j] * row_bytes, vf, hd,
                                         "V cache");
                    v_axpy(hd, ph + j, n_span, n_y, reinterpret_cast<const uint8_t*>(vf), 0,
                           nullptr, 1, oy, hd);
                }
            }
            for (uint32_t h = 0; h < sub; ++h)
                for (uint32_t d = 0; d < hd; ++d) oh[size_t{h} * hd + d] *= inv[h];
        };
        m_.pool_->run(static_cast<uint32_t>(batch_.size() * per_token), task);
    }

  protected:
    void for_rows(size_t n, uint32_t width, const std::function<void(size_t)>& fn) override {
        if (n > 1 && n * width >= kParallelElems) {
            m_.pool_->run(static_cast<uint32_t>(n), [&](uint32_t t, unsigned) { fn(t); });
        } else {
            for (size_t t = 0; t < n; ++t) fn(t);
        }
    }

  private:
    CpuExecModel& m_;
    const std::vector<uint32_t>& slots_;
    const KvCellTable& table_;
};

void CpuExecModel::decode(const Batch& batch, std::vector<float>& logits) {
    const std::vector<uint32_t> slots = cells_.find_slots(batch);  // [n] cell per token
    const KvCellTable table = cells_.cell_table(batch, slots);     // cells each token attends to
    CpuExecOps ops(*this, batch, slots, table, logits);
    logits.clear();
    if (profiling_) {
        TimedOps timed(ops, profile_, [this](MatId w) {
            // "matmul q4_0"; a weight stored in parts of several types names each.
            std::string name = "matmul";
            uint32_t last = ~0u;
            for (const cpu::WeightPart& p : mats_[w].parts) {
                if (p.type != last) {
                    name += last == ~0u ? ' ' : '+';
                    name += ggml::type_name(p.type);
                }
                last = p.type;
            }
            return name;
        });
        desc_.arch->graph(desc_, timed);
    } else {
        desc_.arch->graph(desc_, ops);
    }
    // The weights are read in place from the mapping: if another program
    // truncated the file, the pages past its end read as zeros and these
    // logits are not the model's. Say so (gguf::Error naming the file)
    // before the step's K/V is kept.
    file_.check_intact();
    cells_.commit(batch, slots);
}

}  // namespace wb::model
