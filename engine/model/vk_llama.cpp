#include "model/vk_llama.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/vk_llama_impl.h"
#include "vk/buffer.h"
#include "vk/kernels.h"
#include "vk/recorder.h"
#include "vk/weights.h"

namespace wb::model {

namespace {

using vk::Buffer;
using vk::DeviceWeight;
using vk::Memory;
using vk::Purpose;

constexpr uint32_t kActivationEstimateTokens = 512;

/// Tensor `name` after checking it is [ne0, ne1] (ggml order); gguf::Error
/// naming the tensor, its shape and the expected one otherwise.
const gguf::TensorInfo& checked(const gguf::File& f, const std::string& name, uint64_t ne0,
                                uint64_t ne1) {
    const gguf::TensorInfo& t = f.tensor(name);
    if (t.ne[0] != ne0 || t.n_rows() != ne1) {
        throw gguf::Error(f.path(), t.info_offset, "tensor '" + name + "'",
                          "shape " + t.shape_string() + ", expected [" + std::to_string(ne0) +
                              ", " + std::to_string(ne1) + "]");
    }
    return t;
}

DeviceWeight upload_matrix(vk::Context& ctx, const gguf::File& f, const std::string& name,
                           uint64_t ne0, uint64_t ne1) {
    const gguf::TensorInfo& t = checked(f, name, ne0, ne1);
    return DeviceWeight::upload(ctx, name, t.type, ne0, ne1, t.data);
}

/// The tensors `names` ([ne0, rows[i]] each) as one weight stacked by rows
/// when they share a type, else one weight each (then each is its own
/// dispatch, writing the same columns of the output).
std::vector<DeviceWeight> upload_stacked(vk::Context& ctx, const gguf::File& f,
                                         const std::vector<std::string>& names,
                                         const std::vector<uint64_t>& rows, uint64_t ne0) {
    std::vector<const gguf::TensorInfo*> ts;
    std::vector<DeviceWeight::Part> parts;
    bool same_type = true;
    for (size_t i = 0; i < names.size(); ++i) {
        ts.push_back(&checked(f, names[i], ne0, rows[i]));
        parts.push_back({ts.back()->data, rows[i]});
        same_type = same_type && ts.back()->type == ts.front()->type;
    }
    std::vector<DeviceWeight> out;
    if (same_type) {
        std::string label = names.front();
        for (size_t i = 1; i < names.size(); ++i) label += "+" + names[i];
        out.push_back(DeviceWeight::upload_stacked(ctx, label, ts.front()->type, ne0, parts));
    } else {
        for (size_t i = 0; i < names.size(); ++i)
            out.push_back(
                DeviceWeight::upload(ctx, names[i], ts[i]->type, ne0, rows[i], ts[i]->data));
    }
    return out;
}

/// Norm weights are tiny: dequantized to f32 on the host whatever their type.
Buffer upload_norm(vk::Context& ctx, const gguf::File& f, const std::string& name, uint64_t n) {
    const gguf::TensorInfo& t = checked(f, name, n, 1);
    std::vector<float> v(n);  // [n]
    ggml::dequantize_row(t.type, t.data, v.data(), n, name);
    Buffer b(ctx, n * sizeof(float), Memory::Device, Purpose::Weights);
    b.upload(v.data(), n * sizeof(float));
    return b;
}

}  // namespace

VkMemoryNeed VkLlama::memory_needed(const gguf::File& file, const ContextParams& ctx) {
    const HParams hp = HParams::from_gguf(file);
    VkMemoryNeed need;
    for (const gguf::TensorInfo& t : file.tensors()) {
        const bool is_norm = t.n_dims == 1;
        need.weights += is_norm ? t.n_elements() * sizeof(float) : ((t.nbytes + 3) & ~uint64_t{3});
    }
    const uint64_t kv_dim = uint64_t{hp.n_head_kv} * hp.head_dim;
    need.kv_cache = 2ull * hp.n_layer * ctx.n_ctx * kv_dim * (ctx.kv_type == KvType::F16 ? 2 : 4);
    const uint64_t t = kActivationEstimateTokens;
    need.activations = 4ull * t * (5ull * hp.n_embd + 2 * kv_dim + 3ull * hp.n_ff + hp.n_rot + 3) +
                       4ull * t * std::min<uint64_t>(ctx.n_ctx, 4096) + 8ull * hp.n_vocab;
    return need;
}

VkLlama::VkLlama(const gguf::File& file, const ContextParams& ctx, const VkLlamaOptions& opts)
    : hp_(HParams::from_gguf(file)),
      ctx_(ctx),
      cells_(ctx.n_ctx, ctx.n_seq_max, HParams::from_gguf(file).n_vocab),
      profiling_(opts.profile),
      impl_(std::make_unique<Impl>()) {
    if (hp_.head_dim > vk::Kernels::kMaxHeadDim) {
        throw std::invalid_argument("head_dim " + std::to_string(hp_.head_dim) +
                                    " exceeds the attention shader's " +
                                    std::to_string(vk::Kernels::kMaxHeadDim));
    }
    const uint32_t kv_dim = hp_.n_head_kv * hp_.head_dim;
    if (ctx.kv_type == KvType::F16 && kv_dim % 2 != 0) {
        throw std::invalid_argument("an F16 KV cache needs an even n_head_kv * head_dim");
    }
    Impl& m = *impl_;
    m.ctx = vk::Context::create(opts.device);
    vk::Context& c = *m.ctx;

    // Fit check before any upload: the largest device-local heap, or the
    // driver's budget minus usage where VK_EXT_memory_budget exists.
    const VkMemoryNeed need = memory_needed(file, ctx);
    const vk::MemoryReport rep = c.memory_report();
    uint64_t available = 0;
    for (size_t i = 0; i < rep.heaps.size(); ++i) {
        const bool local = i < c.info().heaps.size() && c.info().heaps[i].device_local;
        if (!local) continue;
        const uint64_t a = rep.has_budget ? (rep.heaps[i].budget > rep.heaps[i].usage
                                                 ? rep.heaps[i].budget - rep.heaps[i].usage
                                                 : 0)
                                          : rep.heaps[i].size;
        available = std::max(available, a);
    }
    if (need.total() > available) {
        throw std::runtime_error(
            "model needs " + std::to_string(need.total()) + " bytes (weights " +
            std::to_string(need.weights) + ", KV cache " + std::to_string(need.kv_cache) +
            ", activations " + std::to_string(need.activations) + ") but device " + c.info().name +
            " has " + std::to_string(available) + " bytes available; the KV cache holds " +
            std::to_string(ctx.n_ctx) +
            " cells (context size times parallel "
            "slots): lower the context size or the slots (-c, --concurrency), "
            "use an F16 KV cache, or a quantized model");
    }
    const uint64_t kv_bytes = uint64_t{ctx.n_ctx} * kv_dim * (ctx.kv_type == KvType::F16 ? 2 : 4);
    if (kv_bytes > c.binding_limit()) {
        throw std::invalid_argument("KV cache of one layer is " + std::to_string(kv_bytes) +
                                    " bytes, over the device's binding limit " +
                                    std::to_string(c.binding_limit()) +
                                    "; use a smaller context (-c)");
    }

    m.kernels = std::make_unique<vk::Kernels>(c);
    {
        // Before any upload: a span as long as the context must be
        // computable (CPU devices split spans under a shader loop limit,
        // up to Kernels::kMaxAttnSplit chunks; plan_attention throws past it).
        vk::AttentionShape longest;
        longest.n_tok = 1;
        longest.n_head = hp_.n_head;
        longest.n_head_kv = hp_.n_head_kv;
        longest.head_dim = hp_.head_dim;
        longest.max_span = ctx.n_ctx;
        (void)m.kernels->plan_attention(longest);
    }
    m.rec = std::make_unique<vk::Recorder>(c);
    const uint64_t n_embd = hp_.n_embd;
    m.token_embd = upload_matrix(c, file, "token_embd.weight", n_embd, hp_.n_vocab);
    m.output_norm = upload_norm(c, file, "output_norm.weight", n_embd);
    if (!hp_.tied_embeddings)
        m.output = upload_matrix(c, file, "output.weight", n_embd, hp_.n_vocab);
    m.layers.resize(hp_.n_layer);
    for (uint32_t l = 0; l < hp_.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        VkLayer& L = m.layers[l];
        L.attn_norm = upload_norm(c, file, p + "attn_norm.weight", n_embd);
        const uint64_t q_dim = uint64_t{hp_.n_head} * hp_.head_dim;
        L.qkv =
            upload_stacked(c, file, {p + "attn_q.weight", p + "attn_k.weight", p + "attn_v.weight"},
                           {q_dim, kv_dim, kv_dim}, n_embd);
        L.wo = upload_matrix(c, file, p + "attn_output.weight", uint64_t{hp_.n_head} * hp_.head_dim,
                             n_embd);
        L.ffn_norm = upload_norm(c, file, p + "ffn_norm.weight", n_embd);
        L.gate_up = upload_stacked(c, file, {p + "ffn_gate.weight", p + "ffn_up.weight"},
                                   {hp_.n_ff, hp_.n_ff}, n_embd);
        L.down = upload_matrix(c, file, p + "ffn_down.weight", hp_.n_ff, n_embd);
        L.k_cache = Buffer(c, kv_bytes, Memory::Device, Purpose::KvCache);
        L.v_cache = Buffer(c, kv_bytes, Memory::Device, Purpose::KvCache);
        L.k_cache.fill(0);  // free cells are never read; zeroed so the cache starts defined
        L.v_cache.fill(0);
    }
}

VkLlama::~VkLlama() = default;

std::string VkLlama::backend_name() const {
    return impl_->ctx->info().name;
}
vk::MemoryReport VkLlama::memory_report() const {
    return impl_->ctx->memory_report();
}
const vk::DeviceInfo& VkLlama::device_info() const {
    return impl_->ctx->info();
}
const vk::ValidationLog* VkLlama::validation() const {
    return impl_->ctx->validation();
}

}  // namespace wb::model
