#include "metrics/percentile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace wb::metrics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void check_p(double p) {
    if (!(p >= 0.0 && p <= 100.0)) {
        throw std::invalid_argument("percentile: p must be in [0, 100], got " + std::to_string(p));
    }
}

// Position h = (n - 1) p / 100 split into its rank k and fraction.
struct Rank {
    size_t k;
    double frac;
};

Rank rank_of(size_t n, double p) {
    const double h = static_cast<double>(n - 1) * p / 100.0;
    double k = std::floor(h);
    if (k >= static_cast<double>(n - 1)) return {n - 1, 0.0};
    return {static_cast<size_t>(k), h - k};
}

}  // namespace

double percentile_sorted(std::span<const double> sorted, double p) {
    check_p(p);
    if (sorted.empty()) return kNaN;
    const Rank r = rank_of(sorted.size(), p);
    if (r.k + 1 >= sorted.size() || r.frac == 0.0) return sorted[r.k];
    return sorted[r.k] + r.frac * (sorted[r.k + 1] - sorted[r.k]);
}

Summary::Summary() : mean(kNaN), p50(kNaN), p90(kNaN), p95(kNaN), p99(kNaN), max(kNaN) {}

Summary summarize(std::vector<double> samples) {
    std::erase_if(samples, [](double v) { return std::isnan(v); });
    Summary s;
    s.count = samples.size();
    if (samples.empty()) return s;

    double sum = 0.0;
    for (double v : samples) sum += v;
    s.mean = sum / static_cast<double>(samples.size());

    // Ascending p: each nth_element works on the part right of the previous
    // rank, which is already partitioned, so the total stays O(n).
    const double ps[] = {50.0, 90.0, 95.0, 99.0};
    double* out[] = {&s.p50, &s.p90, &s.p95, &s.p99};
    const size_t n = samples.size();
    size_t done = 0;  // samples[0..done) hold the smallest `done` values, in place
    for (size_t i = 0; i < 4; ++i) {
        const Rank r = rank_of(n, ps[i]);
        auto kth = samples.begin() + static_cast<std::ptrdiff_t>(r.k);
        if (r.k >= done) {
            std::nth_element(samples.begin() + static_cast<std::ptrdiff_t>(done), kth,
                             samples.end());
        }
        const double lo = samples[r.k];
        double v = lo;
        if (r.frac > 0.0 && r.k + 1 < n) {
            // x[k + 1] of the sorted order: the smallest value right of k.
            const double hi = *std::min_element(kth + 1, samples.end());
            v = lo + r.frac * (hi - lo);
        }
        *out[i] = v;
        done = r.k;
    }
    s.max = *std::max_element(samples.begin(), samples.end());
    return s;
}

}  // namespace wb::metrics
