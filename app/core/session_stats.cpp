// EngineSession::stats(), apart from engine_session.cpp: it reads only what
// the session already publishes for other threads (the metrics store's
// lifetime totals under its mutex, the model's memory report, the fixed
// block size).
#include "core/session_stats.h"

#include <exception>

#include "core/engine_session.h"

namespace wb::core {

SessionStats EngineSession::stats() const {
    SessionStats s;
    const metrics::LifetimeTotals t = metrics().lifetime();
    const model::Model& m = model();
    // Fixed when the model was loaded, so safe to read while steps run.
    s.kv_block_size = m.context().kv_block_size;
    const uint32_t bs = s.kv_block_size > 0 ? s.kv_block_size : 1;
    s.running = t.running;
    s.queued = t.queued;
    s.kv_blocks_total = t.kv_cells_total / bs;
    s.kv_blocks_used = t.kv_cells_used / bs;
    s.kv_blocks_cached = t.kv_cells_cached / bs;
    s.prompt_tokens = t.prefix_prompt_tokens;
    s.prompt_tokens_cached = t.prefix_cached_tokens;
    s.steps = t.steps;
    s.busy_ms = t.busy_ms;
    s.wall_ms = now_ms();
    // Documented as cheap and safe while decode() runs on the engine thread;
    // a driver query that fails leaves the bytes at 0 (stats never throw).
    try {
        const model::MemoryReport r = m.memory_report();
        s.memory_on_device = r.on_device;
        s.memory_bytes = r.device_usage.value_or(r.total());
    } catch (const std::exception&) {
    }
    return s;
}

}  // namespace wb::core
