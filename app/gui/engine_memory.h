#pragma once
// The engine's memory by purpose (weights, KV cache, activations, staging)
// for the charts and the status bar. Vulkan models report their own
// accounting (vk::Context::memory_report, plus VK_EXT_memory_budget usage
// and budget where the driver has it); the CPU reference's host buffers
// are sized from the hyperparameters the same way CpuLlama allocates them.

#include "request_types.h"

namespace wb::model {
class Model;
}

namespace wb::gui {

/// Memory figures of one loaded model.
struct EngineMemory {
    MemoryUse fixed;  ///< figures that do not change while the model is loaded

    /// CPU reference: weights as f32 ([n_vocab, n_embd] embeddings and
    /// output, per layer Q/K/V/O, gate/up/down and norms) and the KV cache
    /// (2 * n_layer * n_ctx * n_head_kv * head_dim * bytes per element).
    static EngineMemory of(const model::Model& m);
    /// Current figures (Vulkan: read from the device's accounting now).
    MemoryUse now(const model::Model& m) const;
};

}  // namespace wb::gui
