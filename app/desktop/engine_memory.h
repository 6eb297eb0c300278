#pragma once
// The engine's memory by purpose (weights, KV cache, activations, staging)
// for the charts and the status bar, from the model's own report
// (model::Model::memory_report: device accounting plus VK_EXT_memory_budget
// on Vulkan, host buffers on the CPU reference).

#include "desktop/request_types.h"

namespace wb::model {
class Model;
}

namespace wb::gui {

/// Current memory figures of `m` in bytes; device usage and budget are -1
/// when the driver does not report them. Safe to call while it decodes.
MemoryUse memory_of(const model::Model& m);

}  // namespace wb::gui
