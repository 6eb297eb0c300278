#include "vk/kernels.h"

#include <algorithm>
#include <stdexcept>

#include "ggml/types.h"
#include "spirv_all.h"  // generated: spv_<variant>[] arrays

namespace wb::vk {

namespace {

struct Spirv {
    const uint32_t* words;
    size_t bytes;
};

#define WB_SPV(name)                       \
    {                                      \
#name, {                           \
            spv_##name, sizeof(spv_##name) \
        }                                  \
    }
const std::map<std::string, Spirv>& spirv_table() {
    static const std::map<std::string, Spirv> table = {
        WB_SPV(matvec_f32),
        WB_SPV(matvec_f16),
        WB_SPV(matvec_q8_0_u16),
        WB_SPV(matvec_q8_0_u32),
        WB_SPV(matvec_q4_0_u16),
        WB_SPV(matvec_q4_0_u32),
        WB_SPV(matvec_sg_f32),
        WB_SPV(matvec_sg_f16),
        WB_SPV(matvec_sg_q8_0_u16),
        WB_SPV(matvec_sg_q8_0_u32),
        WB_SPV(matvec_sg_q4_0_u16),
        WB_SPV(matvec_sg_q4_0_u32),
        WB_SPV(matmul_f32),
        WB_SPV(matmul_f16),
        WB_SPV(matmul_q8_0_u16),
        WB_SPV(matmul_q8_0_u32),
        WB_SPV(matmul_q4_0_u16),
        WB_SPV(matmul_q4_0_u32),
        WB_SPV(get_rows_f32),
        WB_SPV(get_rows_f16),
        WB_SPV(get_rows_q8_0_u16),
        WB_SPV(get_rows_q8_0_u32),
        WB_SPV(get_rows_q4_0_u16),
        WB_SPV(get_rows_q4_0_u32),
        WB_SPV(matvec_row_f32),
        WB_SPV(matvec_row_f16),
        WB_SPV(matvec_row_q8_0_u16),
        WB_SPV(matvec_row_q8_0_u32),
        WB_SPV(matvec_row_q4_0_u16),
        WB_SPV(matvec_row_q4_0_u32),
        WB_SPV(kv_write_f32),
        WB_SPV(kv_write_f16),
        WB_SPV(attention_f32),
        WB_SPV(attention_f16),
        WB_SPV(attention_row_f32),
        WB_SPV(attention_row_f16),
        WB_SPV(attention_merge),
        WB_SPV(rms_norm),
        WB_SPV(add_rms_norm),
        WB_SPV(rope),
        WB_SPV(swiglu),
        WB_SPV(add),
    };
    return table;
}
#undef WB_SPV

uint32_t pow2_floor(uint32_t v) {
    uint32_t p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}

uint32_t ceil_div(uint64_t a, uint64_t b) {
    return static_cast<uint32_t>((a + b - 1) / b);
}

// Push-constant blocks, laid out as the shaders declare them (std430 scalars).
struct MatPush {
    uint32_t ne0, rows, row_offset, n_tok, x_offset, x_stride, y_offset, y_stride;
};
struct RowsPush {
    uint32_t ne0, rows, row_offset, n_ids, y_offset, y_stride;
};
struct NormPush {
    uint32_t n, n_tok;
    float eps;
};
struct RopePush {
    uint32_t n_tok, n_head, head_dim, n_rot, offset, stride, neox;
    uint32_t n_head2, offset2, stride2;  // K
};
struct KvPush {
    uint32_t n, n_tok, k_off, v_off, src_stride;
};
struct SwigluPush {
    uint32_t n, n_tok, g_off, u_off, in_stride;
};
struct AttnPush {
    uint32_t n_tok, n_head, n_head_kv, head_dim, kv_stride, q_stride, o_stride;
    float scale;
    uint32_t n_split, chunk;
};
struct MergePush {
    uint32_t n_head, head_dim, n_split, o_stride;
};
struct NPush {
    uint32_t n;
};

}  // namespace

