#pragma once
// What a run of our own engine used, for pricing (cost::figures): one
// definition for `workbench-cli batch` and the Batch tab, so the two price
// the same run alike.

#include "cost/price.h"
#include "metrics/metrics_store.h"

namespace wb::cost {

/// The usage of the requests in `run` (the metrics store over a run's
/// span): its completed requests, their prompt tokens (cached ones too, as
/// a hosted API bills them; the per-request summary's mean x count), the
/// output tokens its steps sampled, and `busy_seconds` of engine busy time
/// (>= 0). Never throws.
Usage run_usage(const metrics::WindowStats& run, double busy_seconds);

}  // namespace wb::cost
