#include "engine_memory.h"

#include "model/model.h"
#include "model/cpu_model.h"
#include "model/vk_model.h"
#include "vk/context.h"

namespace wb::gui {

EngineMemory EngineMemory::of(const model::Model& m) {
    EngineMemory out;
    // Vulkan models are read live in now(); the CPU reference's host
    // buffers (f32 weights, f32 KV cache) do not change once loaded.
    if (const auto* cpu = dynamic_cast<const model::CpuModel*>(&m)) {
        out.fixed.weights = static_cast<double>(cpu->weight_bytes());
        out.fixed.kv_cache = static_cast<double>(cpu->kv_bytes());
    }
    return out;
}

MemoryUse EngineMemory::now(const model::Model& m) const {
    const auto* vkm = dynamic_cast<const model::VkModel*>(&m);
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
