// VkModel::decode: host-side inputs (token ids, RoPE cos/sin, cache cells,
// cell table, output rows), then the architecture's graph recorded by
// VkOps into one command buffer, one submit, one fence wait.

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "exec/vk/vk_model.h"
#include "exec/vk/vk_model_impl.h"
#include "model/arch/arch.h"
#include "model/graph.h"
#include "model/rope.h"

namespace wb::model {

namespace {

using vk::Buffer;
using vk::Memory;
using vk::Purpose;

/// The cache layout the shaders use for a KV type (the same bytes as the
/// CPU executor's cache: kv_row_bytes).
vk::KvFormat kv_format(KvType t) {
    switch (t) {
        case KvType::F32:
            return vk::KvFormat::F32;
        case KvType::F16:
            return vk::KvFormat::F16;
        case KvType::Q8_0:
            return vk::KvFormat::Q8_0;
        case KvType::Q4_0:
            return vk::KvFormat::Q4_0;
    }
    throw std::invalid_argument("KV type out of range");
}

/// Grows `b` to hold at least `bytes` (contents are not kept). A buffer
/// that is reallocated drops every recorded step (they bind the old one).
/// `headroom`: round up to a power of two (capped at the binding limit),
/// for inputs that grow a little every step (the cell table), so recorded
/// steps stay valid.
/// (A template because VkModel::Impl is private to VkModel and its friends.)
template <class Impl>
void ensure(Impl& m, Buffer& b, uint64_t bytes, Memory mem, Purpose p = Purpose::Activations,
            bool headroom = false) {
    if (b.valid() && b.size() >= bytes) return;
    if (headroom) {
        // Never past what one binding may cover: the limit need not be a
        // power of two (maxStorageBufferRange is 2^32 - 1 on many drivers),
        // and a size that passed the caller's limit check must still bind.
        const uint64_t limit = m.ctx->binding_limit();
        bytes = std::max(bytes, std::min(std::bit_ceil(std::max<uint64_t>(bytes, 256)), limit));
    }
    m.steps.clear();
    b = Buffer();  // free first: peak memory stays at one copy
    b = Buffer(*m.ctx, std::max<uint64_t>(bytes, 4), mem, p);
}

bool same_rope(const RopeConfig& a, const RopeConfig& b) {
    return a.freq_base == b.freq_base && a.freq_scale == b.freq_scale;
}

/// Attention shapes that differ at most in max_span.
bool same_shape(const vk::AttentionShape& a, const vk::AttentionShape& b) {
    return a.n_tok == b.n_tok && a.n_head == b.n_head && a.n_head_kv == b.n_head_kv &&
           a.head_dim == b.head_dim && a.kv_stride == b.kv_stride && a.q_stride == b.q_stride &&
           a.o_stride == b.o_stride && a.scale == b.scale && a.window == b.window &&
           a.softcap == b.softcap;
}

bool same_plan(const vk::AttentionPlan& a, const vk::AttentionPlan& b) {
    return a.path == b.path && a.n_split == b.n_split && a.chunk == b.chunk;
}

}  // namespace

/// The graph's ops as dispatches recorded into the model's Recorder.
class VkOps final : public Ops {
  public:
    VkOps(VkModel& model, vk::Recorder& rec, uint32_t n_tok, uint32_t n_out, uint32_t max_span)
        : m_(*model.impl_),
          model_(model),
          K_(*m_.kernels),
          R_(rec),
          n_tok_(n_tok),
          n_out_(n_out),
          max_span_(max_span) {}

    Act act(const char* name, uint32_t width, Rows rows) override {
        size_t i = 0;
        while (i < m_.act_names.size() && m_.act_names[i] != name) ++i;
        if (i == m_.act_names.size()) {
            m_.act_names.emplace_back(name);
            m_.acts.emplace_back();
        }
        // Every act() of a graph comes before its first op, so a buffer
        // that grows here is not yet used by this command buffer.
        ensure(m_, m_.acts[i], uint64_t{n_rows(rows)} * width * 4, Memory::Device);
        return Act{static_cast<uint32_t>(i), 0, width, width, rows};
    }

    void embed(Act y, MatId table, float scale) override {
        whole(y, "embed");
        const VkMat& w = m_.mats[table];
        K_.get_rows(R_, w.pieces.at(0), m_.ids, n_tok_, buf(y));  // y: [n_tok, n_embd]
        if (scale != 1.0f) K_.scale(R_, buf(y), n_tok_ * y.width, scale);
    }

