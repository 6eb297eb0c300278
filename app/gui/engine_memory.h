#pragma once
// The engine's memory by purpose (weights, KV cache, activations, staging)
// for the charts and the status bar. Vulkan models report their own
// accounting (vk::Context::memory_report, plus VK_EXT_memory_budget usage
// and budget where the driver has it); the CPU reference's host buffers
// are what CpuModel reports it allocated.

#include "request_types.h"

namespace wb::model {
class Model;
}

namespace wb::gui {

/// Memory figures of one loaded model.
struct EngineMemory {
    MemoryUse fixed;  ///< figures that do not change while the model is loaded

    /// CPU reference: its f32 weights and KV cache (CpuModel::weight_bytes,
    /// kv_bytes); nothing fixed for a Vulkan model (see now()).
    static EngineMemory of(const model::Model& m);
    /// Current figures (Vulkan: read from the device's accounting now).
    MemoryUse now(const model::Model& m) const;
};

}  // namespace wb::gui
