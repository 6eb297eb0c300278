// VkModel: device creation, the fit check, and the upload of the weight
// table (ModelDesc) and KV cache. decode() is in vk_model_decode.cpp.

#include "exec/vk/vk_model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "errors/errors.h"
#include "exec/vk/buffer.h"
#include "exec/vk/kernels.h"
#include "exec/vk/recorder.h"
#include "exec/vk/vk_model_impl.h"
#include "exec/vk/weights.h"
#include "ggml/types.h"
#include "gguf/gguf.h"

namespace wb::model {

namespace {

using vk::Buffer;
using vk::DeviceWeight;
using vk::Memory;
using vk::Purpose;

/// Matrix `m` on the device: stacked by rows when its parts share a type
/// (one dispatch), else one weight per part.
VkMat upload_mat(vk::Context& ctx, const ModelDesc& d, const MatDesc& m) {
    VkMat out;
    bool same_type = true;
    for (uint32_t p : m.parts)
        same_type = same_type && d.tensors[p].type == d.tensors[m.parts[0]].type;
    if (same_type) {
        std::vector<DeviceWeight::Part> parts;
        for (uint32_t p : m.parts) parts.push_back({d.tensors[p].data, d.tensors[p].ne1});
        out.pieces.push_back(
            DeviceWeight::upload_stacked(ctx, m.label, d.tensors[m.parts[0]].type, m.ne0, parts));
        out.col.push_back(0);
        return out;
    }
    uint32_t col = 0;
    for (uint32_t p : m.parts) {
        const TensorRef& t = d.tensors[p];
        out.pieces.push_back(DeviceWeight::upload(ctx, t.name, t.type, t.ne0, t.ne1, t.data));
        out.col.push_back(col);
        col += static_cast<uint32_t>(t.ne1);
    }
    return out;
}

/// Norm weights and biases are tiny: dequantized to f32 on the host whatever their type.
Buffer upload_vec(vk::Context& ctx, const ModelDesc& d, const VecDesc& v) {
    std::vector<float> vals(v.n);  // [n]
    size_t at = 0;
    for (uint32_t p : v.parts) {
        const TensorRef& t = d.tensors[p];
        const size_t row = ggml::row_bytes(t.type, t.ne0);
        for (uint64_t r = 0; r < t.ne1; ++r, at += t.ne0)
            ggml::dequantize_row(t.type, t.data + r * row, vals.data() + at, t.ne0, t.name);
    }
    Buffer b(ctx, v.n * sizeof(float), Memory::Device, Purpose::Weights);
    b.upload(vals.data(), v.n * sizeof(float));
    return b;
}

}  // namespace

MemoryNeed VkModel::memory_needed(const gguf::File& file, const ContextParams& ctx,
                                  const vk::KernelConfig& kernels) {
    return plan_memory(ModelDesc::from_gguf(file), ctx, PlanShape{}, kernels);
}

VkModel::VkModel(const gguf::File& file, const ContextParams& ctx, const VkModelOptions& opts)
    : desc_(ModelDesc::from_gguf(file)),
      ctx_(ctx),
      cells_(ctx.n_ctx, ctx.n_seq_max, desc_.hp.n_vocab, ctx.kv_block_size),
      profiling_(opts.profile),
      impl_(std::make_unique<Impl>()) {
    if (hp_.head_dim > vk::Kernels::kMaxHeadDim) {
        throw std::invalid_argument("head_dim " + std::to_string(hp_.head_dim) +
                                    " exceeds the attention shader's " +
                                    std::to_string(vk::Kernels::kMaxHeadDim));
    }
    const uint32_t kv_dim = hp_.kv_dim();
    if (const std::string p = kv_type_problem(ctx.kv_type, hp_.head_dim); !p.empty())
        throw std::invalid_argument(p);
    if (ctx.kv_type == KvType::F16 && kv_dim % 2 != 0) {
        throw std::invalid_argument("an F16 KV cache needs an even n_head_kv * head_dim");
    }
    Impl& m = *impl_;
    using Clock = std::chrono::steady_clock;
    const Clock::time_point t_device = Clock::now();
    m.ctx = vk::Context::create(opts.device);
    vk::Context& c = *m.ctx;
    const Clock::time_point t_upload = Clock::now();
    load_times_.device_ms = std::chrono::duration<double, std::milli>(t_upload - t_device).count();

    // Fit check before any upload: the largest device-local heap, or the
    // driver's budget minus usage where VK_EXT_memory_budget exists.
    const MemoryNeed need = plan_memory(desc_, ctx, PlanShape{},
                                        vk::Kernels::config_for(c.info(), c.options().gpu_kernels));
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
            ", activations " + std::to_string(need.activations + need.staging) + ") but device " +
            c.info().name + " has " + std::to_string(available) +
            " bytes available; the KV pool holds " + std::to_string(cells_.size()) +
            " cells shared by all sequences (the context size): lower the context size (-c), "
            "use an F16 KV cache, or a quantized model (workbench-cli plan shows what fits)");
    }
    const uint64_t kv_bytes = uint64_t{cells_.size()} * kv_row_bytes(ctx.kv_type, kv_dim);
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
        longest.max_span = cells_.size();
        (void)m.kernels->plan_attention(longest);
    }
    m.replay = opts.replay;
    m.barriers = opts.barriers;
    if (const char* e = std::getenv("WB_VK_REPLAY"); e && std::string(e) == "0") m.replay = false;
    if (const char* e = std::getenv("WB_VK_BARRIERS"); e && std::string(e) == "full")
        m.barriers = vk::Barriers::Full;
    for (const MatDesc& md : desc_.mats) m.mats.push_back(upload_mat(c, desc_, md));
    for (const VecDesc& vd : desc_.vecs) m.vecs.push_back(upload_vec(c, desc_, vd));
    for (TensorRef& t : desc_.tensors) t.data = nullptr;  // the File may close
    for (uint32_t l = 0; l < hp_.n_layer; ++l) {
        m.k_cache.emplace_back(c, kv_bytes, Memory::Device, Purpose::KvCache);
        m.v_cache.emplace_back(c, kv_bytes, Memory::Device, Purpose::KvCache);
        m.k_cache.back().fill(0);  // free cells are never read; zeroed so the cache starts defined
        m.v_cache.back().fill(0);
    }
    load_times_.upload_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - t_upload).count();
}