    void rms_norm(Act y, Act x, VecId g, float eps) override {
        whole(y, "rms_norm");
        whole(x, "rms_norm");
        K_.rms_norm(R_, buf(x), m_.vecs[g], buf(y), x.width, n_rows(x.rows), eps);
    }

    void add_rms_norm(Act x, Act b, VecId g, Act y, float eps) override {
        whole(x, "add_rms_norm");
        whole(b, "add_rms_norm");
        whole(y, "add_rms_norm");
        K_.add_rms_norm(R_, buf(x), buf(b), m_.vecs[g], buf(y), x.width, n_rows(x.rows), eps);
    }

    void head_rms_norm(Act x, uint32_t n_head, uint32_t head_dim, VecId g, float eps) override {
        K_.head_rms_norm(R_, buf(x), x.col, x.stride, m_.vecs[g], head_dim, n_head, n_rows(x.rows),
                         eps);
    }

    void matmul(Act y, Act x, MatId w) override {
        const VkMat& mat = m_.mats[w];
        for (size_t i = 0; i < mat.pieces.size(); ++i) {
            K_.mul_mat(R_, mat.pieces[i], buf(x), x.col, x.stride, buf(y), y.col + mat.col[i],
                       y.stride, n_rows(x.rows));
        }
    }

    void add_bias(Act y, VecId b) override {
        K_.add_bias(R_, buf(y), y.col, y.stride, m_.vecs[b], y.width, n_rows(y.rows));
    }

    void rope(Act q, uint32_t n_head, Act k, uint32_t n_head_kv, uint32_t head_dim,
              const RopeConfig& rc) override {
        const HParams& hp = model_.hp_;
        if (hp.n_rot == 0) return;
        if (q.buf != k.buf) throw std::logic_error("rope: q and k must share a buffer");
        const Buffer& cs = same_rope(rc, hp.rope) ? m_.cs[0] : m_.cs[1];
        K_.rope_qk(R_, buf(q), buf(k), cs, n_tok_, n_head, n_head_kv, head_dim, hp.n_rot, q.stride,
                   k.stride, hp.rope_mode == RopeMode::NeoX, k.col, q.col);
    }

    void kv_write(uint32_t layer, Act k, Act v) override {
        if (k.stride != v.stride) throw std::logic_error("kv_write: k and v rows differ");
        K_.kv_write_kv(R_, buf(k), k.col, buf(v), v.col, k.stride, m_.cells, m_.k_cache[layer],
                       m_.v_cache[layer], k.width, n_tok_, kv_format(model_.ctx_.kv_type));
    }

    void attention(Act o, Act q, const AttnParams& a) override {
        whole(o, "attention");
        if (q.col != 0) throw std::logic_error("attention: q must start at column 0");
        const vk::AttentionShape s = shape(a, q.stride, o.stride);
        const vk::AttentionPlan plan = K_.plan_attention(s);
        note_plan(s, plan);
        K_.attention(R_, buf(q), m_.k_cache[a.layer], m_.v_cache[a.layer], m_.cell_table, m_.spans,
                     buf(o), s, kv_format(model_.ctx_.kv_type), plan, &m_.att_part);
    }

    void glu(Act y, Act gate, Act up, FfnActivation act) override {
        whole(y, "glu");
        if (gate.buf != up.buf || gate.stride != up.stride)
            throw std::logic_error("glu: gate and up must be columns of one buffer");
        if (act == FfnActivation::SiLU) {
            K_.swiglu(R_, buf(gate), gate.col, buf(up), up.col, gate.stride, buf(y), y.width,
                      n_rows(y.rows));
        } else {
            K_.geglu(R_, buf(gate), gate.col, buf(up), up.col, gate.stride, buf(y), y.width,
                     n_rows(y.rows));
        }
    }

    void add(Act x, Act b) override {
        whole(x, "add");
        whole(b, "add");
        K_.add(R_, buf(x), buf(b), n_rows(x.rows) * x.width);
    }

    void gather_outputs(Act y, Act x) override {
        whole(y, "gather_outputs");
        whole(x, "gather_outputs");
        K_.gather_rows(R_, buf(x), x.width, n_tok_, m_.out_ids, n_out_, buf(y));
    }

    void softcap(Act x, float cap) override {
        whole(x, "softcap");
        K_.softcap(R_, buf(x), n_rows(x.rows) * x.width, cap);
    }

    void logits(Act x) override {
        whole(x, "logits");
        if (n_out_) R_.copy(buf(x), 0, m_.readback, 0, uint64_t{n_out_} * x.width * 4);
    }

