#include "exec/vk/vk_memory_plan.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "ggml/types.h"

namespace wb::model {

namespace {

bool same_rope(const RopeConfig& a, const RopeConfig& b) {
    return a.freq_base == b.freq_base && a.freq_scale == b.freq_scale;
}

}  // namespace

MemoryNeed plan_memory(const ModelDesc& d, const ContextParams& ctx, const PlanShape& shape,
                       const vk::KernelConfig& kernels) {
    if (const std::string p = kv_type_problem(ctx.kv_type, d.hp.head_dim); !p.empty())
        throw std::invalid_argument(p);
    const HParams& hp = d.hp;
    MemoryNeed need;
    // Weights as VkModel uploads them: a matrix whose parts share a type
    // is one stacked weight, else one per part; vectors as f32.
    for (const MatDesc& m : d.mats) {
        bool same = true;
        for (uint32_t p : m.parts) same = same && d.tensors[p].type == d.tensors[m.parts[0]].type;
        if (same) {
            need.weights +=
                buffer_bytes(m.rows * ggml::row_bytes(d.tensors[m.parts[0]].type, m.ne0));
        } else {
            for (uint32_t p : m.parts)
                need.weights +=
                    buffer_bytes(d.tensors[p].ne1 * ggml::row_bytes(d.tensors[p].type, m.ne0));
        }
    }
    for (const VecDesc& v : d.vecs) need.weights += buffer_bytes(v.n * sizeof(float));
    // The pool: n_ctx rounded up to whole KV blocks (kv_cells.h).
    const uint64_t cells = KvCells::pool_cells(ctx.n_ctx, ctx.kv_block_size);
    need.kv_cache =
        2 * uint64_t{hp.n_layer} * buffer_bytes(cells * kv_row_bytes(ctx.kv_type, hp.kv_dim()));

    const uint64_t t = std::max<uint32_t>(shape.n_ubatch, 1);
    const uint64_t o = std::max<uint32_t>(shape.n_outputs ? shape.n_outputs : ctx.n_seq_max, 1);
    need.activations =
        graph_activation_bytes(d, static_cast<uint32_t>(t), static_cast<uint32_t>(o));
    // Host inputs: token ids, cache cells, spans, output rows, the cell
    // table (each of the ubatch's sequences lists up to a pool's worth of
    // cells: shared prefix blocks appear once per sequence) and RoPE
    // cos/sin per frequency set.
    const uint64_t n_rope_sets = same_rope(hp.rope, hp.rope_swa) ? 1 : 2;
    need.activations += buffer_bytes(t * 4) * 2 + buffer_bytes(t * 8) + buffer_bytes(o * 4) +
                        buffer_bytes(std::min<uint64_t>(ctx.n_seq_max, t) * cells * 4) +
                        n_rope_sets * buffer_bytes(t * std::max<uint32_t>(hp.n_rot / 2, 1) * 2 * 4);
    // Split-K attention scratch for the longest span (a sequence may hold
    // every cell), full-attention and windowed layers alike.
    vk::AttentionShape as;
    as.n_tok = static_cast<uint32_t>(t);
    as.n_head = hp.n_head;
    as.n_head_kv = hp.n_head_kv;
    as.head_dim = hp.head_dim;
    as.max_span = static_cast<uint32_t>(cells);
    uint64_t part =
        vk::Kernels::attention_partials_bytes(as, vk::Kernels::plan_attention(as, kernels));
    if (hp.n_swa > 0) {
        as.window = hp.n_swa;
        part = std::max(part, vk::Kernels::attention_partials_bytes(
                                  as, vk::Kernels::plan_attention(as, kernels)));
    }
    if (part) need.activations += buffer_bytes(part);
    need.staging = buffer_bytes(o * hp.n_vocab * sizeof(float));
    return need;
}

uint32_t largest_context(const ModelDesc& d, ContextParams ctx, const PlanShape& shape,
                         const vk::KernelConfig& kernels, uint64_t budget, uint32_t cap) {
    // The need grows with n_ctx (KV cache, cell table, attention scratch):
    // binary search over multiples of 256.
    uint32_t lo = 0, hi = cap / 256;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo + 1) / 2;
        ctx.n_ctx = mid * 256;
        bool fits = false;
        try {
            fits = plan_memory(d, ctx, shape, kernels).total() <= budget;
        } catch (const std::invalid_argument&) {
            fits = false;  // a span the device cannot compute
        }
        if (fits) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo * 256;
}

}  // namespace wb::model
