#include "bench_bandwidth.h"

#include <cstdio>

#include "exec/cpu/bandwidth.h"
#include "exec/cpu/isa.h"
#include "exec/cpu/thread_pool.h"

namespace wb::cli {

namespace {

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace

BandwidthFigures measure_bandwidth(unsigned threads, int reps) {
    BandwidthFigures b;
    b.threads = threads;
    b.llc_bytes = cpu::last_level_cache_bytes();
    b.buffer_bytes = cpu::bandwidth_buffer_bytes(b.llc_bytes);
    const cpu::Isa isa = cpu::best_isa();
    // The loads read_sum uses: 256-bit on every AVX2 level (AVX-512 too).
    b.isa = cpu::uses_avx2(isa) ? "avx2" : cpu::isa_name(isa);
    cpu::ThreadPool pool(threads);
    b.gbps = cpu::measure_read_bandwidth(pool, isa, b.buffer_bytes, reps).gbps;
    b.stats = repeat_stats(b.gbps);
    return b;
}

nlohmann::json bandwidth_json(const BandwidthFigures& b) {
    return {{"threads", b.threads},         {"buffer_bytes", b.buffer_bytes},
            {"llc_bytes", b.llc_bytes},     {"isa", b.isa},
            {"unit", "GB/s (1e9 bytes/s)"}, {"median", b.stats.median},
            {"stdev", b.stats.stdev},       {"min", b.stats.min},
            {"max", b.stats.max},           {"all", b.gbps}};
}

std::string bandwidth_table(const std::vector<BandwidthFigures>& runs, int reps) {
    std::vector<std::vector<std::string>> rows{
        {"test", "threads", "buffer MiB", "GB/s median", "min-max", "stdev"}};
    for (const BandwidthFigures& b : runs) {
        rows.push_back({"read bandwidth", std::to_string(b.threads),
                        std::to_string(b.buffer_bytes >> 20), fixed(b.stats.median, 2),
                        fixed(b.stats.min, 2) + "-" + fixed(b.stats.max, 2),
                        fixed(b.stats.stdev, 2)});
    }
    std::string s = format_columns(
        rows, {Align::Left, Align::Right, Align::Right, Align::Right, Align::Right, Align::Right},
        true);
    const uint64_t llc = runs.empty() ? 0 : runs.front().llc_bytes;
    s += "(GB/s = 1e9 bytes/s: every thread sums 64-bit words (" +
         (runs.empty() ? std::string("scalar") : runs.front().isa) +
         " loads) of a buffer of max(256 MiB, 4 x the last-level cache, " +
         (llc ? std::to_string(llc >> 10) + " KiB" : std::string("unknown")) + "); " +
         std::to_string(reps) + " timed passes after one warm-up)\n";
    return s;
}

double weight_gbps(uint64_t bytes_per_token, double tokens_per_s) {
    return static_cast<double>(bytes_per_token) * tokens_per_s / 1e9;
}

}  // namespace wb::cli