    /// The attention call's shape for layer settings `a`.
    vk::AttentionShape shape(const AttnParams& a, uint32_t q_stride, uint32_t o_stride) const {
        vk::AttentionShape s;
        s.n_tok = n_tok_;
        s.n_head = a.n_head;
        s.n_head_kv = a.n_head_kv;
        s.head_dim = a.head_dim;
        s.kv_stride = a.n_head_kv * a.head_dim;
        s.q_stride = q_stride;
        s.o_stride = o_stride;
        s.scale = a.scale;
        s.softcap = a.softcap;
        s.window = a.window;
        s.max_span = max_span_;
        return s;
    }

    /// The attention calls' shapes and plans, distinct ones in order:
    /// a recorded step is valid for a later step only where every shape
    /// plans the same way at the later step's longest span.
    const std::vector<std::pair<vk::AttentionShape, vk::AttentionPlan>>& plans() const {
        return plans_;
    }

  private:
    void note_plan(const vk::AttentionShape& s, const vk::AttentionPlan& p) {
        for (const auto& [s2, p2] : plans_)
            if (same_shape(s, s2)) return;
        plans_.emplace_back(s, p);
    }
    uint32_t n_rows(Rows r) const { return r == Rows::Tokens ? n_tok_ : n_out_; }
    Buffer& buf(const Act& a) { return m_.acts[a.buf]; }
    static void whole(const Act& a, const char* op) {
        if (!a.whole()) throw std::logic_error(std::string(op) + ": needs whole rows");
    }

    VkModel::Impl& m_;
    VkModel& model_;
    vk::Kernels& K_;
    vk::Recorder& R_;
    uint32_t n_tok_, n_out_, max_span_;
    std::vector<std::pair<vk::AttentionShape, vk::AttentionPlan>> plans_;
};

void VkModel::decode(const Batch& batch, std::vector<float>& logits) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t_begin = Clock::now();
    // 1. Place the tokens (validates; throws DecodeError with nothing changed).
    const std::vector<uint32_t> slots = cells_.find_slots(batch);
    const KvCellTable table = cells_.cell_table(batch, slots);  // cells each token attends to

    Impl& m = *impl_;
    vk::Context& c = *m.ctx;
    const uint32_t n_tok = static_cast<uint32_t>(batch.size());
    const uint32_t half_rot = hp_.n_rot / 2;
    std::vector<int32_t> out_rows;  // [n_out] batch indices whose logits are returned
    for (uint32_t i = 0; i < n_tok; ++i)
        if (batch.output[i]) out_rows.push_back(static_cast<int32_t>(i));
    const uint32_t n_out = static_cast<uint32_t>(out_rows.size());

    const uint64_t limit = c.binding_limit();
    const uint64_t widest = std::max<uint64_t>(
        {hp_.n_embd, uint64_t{hp_.q_dim()} + 2 * hp_.kv_dim(), 2 * uint64_t{hp_.n_ff}});
    if (uint64_t{n_tok} * widest * 4 > limit || uint64_t{n_out} * hp_.n_vocab * 4 > limit ||
        uint64_t{table.cells.size()} * 4 > limit || n_tok > c.info().max_workgroup_count[1]) {
        throw DecodeError("batch of " + std::to_string(n_tok) + " tokens (" +
                          std::to_string(n_out) +
                          " outputs) needs buffers over the device's binding limit; split it into "
                          "smaller ubatches");
    }

    // 2. Host inputs (grown on demand). RoPE angles in double on the host
    // (rope.h), the same numbers on every device; one set per frequency
    // configuration (gemma3's sliding-window layers have their own).
    const uint64_t t = n_tok, o = std::max(n_out, 1u);
    ensure(m, m.ids, t * 4, Memory::Host);
    ensure(m, m.cells, t * 4, Memory::Host);
    ensure(m, m.spans, t * 8, Memory::Host);
    ensure(m, m.out_ids, o * 4, Memory::Host);
    ensure(m, m.cell_table, table.cells.size() * 4, Memory::Host, Purpose::Activations, true);
    ensure(m, m.readback, o * hp_.n_vocab * 4, Memory::Host, Purpose::Staging);
    const bool two_ropes = !same_rope(hp_.rope, hp_.rope_swa);
    for (int r = 0; r < (two_ropes ? 2 : 1); ++r) {
        ensure(m, m.cs[r], t * std::max(half_rot, 1u) * 2 * 4, Memory::Host);
        if (half_rot == 0) continue;
        std::vector<float> cs(size_t{n_tok} * half_rot * 2);  // [n_tok, n_rot/2, (cos, sin)]
        rope_cos_sin(hp_, r == 0 ? hp_.rope : hp_.rope_swa, batch.pos.data(), n_tok, cs.data());
        m.cs[r].upload(cs.data(), cs.size() * 4);
    }
    std::vector<int32_t> cell_ids(slots.begin(), slots.end());  // [n_tok]
    m.ids.upload(batch.token.data(), n_tok * 4);
    m.cells.upload(cell_ids.data(), n_tok * 4);
    m.spans.upload(table.spans.data(), table.spans.size() * 4);
    m.cell_table.upload(table.cells.data(), table.cells.size() * 4);
    if (n_out) m.out_ids.upload(out_rows.data(), n_out * 4);