VkModel::~VkModel() = default;

std::string VkModel::backend_name() const {
    return impl_->ctx->info().name;
}
vk::MemoryReport VkModel::device_memory_report() const {
    return impl_->ctx->memory_report();
}

MemoryReport VkModel::memory_report() const {
    // Atomic counters and a physical-device query: safe from another
    // thread while the engine thread decodes.
    const vk::MemoryReport r = impl_->ctx->memory_report();
    MemoryReport m;
    m.weights = r.bytes[static_cast<int>(vk::Purpose::Weights)];
    m.kv_cache = r.bytes[static_cast<int>(vk::Purpose::KvCache)];
    m.activations = r.bytes[static_cast<int>(vk::Purpose::Activations)];
    m.staging = r.bytes[static_cast<int>(vk::Purpose::Staging)];
    m.on_device = true;
    if (r.has_budget) {
        const std::vector<vk::HeapInfo>& heaps = impl_->ctx->info().heaps;
        uint64_t usage = 0, budget = 0;
        for (size_t i = 0; i < r.heaps.size() && i < heaps.size(); ++i) {
            if (!heaps[i].device_local) continue;
            usage += r.heaps[i].usage;
            budget += r.heaps[i].budget;
        }
        m.device_usage = usage;
        m.device_budget = budget;
    }
    return m;
}

DeviceFacts VkModel::device_facts() const {
    const vk::DeviceInfo& d = impl_->ctx->info();
    DeviceFacts f;
    f.backend = "vulkan";
    f.name = d.name;
    f.type = d.type_slug();
    f.driver_name = d.driver_name;
    f.driver_version = d.driver_version_full();
    f.api_version = d.api_version_string();
    return f;
}
const vk::DeviceInfo& VkModel::device_info() const {
    return impl_->ctx->info();
}
const vk::ValidationLog* VkModel::validation() const {
    return impl_->ctx->validation();
}
vk::Kernels::PipelineStats VkModel::pipeline_stats() const {
    return impl_->kernels->pipeline_stats();
}
uint64_t VkModel::pipeline_cache_loaded_bytes() const {
    return impl_->ctx->pipeline_cache_loaded_bytes();
}

}  // namespace wb::model
