#pragma once
// Exact percentiles and the summary row (count, mean, p50, p90, p95, p99,
// max) every latency metric is reported with.
//
// Definition (one for the whole project): linear interpolation between the
// closest ranks, numpy.percentile's default method "linear" (Hyndman & Fan
// 1996, type 7). For n samples sorted ascending x[0..n-1] and p in [0, 100]:
//     h = (n - 1) * p / 100,  k = floor(h)
//     P(p) = x[k] + (h - k) * (x[k + 1] - x[k])     (P = x[n-1] when k = n-1)
// so P(0) is the minimum, P(100) the maximum, and P(50) the usual median.
// Exact: every sample takes part, there is no histogram or sketch error.

#include <cstddef>
#include <span>
#include <vector>

namespace wb::metrics {

/// The percentile `p` (0..100, see the definition above) of samples that are
/// already sorted ascending. Returns NaN for an empty span. Throws
/// std::invalid_argument when p is outside [0, 100] or NaN.
double percentile_sorted(std::span<const double> sorted, double p);

/// One metric over the samples a window covers. Units are the metric's
/// (ms for latencies, tokens for token counts). With count == 0 every other
/// field is NaN (there is nothing to report; JSON writers print null).
struct Summary {
    size_t count = 0;
    double mean;
    double p50;
    double p90;
    double p95;
    double p99;
    double max;

    Summary();
};

/// Summary of `samples` (any order; NaN samples are skipped, so a metric a
/// request never reached does not count). Cost O(n) with selection
/// (std::nth_element) instead of a full sort; the result equals
/// percentile_sorted() on the sorted samples. Takes the vector by value
/// because selection reorders it.
Summary summarize(std::vector<double> samples);

}  // namespace wb::metrics
