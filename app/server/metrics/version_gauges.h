#pragma once
// VersionGauges: one model version's gauges at scrape time (running and
// queued requests, KV pool blocks, prefix-cache hit rate, memory, engine
// busy share), and gauges_of(), which reads them from a session. Qt-free.

#include <string>

#include "core/engine_session.h"

namespace wb::server {

/// One loaded model version's figures now, as ServerMetrics::render
/// exports them (docs/metrics.md, "Prometheus metrics").
struct VersionGauges {
    std::string model_version;    ///< the series' model_version label (model_version_label())
    double running = 0;           ///< requests holding a slot
    double queued = 0;            ///< requests waiting for a slot
    double kv_blocks_used = 0;    ///< KV pool blocks held by running sequences
    double kv_blocks_free = 0;    ///< the other blocks (free for new sequences)
    double kv_blocks_cached = 0;  ///< of the free blocks, those the prefix cache keeps
    /// Prompt tokens served from the prefix cache / prompt tokens, since the
    /// session opened (0..1); NaN before any prompt was prefilled.
    double prefix_cache_hit_rate = 0;
    double memory_bytes = 0;        ///< bytes the model holds (core::SessionStats::memory_bytes)
    bool memory_on_device = false;  ///< device memory (Vulkan) rather than host memory
    /// Engine busy time / wall time since the session opened (0..1;
    /// core::SessionStats::busy_ms says what busy means per backend); NaN
    /// when no wall time passed.
    double busy_share = 0;
};

/// The gauges of `session`, labelled `model_version`, from
/// EngineSession::stats() (O(1), any thread). Never throws but bad_alloc.
VersionGauges gauges_of(const core::EngineSession& session, const std::string& model_version);

}  // namespace wb::server