Kernels::Kernels(Context& ctx, bool allow_subgroup_ops) : ctx_(ctx) {
    const DeviceInfo& d = ctx.info();
    // Reductions: at least 64 lanes and 4 subgroups, a power of two within
    // the device's invocation limit.
    const uint32_t sg = std::max<uint32_t>(1, d.subgroup_size);
    wg_reduce_ = pow2_floor(std::min<uint32_t>(
        std::max<uint32_t>(64, 4 * sg), std::min<uint32_t>(256, d.max_workgroup_invocations)));
    wg_elem_ = pow2_floor(std::min<uint32_t>(256, d.max_workgroup_invocations));
    mat_mat_ok_ =
        d.max_workgroup_invocations >= 256 && d.max_shared_memory >= 2 * 32 * 64 * sizeof(float);
    // CPU devices: workgroups and barriers are expensive, lanes are few.
    vec_per_row_ = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU && !ctx.options().gpu_kernels;
    vec_max_tokens_ = vec_per_row_ ? kVecMaxTokensCpu : kVecTokensPerGroup;
    subgroup_ops_ = allow_subgroup_ops && d.subgroup_arithmetic;
    // attention_row: a workgroup is one SIMD batch of heads on lavapipe.
    wg_row_ = pow2_floor(std::clamp<uint32_t>(sg, 8, 64));
    loop_budget_ = d.type == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

Kernels::~Kernels() = default;

const Pipeline& Kernels::get(const std::string& variant, uint32_t n_buffers, uint32_t push_bytes,
                             uint32_t wg, const std::vector<uint32_t>& extra) {
    std::string key = variant + "/" + std::to_string(wg);
    for (uint32_t v : extra) key += "/" + std::to_string(v);
    auto it = pipelines_.find(key);
    if (it != pipelines_.end()) return *it->second;
    const auto& table = spirv_table();
    auto s = table.find(variant);
    if (s == table.end()) throw std::logic_error("no SPIR-V variant " + variant);
    PipelineDesc desc;
    desc.name = variant;
    desc.spirv = s->second.words;
    desc.spirv_bytes = s->second.bytes;
    desc.n_buffers = n_buffers;
    desc.push_bytes = push_bytes;
    if (wg) desc.spec = {wg};
    if (!extra.empty()) {
        if (!wg) throw std::logic_error("specialization constants past id 0 need a workgroup size");
        desc.spec.insert(desc.spec.end(), extra.begin(), extra.end());
    }
    auto p = std::make_unique<Pipeline>(ctx_, desc);
    const Pipeline& ref = *p;
    pipelines_.emplace(key, std::move(p));
    return ref;
}

std::string Kernels::weight_variant(const std::string& shader, uint32_t type) const {
    const std::string access = ctx_.use_16bit_storage() ? "_u16" : "_u32";
    switch (static_cast<ggml::Type>(type)) {
        case ggml::Type::F32:
            return shader + "_f32";
        case ggml::Type::F16:
            return shader + "_f16";
        case ggml::Type::Q8_0:
            return shader + "_q8_0" + access;
        case ggml::Type::Q4_0:
            return shader + "_q4_0" + access;
        default:
            throw ggml::UnsupportedType(type, shader);
    }
}

void Kernels::groups_1d(uint64_t n, uint32_t wg, uint32_t& gx, uint32_t& gy) const {
    const uint64_t groups = std::max<uint64_t>(1, (n + wg - 1) / wg);
    gx = static_cast<uint32_t>(std::min<uint64_t>(groups, ctx_.info().max_workgroup_count[0]));
    gy = ceil_div(groups, gx);
}

void Kernels::mul_mat(Recorder& rec, const DeviceWeight& w, const Buffer& x, uint32_t x_off,
                      uint32_t x_stride, Buffer& y, uint32_t y_off, uint32_t y_stride,
                      uint32_t n_tok, MatPath path) {
    if (n_tok == 0) return;
    bool use_mat = path == MatPath::Mat || (path == MatPath::Auto && n_tok > vec_max_tokens_);
    if (!mat_mat_ok_) use_mat = false;
    const bool per_row =
        !use_mat && (path == MatPath::VecRow || (path == MatPath::Auto && vec_per_row_));
    const uint32_t n_groups = ceil_div(n_tok, kVecTokensPerGroup);  // token groups (mat x vec)
    if (!use_mat && n_groups > ctx_.info().max_workgroup_count[per_row ? 1 : 2]) {
        throw std::invalid_argument("mul_mat " + w.name() + ": " + std::to_string(n_tok) +
                                    " tokens exceed maxComputeWorkGroupCount for mat x vec");
    }
    const std::string tname = ggml::type_name(w.type());
    const Pipeline& p =
        use_mat   ? get(weight_variant("matmul", w.type()), 3, sizeof(MatPush), 0)
        : per_row ? get(weight_variant("matvec_row", w.type()), 3, sizeof(MatPush), wg_elem_)
                  : get(weight_variant(subgroup_ops_ ? "matvec_sg" : "matvec", w.type()), 3,
                        sizeof(MatPush), wg_reduce_);
    for (const WeightPiece& piece : w.pieces()) {
        MatPush pc{w.ne0(), piece.rows, piece.row_begin, n_tok, x_off, x_stride, y_off, y_stride};
        if (use_mat) {
            rec.dispatch(p, {&piece.buffer, &x, &y}, &pc, ceil_div(piece.rows, 64),
                         ceil_div(n_tok, 64), 1, "mul_mat " + tname);
        } else if (per_row) {
            rec.dispatch(p, {&piece.buffer, &x, &y}, &pc, ceil_div(piece.rows, wg_elem_), n_groups,
                         1, "mul_mat_vec " + tname);
        } else {
            const uint32_t gx = std::min<uint32_t>(piece.rows, ctx_.info().max_workgroup_count[0]);
            rec.dispatch(p, {&piece.buffer, &x, &y}, &pc, gx, ceil_div(piece.rows, gx), n_groups,
                         "mul_mat_vec " + tname);
        }
    }
}

void Kernels::get_rows(Recorder& rec, const DeviceWeight& w, const Buffer& ids, uint32_t n_ids,
                       Buffer& y) {
    if (n_ids == 0) return;
    const Pipeline& p = get(weight_variant("get_rows", w.type()), 3, sizeof(RowsPush), wg_elem_);
    for (const WeightPiece& piece : w.pieces()) {
        RowsPush pc{w.ne0(), piece.rows, piece.row_begin, n_ids, 0, w.ne0()};
        rec.dispatch(p, {&piece.buffer, &ids, &y}, &pc, ceil_div(w.ne0(), wg_elem_), n_ids, 1,
                     "get_rows " + ggml::type_name(w.type()));
    }
}

void Kernels::gather_rows(Recorder& rec, const Buffer& src, uint32_t ne0, uint32_t n_rows,
                          const Buffer& ids, uint32_t n_ids, Buffer& y) {
    if (n_ids == 0) return;
    const Pipeline& p = get("get_rows_f32", 3, sizeof(RowsPush), wg_elem_);
    RowsPush pc{ne0, n_rows, 0, n_ids, 0, ne0};
    rec.dispatch(p, {&src, &ids, &y}, &pc, ceil_div(ne0, wg_elem_), n_ids, 1, "get_rows f32");
}

void Kernels::rms_norm(Recorder& rec, const Buffer& x, const Buffer& g, Buffer& y, uint32_t n,
                       uint32_t n_tok, float eps) {
    const Pipeline& p = get("rms_norm", 3, sizeof(NormPush), wg_reduce_);
    NormPush pc{n, n_tok, eps};
    rec.dispatch(p, {&x, &g, &y}, &pc, n_tok, 1, 1, "rms_norm");
}

void Kernels::add_rms_norm(Recorder& rec, Buffer& x, const Buffer& b, const Buffer& g, Buffer& y,
                           uint32_t n, uint32_t n_tok, float eps) {
    const Pipeline& p = get("add_rms_norm", 4, sizeof(NormPush), wg_reduce_);
    NormPush pc{n, n_tok, eps};
    rec.dispatch(p, {&x, &g, &y, &b}, &pc, n_tok, 1, 1, "add_rms_norm");
}

void Kernels::rope_qk(Recorder& rec, Buffer& q, Buffer& k, const Buffer& cs, uint32_t n_tok,
                      uint32_t n_head, uint32_t n_head_kv, uint32_t head_dim, uint32_t n_rot,
                      uint32_t q_stride, uint32_t k_stride, bool neox, uint32_t k_offset) {
    if (n_rot % 2 != 0 || n_rot > head_dim) {
        throw std::invalid_argument("rope: n_rot " + std::to_string(n_rot) +
                                    " must be even and <= head_dim " + std::to_string(head_dim));
    }
    const Pipeline& p = get("rope", 3, sizeof(RopePush), wg_elem_);
    RopePush pc{n_tok,    n_head,         head_dim,  n_rot,    0,
                q_stride, neox ? 1u : 0u, n_head_kv, k_offset, k_stride};
    const uint64_t pairs = uint64_t{std::max(n_head, n_head_kv)} * (n_rot / 2);
    rec.dispatch(p, {&q, &cs, &k}, &pc, ceil_div(pairs, wg_elem_), n_tok, 2, "rope");
}

void Kernels::kv_write_kv(Recorder& rec, const Buffer& k, uint32_t k_off, const Buffer& v,
                          uint32_t v_off, uint32_t src_stride, const Buffer& slots, Buffer& k_cache,
                          Buffer& v_cache, uint32_t n, uint32_t n_tok, bool f16) {
    if (f16 && n % 2 != 0)
        throw std::invalid_argument("kv_write: an F16 cache needs an even row length");
    const Pipeline& p = get(f16 ? "kv_write_f16" : "kv_write_f32", 5, sizeof(KvPush), wg_elem_);
    KvPush pc{n, n_tok, k_off, v_off, src_stride};
    rec.dispatch(p, {&k, &slots, &k_cache, &v, &v_cache}, &pc, ceil_div(f16 ? n / 2 : n, wg_elem_),
                 n_tok, 2, "kv_write");
}

namespace {

uint32_t log2_floor(uint32_t v) {
    uint32_t l = 0;
    while (v > 1) v >>= 1, ++l;
    return l;
}

}  // namespace

AttentionPlan Kernels::plan_attention(const AttentionShape& s, AttnPath path) const {
    const uint64_t hd = s.head_dim;
    // Most cells one chunk may hold under the loop budget (CPU devices):
    // upper bounds of the loop iterations each shader runs per invocation.
    auto max_chunk = [&](AttnPath p) -> uint64_t {
        if (!loop_budget_) return UINT64_MAX;
        if (p == AttnPath::Row) {
            // Per cell: the dot product, the V sum, and at worst a rescale
            // (hd each) plus the cell loop; once: q load and store (hd each).
            const uint64_t fixed = 2 * hd + 8, per_cell = 3 * hd + 1;
            return fixed >= kCpuLoopBudget ? 0 : (kCpuLoopBudget - fixed) / per_cell;
        }
        // Per tile of wg cells: the dot product (hd), two tree reductions,
        // the V sum over wg / G cells with up to 4 dims each, and the tile
        // loop; once: q load, the group sum (G) and small fixed loops.
        const uint64_t wg = wg_reduce_;
        const uint64_t lanes_d = std::clamp<uint64_t>(hd, 1, wg), groups = wg / lanes_d;
        const uint64_t per_tile =
            hd + 2 * log2_floor(wg_reduce_) + 5 * ((wg + groups - 1) / groups) + 8;
        const uint64_t fixed = hd + groups + 16;
        return fixed >= kCpuLoopBudget ? 0 : (kCpuLoopBudget - fixed) / per_tile * wg;
    };
    auto min_split = [&](AttnPath p) -> uint64_t {
        const uint64_t c = max_chunk(p);
        if (c == 0) return UINT64_MAX;
        return std::max<uint64_t>(1, (uint64_t{s.max_span} + c - 1) / c);
    };

    AttentionPlan plan;
    plan.path = path != AttnPath::Auto ? path : vec_per_row_ ? AttnPath::Row : AttnPath::Group;
    uint64_t need = min_split(plan.path);
    if (path == AttnPath::Auto && plan.path == AttnPath::Row) {
        AttentionPlan probe{AttnPath::Row,
                            static_cast<uint32_t>(std::min<uint64_t>(need, kMaxAttnSplit)), 1};
        if (need > kMaxAttnSplit || attention_partials_bytes(s, probe) > kMaxAttnPartialBytes) {
            plan.path = AttnPath::Group;
            need = min_split(plan.path);
        }
    }
    if (need > kMaxAttnSplit) {
        throw std::invalid_argument(
            "attention: a span of " + std::to_string(s.max_span) + " cells with head_dim " +
            std::to_string(s.head_dim) + " needs more than " + std::to_string(kMaxAttnSplit) +
            " chunks to stay under this CPU device's shader loop limit; use a smaller context");
    }
    // Speed: workgroups without a split, against what keeps a GPU busy.
    const uint64_t units = uint64_t{s.n_tok} * s.n_head;
    uint64_t want = 1;
    if (plan.path == AttnPath::Group && units > 0 && units < kAttnBusyGroups &&
        s.max_span >= 2 * kAttnMinChunk) {
        want = std::min<uint64_t>(
            {(kAttnBusyGroups + units - 1) / units, s.max_span / kAttnMinChunk, kMaxAttnSplit});
    }
    const uint64_t n = std::max(need, want);
    if (n < 2) return plan;
    plan.chunk = ceil_div(s.max_span, n);
    plan.n_split = ceil_div(s.max_span, plan.chunk);
    return plan;
}

uint64_t Kernels::attention_partials_bytes(const AttentionShape& s, const AttentionPlan& plan) {
    if (plan.n_split <= 1) return 0;
    return uint64_t{s.n_tok} * s.n_head * plan.n_split * (s.head_dim + 2) * sizeof(float);
}

void Kernels::attention(Recorder& rec, const Buffer& q, const Buffer& k_cache,
                        const Buffer& v_cache, const Buffer& cell_table, const Buffer& spans,
                        Buffer& o, const AttentionShape& s, bool f16, const AttentionPlan& plan,
                        Buffer* partials) {
    if (s.head_dim > kMaxHeadDim) {
        throw std::invalid_argument("attention: head_dim " + std::to_string(s.head_dim) + " > " +
                                    std::to_string(kMaxHeadDim));
    }
    if (s.n_head_kv == 0 || s.n_head % s.n_head_kv != 0) {
        throw std::invalid_argument("attention: n_head must be a multiple of n_head_kv");
    }
    if (plan.path == AttnPath::Auto || plan.n_split == 0 || plan.n_split > kMaxAttnSplit ||
        (plan.n_split > 1 && plan.chunk == 0)) {
        throw std::invalid_argument("attention: plan needs a path, 1.." +
                                    std::to_string(kMaxAttnSplit) + " splits and a chunk size");
    }
    const bool split = plan.n_split > 1;
    if (split && (!partials || partials->size() < attention_partials_bytes(s, plan))) {
        throw std::invalid_argument("attention: split-K needs a partials buffer of " +
                                    std::to_string(attention_partials_bytes(s, plan)) + " bytes");
    }
    Buffer& part = split ? *partials : o;  // bound but unused without a split
    const std::string kv = f16 ? "_f16" : "_f32";
    AttnPush pc{s.n_tok,    s.n_head,   s.n_head_kv, s.head_dim,   s.kv_stride,
                s.q_stride, s.o_stride, s.scale,     plan.n_split, plan.chunk};
    if (plan.path == AttnPath::Row) {
        const Pipeline& p = get("attention_row" + kv, 7, sizeof(AttnPush), wg_row_, {s.head_dim});
        rec.dispatch(p, {&q, &k_cache, &v_cache, &cell_table, &spans, &o, &part}, &pc,
                     ceil_div(uint64_t{s.n_head} * plan.n_split, wg_row_), s.n_tok, 1, "attention");
    } else {
        const Pipeline& p = get("attention" + kv, 7, sizeof(AttnPush), wg_reduce_, {s.head_dim});
        rec.dispatch(p, {&q, &k_cache, &v_cache, &cell_table, &spans, &o, &part}, &pc, s.n_head,
                     s.n_tok, plan.n_split, "attention");
    }
    if (split) {
        const Pipeline& m = get("attention_merge", 2, sizeof(MergePush), wg_reduce_);
        MergePush mp{s.n_head, s.head_dim, plan.n_split, s.o_stride};
        rec.dispatch(m, {&part, &o}, &mp, s.n_head, s.n_tok, 1, "attention merge");
    }
}

void Kernels::swiglu(Recorder& rec, const Buffer& g, uint32_t g_off, const Buffer& u,
                     uint32_t u_off, uint32_t in_stride, Buffer& y, uint32_t n, uint32_t n_tok) {
    const Pipeline& p = get("swiglu", 3, sizeof(SwigluPush), wg_elem_);
    SwigluPush pc{n, n_tok, g_off, u_off, in_stride};
    rec.dispatch(p, {&g, &u, &y}, &pc, ceil_div(n, wg_elem_), n_tok, 1, "swiglu");
}

void Kernels::add(Recorder& rec, Buffer& a, const Buffer& b, uint32_t n) {
    const Pipeline& p = get("add", 2, sizeof(NPush), wg_elem_);
    NPush pc{n};
    uint32_t gx = 0, gy = 0;
    groups_1d(n, wg_elem_, gx, gy);
    rec.dispatch(p, {&a, &b}, &pc, gx, gy, 1, "add");
}

}  // namespace wb::vk
