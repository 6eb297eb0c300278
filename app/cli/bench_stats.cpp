#include "bench_stats.h"

#include <algorithm>
#include <cmath>

namespace wb::cli {

RepeatStats repeat_stats(std::vector<double> v) {
    if (v.empty()) return {NAN, NAN, NAN, NAN};
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    RepeatStats s{};
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.min = v.front();
    s.max = v.back();
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(n);
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    s.stdev = n > 1 ? std::sqrt(var / static_cast<double>(n - 1)) : 0.0;
    return s;
}

}  // namespace wb::cli