    // Split-K scratch for the largest plan of any layer (full-attention
    // and windowed layers split differently), allocated before recording.
    uint32_t max_span = 0;
    for (uint32_t i = 0; i < n_tok; ++i) max_span = std::max(max_span, table.spans[2 * i + 1]);
    {
        uint64_t part = 0;
        for (uint32_t window : {0u, hp_.n_swa}) {
            vk::AttentionShape s;
            s.n_tok = n_tok;
            s.n_head = hp_.n_head;
            s.n_head_kv = hp_.n_head_kv;
            s.head_dim = hp_.head_dim;
            s.window = window;
            s.max_span = max_span;
            part = std::max(part,
                            vk::Kernels::attention_partials_bytes(s, m.kernels->plan_attention(s)));
        }
        if (part) ensure(m, m.att_part, part, Memory::Device);
    }

    // 3. A recorded step of this shape is submitted again (replay), else
    // the graph is recorded into a new command buffer (one submit, one
    // fence wait either way).
    const Clock::time_point t_record = Clock::now();
    const std::vector<uint32_t> key{n_tok, n_out, profiling_ ? 1u : 0u};
    model::Profile* prof = profiling_ ? &profile_ : nullptr;
    auto hit = m.steps.end();
    if (m.replay) {
        hit = std::find_if(m.steps.begin(), m.steps.end(), [&](const Impl::Step& st) {
            if (st.key != key) return false;
            for (const auto& [s, plan] : st.plans) {
                vk::AttentionShape now = s;
                now.max_span = max_span;
                if (!same_plan(m.kernels->plan_attention(now), plan)) return false;
            }
            return true;
        });
    }
    Clock::time_point t_submit;
    if (hit != m.steps.end()) {
        m.steps.splice(m.steps.begin(), m.steps, hit);  // most recently used first
        t_submit = Clock::now();
        m.steps.front().rec->resubmit(prof);
        last_device_ms_ = m.steps.front().rec->device_ms();
    } else {
        // Reuse the least recently used step's command buffer when full.
        std::unique_ptr<vk::Recorder> rec = std::move(m.spare);
        if (!rec && m.steps.size() >= Impl::kMaxSteps) {
            rec = std::move(m.steps.back().rec);
            m.steps.pop_back();
        }
        if (!rec) rec = std::make_unique<vk::Recorder>(c, m.barriers);
        VkOps ops(*this, *rec, n_tok, n_out, max_span);
        rec->begin(profiling_, m.replay);
        desc_.arch->graph(desc_, ops);  // act() may reallocate (and drop the recorded steps)
        t_submit = Clock::now();
        rec->submit(prof);
        last_device_ms_ = rec->device_ms();
        barriers_recorded_ += rec->n_barriers();
        if (profiling_) host_times_.recorded += 1;
        if (m.replay) {
            m.steps.push_front(Impl::Step{key, ops.plans(), std::move(rec)});
            if (m.steps.size() > Impl::kMaxSteps) m.steps.pop_back();
        } else {
            m.spare = std::move(rec);  // recorded afresh every step
        }
    }
    const Clock::time_point t_done = Clock::now();

    // 5. The pass succeeded: the cells now hold the batch.
    cells_.commit(batch, slots);
    logits.resize(size_t{n_out} * hp_.n_vocab);
    if (n_out) m.readback.download(logits.data(), logits.size() * 4);
    if (profiling_) {
        auto ms = [](Clock::time_point a, Clock::time_point b) {
            return std::chrono::duration<double, std::milli>(b - a).count();
        };
        host_times_.calls += 1;
        host_times_.prepare_ms += ms(t_begin, t_record);
        host_times_.record_ms += ms(t_record, t_submit);
        host_times_.submit_wait_ms += ms(t_submit, t_done);
        host_times_.readback_ms += ms(t_done, Clock::now());
    }
}

}  // namespace wb::model
