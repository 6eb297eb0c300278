#include "bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

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

std::string format_columns(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<Align>& align, bool pipes) {
    const size_t n = align.size();
    std::vector<size_t> width(n, 0);
    for (const auto& row : rows) {
        for (size_t c = 0; c < n && c < row.size(); ++c)
            width[c] = std::max(width[c], row[c].size());
    }
    std::string out;
    for (const auto& row : rows) {
        std::string line = pipes ? "| " : "";
        for (size_t c = 0; c < n; ++c) {
            const std::string cell = c < row.size() ? row[c] : std::string();
            const std::string pad(width[c] - cell.size(), ' ');
            line += align[c] == Align::Left ? cell + pad : pad + cell;
            if (c + 1 < n) line += pipes ? " | " : " ";
        }
        if (pipes) line += " |";
        // A plain table's last column left-aligned leaves no trailing blanks.
        if (!pipes) line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    }
    return out;
}

// Widths: wall s 99999.99; tokens/s 999999999.9; requests/s 999999.99; ms
// 999999999.99 (queue wait, TTFT) and 999999999.999 (ITL); speedup 99999.99x.
std::string concurrency_table_header() {
    char line[320];
    std::snprintf(line, sizeof line,
                  "%5s %8s %8s %11s %11s %9s %12s %12s %12s %12s %12s %13s %13s %9s\n", "conc",
                  "requests", "wall s", "in tok/s", "out tok/s", "req/s", "wait p50", "wait p95",
                  "wait p99", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "speedup");
    return line;
}

std::string concurrency_table_row(uint32_t level, size_t requests, const metrics::WindowStats& run,
                                  double base_output_tokens_per_s) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "%5u %8zu %8.2f %11.1f %11.1f %9.2f %12.2f %12.2f %12.2f %12.2f %12.2f %13.3f "
                  "%13.3f %8.2fx\n",
                  level, requests, (run.end_ms - run.begin_ms) / 1000.0, run.input_tokens_per_s,
                  run.output_tokens_per_s, run.requests_per_s, run.queue_wait_ms.p50,
                  run.queue_wait_ms.p95, run.queue_wait_ms.p99, run.ttft_ms.p50, run.ttft_ms.p99,
                  run.itl_ms.p50, run.itl_ms.p99,
                  run.output_tokens_per_s / base_output_tokens_per_s);
    return line;
}

}  // namespace wb::cli
