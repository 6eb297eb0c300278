#pragma once
// `bench --bandwidth`: this machine's memory read bandwidth at the bench's
// thread counts (cpu/bandwidth.h: every thread sums 64-bit words of a
// buffer max(256 MiB, 4 x last-level cache) large), and decode's share of
// it. Figures in GB/s = 1e9 bytes per second.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_stats.h"

namespace wb::cli {

/// The read bandwidth at one thread count.
struct BandwidthFigures {
    unsigned threads = 0;
    uint64_t buffer_bytes = 0;  ///< bytes read per pass
    uint64_t llc_bytes = 0;     ///< last-level cache found (0: unknown)
    std::string isa;            ///< loads used: "avx2" (256-bit) or "scalar" (64-bit)
    std::vector<double> gbps;   ///< each timed pass, GB/s
    RepeatStats stats{};        ///< over gbps: median, stdev, min, max (GB/s)
};

/// Measures with `threads` threads (>= 1), one untimed pass then `reps`
/// timed ones (>= 1). Throws std::bad_alloc when the buffer cannot be had.
BandwidthFigures measure_bandwidth(unsigned threads, int reps);

/// {"threads", "buffer_bytes", "llc_bytes", "isa", "unit": "GB/s (1e9
/// bytes/s)", "median", "stdev", "min", "max", "all"}.
nlohmann::json bandwidth_json(const BandwidthFigures& b);

/// The table `bench --bandwidth` prints: threads, buffer MiB, GB/s median
/// (min-max), stdev; then one line saying how it was measured.
std::string bandwidth_table(const std::vector<BandwidthFigures>& runs, int reps);

/// Decode's effective weight bandwidth in GB/s: `bytes_per_token` weight
/// bytes read per decoded token (model/weight_traffic.h) x `tokens_per_s`.
double weight_gbps(uint64_t bytes_per_token, double tokens_per_s);

}  // namespace wb::cli
