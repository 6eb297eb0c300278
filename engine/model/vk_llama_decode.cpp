// VkLlama::decode: host-side inputs (token ids, RoPE cos/sin, cache cells,
// cell table, output rows) and the recording of one ubatch's whole graph.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "model/vk_llama.h"
#include "model/vk_llama_impl.h"

namespace wb::model {

namespace {

using vk::Buffer;
using vk::Memory;
using vk::Purpose;

/// Grows `b` to hold at least `bytes` (contents are not kept).
void ensure(vk::Context& c, Buffer& b, uint64_t bytes, Memory mem,
            Purpose p = Purpose::Activations) {
    if (b.valid() && b.size() >= bytes) return;
    b = Buffer();  // free first: peak memory stays at one copy
    b = Buffer(c, std::max<uint64_t>(bytes, 4), mem, p);
}

}  // namespace

void VkLlama::decode(const Batch& batch, std::vector<float>& logits) {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t_begin = Clock::now();
    // 1. Place the tokens (validates; throws DecodeError with nothing changed).
    const std::vector<uint32_t> slots = cells_.find_slots(batch);
    const KvCellTable table = cells_.cell_table(batch, slots);  // cells each token attends to

    Impl& m = *impl_;
    vk::Context& c = *m.ctx;
    const uint32_t n_tok = static_cast<uint32_t>(batch.size());
    const uint32_t n_embd = hp_.n_embd, n_ff = hp_.n_ff, hd = hp_.head_dim;
    const uint32_t q_dim = hp_.n_head * hd, kv_dim = hp_.n_head_kv * hd;
    const uint32_t qkv_dim = q_dim + 2 * kv_dim;  // a row of m.qkv: q | k | v
    const uint32_t half_rot = hp_.n_rot / 2;
    std::vector<int32_t> out_rows;  // [n_out] batch indices whose logits are returned
    for (uint32_t i = 0; i < n_tok; ++i)
        if (batch.output[i]) out_rows.push_back(static_cast<int32_t>(i));
    const uint32_t n_out = static_cast<uint32_t>(out_rows.size());

    const uint64_t limit = c.binding_limit();
    const uint64_t widest = std::max<uint64_t>({n_embd, qkv_dim, 2 * uint64_t{n_ff}});
    if (uint64_t{n_tok} * widest * 4 > limit || uint64_t{n_out} * hp_.n_vocab * 4 > limit ||
        uint64_t{table.cells.size()} * 4 > limit || n_tok > c.info().max_workgroup_count[1]) {
        throw DecodeError("batch of " + std::to_string(n_tok) + " tokens (" +
                          std::to_string(n_out) +
                          " outputs) needs buffers over the device's binding limit; split it into "
                          "smaller ubatches");
    }

    // 2. Buffers for this ubatch size.
    if (n_tok > m.cap_tok) {
        const uint64_t t = n_tok;
        ensure(c, m.ids, t * 4, Memory::Host);
        ensure(c, m.cells, t * 4, Memory::Host);
        ensure(c, m.spans, t * 8, Memory::Host);
        ensure(c, m.cs, t * std::max(half_rot, 1u) * 2 * 4, Memory::Host);
        ensure(c, m.x, t * n_embd * 4, Memory::Device);
        ensure(c, m.xb, t * n_embd * 4, Memory::Device);
        ensure(c, m.proj, t * n_embd * 4, Memory::Device);
        ensure(c, m.qkv, t * qkv_dim * 4, Memory::Device);
        ensure(c, m.att, t * q_dim * 4, Memory::Device);
        ensure(c, m.gu, t * 2 * n_ff * 4, Memory::Device);
        ensure(c, m.ff, t * n_ff * 4, Memory::Device);
        m.cap_tok = n_tok;
    }
    if (std::max(n_out, 1u) > m.cap_out) {
        const uint64_t o = std::max(n_out, 1u);
        ensure(c, m.out_ids, o * 4, Memory::Host);
        ensure(c, m.xo, o * n_embd * 4, Memory::Device);
        ensure(c, m.xo_norm, o * n_embd * 4, Memory::Device);
        ensure(c, m.logits, o * hp_.n_vocab * 4, Memory::Device);
        ensure(c, m.readback, o * hp_.n_vocab * 4, Memory::Host, Purpose::Staging);
        m.cap_out = static_cast<uint32_t>(o);
    }
    if (table.cells.size() > m.cap_table) {
        ensure(c, m.cell_table, table.cells.size() * 4, Memory::Host);
        m.cap_table = table.cells.size();
    }

    // 3. Host inputs. RoPE angles in double on the host: theta_i = pos *
    // base^(-2i/n_rot) (RoFormer), the same numbers on every device.
    std::vector<float> cs(size_t{n_tok} * half_rot * 2);  // [n_tok, n_rot/2, (cos, sin)]
    for (uint32_t t = 0; t < n_tok; ++t) {
        for (uint32_t i = 0; i < half_rot; ++i) {
            const double theta = batch.pos[t] * std::pow(double{hp_.rope_freq_base},
                                                         -2.0 * i / static_cast<double>(hp_.n_rot));
            cs[(size_t{t} * half_rot + i) * 2] = static_cast<float>(std::cos(theta));
            cs[(size_t{t} * half_rot + i) * 2 + 1] = static_cast<float>(std::sin(theta));
        }
    }
    std::vector<int32_t> cell_ids(slots.begin(), slots.end());  // [n_tok]
    m.ids.upload(batch.token.data(), n_tok * 4);
    m.cells.upload(cell_ids.data(), n_tok * 4);
    if (!cs.empty()) m.cs.upload(cs.data(), cs.size() * 4);
    m.spans.upload(table.spans.data(), table.spans.size() * 4);
    m.cell_table.upload(table.cells.data(), table.cells.size() * 4);
    if (n_out) m.out_ids.upload(out_rows.data(), n_out * 4);

    // 4. Record the graph (one command buffer).
    vk::Kernels& K = *m.kernels;
    vk::Recorder& R = *m.rec;
    const bool f16 = ctx_.kv_type == KvType::F16;
    const bool neox = hp_.rope_mode == RopeMode::NeoX;
    vk::AttentionShape as;
    as.n_tok = n_tok;
    as.n_head = hp_.n_head;
    as.n_head_kv = hp_.n_head_kv;
    as.head_dim = hd;
    as.kv_stride = kv_dim;
    as.q_stride = qkv_dim;  // q is the first q_dim columns of m.qkv
    as.o_stride = q_dim;
    as.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
    for (uint32_t t = 0; t < n_tok; ++t)
        as.max_span = std::max(as.max_span, table.spans[2 * t + 1]);
    const vk::AttentionPlan plan = m.kernels->plan_attention(as);
    if (plan.n_split > 1) {
        ensure(c, m.att_part, vk::Kernels::attention_partials_bytes(as, plan), Memory::Device);
    }

    const Clock::time_point t_record = Clock::now();
    R.begin(profiling_);
    K.get_rows(R, m.token_embd, m.ids, n_tok, m.x);  // x: [n_tok, n_embd]
    // Each residual add is fused with the RMSNorm that follows it (the FFN
    // norm, the next layer's attention norm); the last layer's FFN add
    // stands alone because the output norm runs on the gathered rows only.
    K.rms_norm(R, m.x, m.layers.front().attn_norm, m.xb, n_embd, n_tok, hp_.rms_eps);
    for (size_t l = 0; l < m.layers.size(); ++l) {
        VkLayer& L = m.layers[l];
        // qkv: [n_tok, qkv_dim], one dispatch when Q, K, V are stacked.
        for (uint32_t i = 0, col = 0; i < L.qkv.size(); col += L.qkv[i++].n_rows())
            K.mul_mat(R, L.qkv[i], m.xb, 0, n_embd, m.qkv, col, qkv_dim, n_tok);
        if (half_rot) {
            K.rope_qk(R, m.qkv, m.qkv, m.cs, n_tok, hp_.n_head, hp_.n_head_kv, hd, hp_.n_rot,
                      qkv_dim, qkv_dim, neox, q_dim);
        }
        K.kv_write_kv(R, m.qkv, q_dim, m.qkv, q_dim + kv_dim, qkv_dim, m.cells, L.k_cache,
                      L.v_cache, kv_dim, n_tok, f16);
        K.attention(R, m.qkv, L.k_cache, L.v_cache, m.cell_table, m.spans, m.att, as, f16, plan,
                    &m.att_part);  // att: [n_tok, q_dim]
        K.mul_mat(R, L.wo, m.att, 0, q_dim, m.proj, 0, n_embd, n_tok);
        K.add_rms_norm(R, m.x, m.proj, L.ffn_norm, m.xb, n_embd, n_tok, hp_.rms_eps);
        // gu: [n_tok, 2 n_ff] = gate | up, one dispatch when stacked.
        for (uint32_t i = 0, col = 0; i < L.gate_up.size(); col += L.gate_up[i++].n_rows())
            K.mul_mat(R, L.gate_up[i], m.xb, 0, n_embd, m.gu, col, 2 * n_ff, n_tok);
        K.swiglu(R, m.gu, 0, m.gu, n_ff, 2 * n_ff, m.ff, n_ff, n_tok);  // ff: [n_tok, n_ff]
        K.mul_mat(R, L.down, m.ff, 0, n_ff, m.proj, 0, n_embd, n_tok);
        if (l + 1 < m.layers.size()) {
            K.add_rms_norm(R, m.x, m.proj, m.layers[l + 1].attn_norm, m.xb, n_embd, n_tok,
                           hp_.rms_eps);
        } else {
            K.add(R, m.x, m.proj, n_tok * n_embd);
        }
    }
    if (n_out) {
        K.gather_rows(R, m.x, n_embd, n_tok, m.out_ids, n_out, m.xo);  // xo: [n_out, n_embd]
        K.rms_norm(R, m.xo, m.output_norm, m.xo_norm, n_embd, n_out, hp_.rms_eps);
        const vk::DeviceWeight& w_out = hp_.tied_embeddings ? m.token_embd : m.output;
        K.mul_mat(R, w_out, m.xo_norm, 0, n_embd, m.logits, 0, hp_.n_vocab,
                  n_out);  // [n_out, n_vocab]
        R.copy(m.logits, 0, m.readback, 0, uint64_t{n_out} * hp_.n_vocab * 4);
    }
    // 5. One submit, one fence wait.
    const Clock::time_point t_submit = Clock::now();
    R.submit(profiling_ ? &profile_ : nullptr);
    const Clock::time_point t_done = Clock::now();

    // 6. The pass succeeded: the cells now hold the batch.
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
