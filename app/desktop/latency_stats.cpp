#include "desktop/latency_stats.h"

#include "metrics/percentile.h"

namespace wb::gui {

LatencyPercentiles latency_percentiles(std::vector<double> ms) {
    const metrics::Summary s = metrics::summarize(std::move(ms));
    return {s.p50, s.p95, s.p99};
}

}  // namespace wb::gui
