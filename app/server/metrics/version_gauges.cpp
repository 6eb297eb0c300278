#include "server/metrics/version_gauges.h"

#include <algorithm>
#include <cmath>

namespace wb::server {

VersionGauges gauges_of(const core::EngineSession& session, const std::string& model_version) {
    const core::SessionStats s = session.stats();
    VersionGauges g;
    g.model_version = model_version;
    g.running = s.running;
    g.queued = s.queued;
    g.kv_blocks_used = s.kv_blocks_used;
    g.kv_blocks_free =
        s.kv_blocks_total >= s.kv_blocks_used ? s.kv_blocks_total - s.kv_blocks_used : 0;
    g.kv_blocks_cached = s.kv_blocks_cached;
    g.prefix_cache_hit_rate = s.prompt_tokens > 0 ? static_cast<double>(s.prompt_tokens_cached) /
                                                        static_cast<double>(s.prompt_tokens)
                                                  : std::nan("");
    g.memory_bytes = static_cast<double>(s.memory_bytes);
    g.memory_on_device = s.memory_on_device;
    // Steps overlap nothing on the one engine thread, so busy <= wall; the
    // clamp only guards the two clocks' reads being a moment apart.
    g.busy_share = s.wall_ms > 0 ? std::min(1.0, s.busy_ms / s.wall_ms) : std::nan("");
    return g;
}

}  // namespace wb::server
