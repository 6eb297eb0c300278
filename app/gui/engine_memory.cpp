#include "engine_memory.h"

#include "model/model.h"
#include "model/vk_llama.h"
#include "vk/context.h"

namespace wb::gui {

EngineMemory EngineMemory::of(const model::Model& m) {
    EngineMemory out;
    if (dynamic_cast<const model::VkLlama*>(&m) != nullptr) return out;  // read live in now()
    const model::HParams& h = m.hparams();
    const model::ContextParams& c = m.context();
    const double embd = h.n_embd, vocab = h.n_vocab, ff = h.n_ff;
    const double q = static_cast<double>(h.n_head) * h.head_dim;
    const double kv = static_cast<double>(h.n_head_kv) * h.head_dim;
    double params = vocab * embd * (h.tied_embeddings ? 1 : 2) + embd;
    params += h.n_layer * (embd * q + 2 * embd * kv + q * embd + 3 * embd * ff + 2 * embd);
    out.fixed.weights = params * 4.0;  // the CPU reference keeps f32 weights
    const double kv_elem = c.kv_type == model::KvType::F16 ? 2.0 : 4.0;
    out.fixed.kv_cache = 2.0 * h.n_layer * c.n_ctx * kv * kv_elem;
    return out;
}

MemoryUse EngineMemory::now(const model::Model& m) const {
    const auto* vkm = dynamic_cast<const model::VkLlama*>(&m);
    if (vkm == nullptr) return fixed;
    // The accounting is atomic counters and the budget a physical-device
    // query, so reading it from the GUI thread does not disturb the engine.
    const vk::MemoryReport r = vkm->memory_report();
    MemoryUse u;
    u.weights = static_cast<double>(r.bytes[static_cast<int>(vk::Purpose::Weights)]);
    u.kv_cache = static_cast<double>(r.bytes[static_cast<int>(vk::Purpose::KvCache)]);
    u.activations = static_cast<double>(r.bytes[static_cast<int>(vk::Purpose::Activations)]);
    u.staging = static_cast<double>(r.bytes[static_cast<int>(vk::Purpose::Staging)]);
    if (r.has_budget) {
        const std::vector<vk::HeapInfo>& heaps = vkm->device_info().heaps;
        double usage = 0, budget = 0;
        for (size_t i = 0; i < r.heaps.size() && i < heaps.size(); ++i) {
            if (!heaps[i].device_local) continue;
            usage += static_cast<double>(r.heaps[i].usage);
            budget += static_cast<double>(r.heaps[i].budget);
        }
        u.device_usage = usage;
        u.device_budget = budget;
    }
    return u;
}

}  // namespace wb::gui
