#include "desktop/engine_memory.h"

#include "model/model.h"

namespace wb::gui {

MemoryUse memory_of(const model::Model& m) {
    const model::MemoryReport r = m.memory_report();
    MemoryUse u;
    u.weights = static_cast<double>(r.weights);
    u.kv_cache = static_cast<double>(r.kv_cache);
    u.activations = static_cast<double>(r.activations);
    u.staging = static_cast<double>(r.staging);
    u.host = !r.on_device;
    if (r.device_usage) u.device_usage = static_cast<double>(*r.device_usage);
    if (r.device_budget) u.device_budget = static_cast<double>(*r.device_budget);
    return u;
}

}  // namespace wb::gui
