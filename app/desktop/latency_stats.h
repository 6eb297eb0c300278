#pragma once
// The latency percentiles the live charts draw, from the samples a time
// window holds, computed as every other surface computes them
// (metrics::summarize: linear interpolation between closest ranks, the
// definition in engine/metrics/percentile.h).

#include <vector>

namespace wb::gui {

/// p50, p95 and p99 of a window's latencies.
struct LatencyPercentiles {
    double p50, p95, p99;  ///< ms; NaN when the window holds no sample
};

/// The percentiles of `ms` (any order; NaN samples are skipped), in ms.
LatencyPercentiles latency_percentiles(std::vector<double> ms);

}  // namespace wb::gui
