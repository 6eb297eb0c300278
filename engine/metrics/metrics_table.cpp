#include "metrics/metrics_table.h"

#include <cmath>
#include <cstdio>

namespace wb::metrics {

namespace {

std::string num(double v, int decimals, const char* none) {
    if (std::isnan(v)) return none;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

struct Row {
    const char* name;
    const Summary* s;
    int decimals;
};

std::vector<Row> rows(const WindowStats& w) {
    return {{"queue wait (ms)", &w.queue_wait_ms, 2},
            {"TTFT (ms)", &w.ttft_ms, 2},
            {"ITL (ms)", &w.itl_ms, 2},
            {"TPOT (ms)", &w.tpot_ms, 2},
            {"e2e (ms)", &w.e2e_ms, 2},
            {"prompt tokens", &w.prompt_tokens, 1},
            {"output tokens", &w.generated_tokens, 1}};
}

}  // namespace

std::string format_metrics_table(const WindowStats& w) {
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "%-18s %7s %10s %10s %10s %10s %10s %10s\n", "metric", "count",
                  "mean", "p50", "p90", "p95", "p99", "max");
    out += line;
    for (const Row& r : rows(w)) {
        const Summary& s = *r.s;
        const int d = r.decimals;
        std::snprintf(line, sizeof line, "%-18s %7zu %10s %10s %10s %10s %10s %10s\n", r.name,
                      s.count, num(s.mean, d, "-").c_str(), num(s.p50, d, "-").c_str(),
                      num(s.p90, d, "-").c_str(), num(s.p95, d, "-").c_str(),
                      num(s.p99, d, "-").c_str(), num(s.max, d, "-").c_str());
        out += line;
    }
    std::snprintf(line, sizeof line,
                  "requests: %llu finished, %llu completed (stop or length); wall %.3f s; "
                  "%llu steps, engine busy %s%%\n",
                  static_cast<unsigned long long>(w.requests_finished),
                  static_cast<unsigned long long>(w.requests_completed),
                  (w.end_ms - w.begin_ms) / 1000.0, static_cast<unsigned long long>(w.steps),
                  num(w.busy_fraction * 100.0, 1, "-").c_str());
    out += line;
    std::snprintf(line, sizeof line,
                  "over the run: input %s tokens/s (%llu tokens), output %s tokens/s (%llu "
                  "tokens), %s requests/s\n",
                  num(w.input_tokens_per_s, 1, "-").c_str(),
                  static_cast<unsigned long long>(w.prefill_tokens),
                  num(w.output_tokens_per_s, 1, "-").c_str(),
                  static_cast<unsigned long long>(w.decode_tokens),
                  num(w.requests_per_s, 3, "-").c_str());
    out += line;
    std::snprintf(line, sizeof line,
                  "prefix cache: hit rate %s (%llu of %llu prompt tokens cached); %llu "
                  "preemptions\n",
                  num(w.prefix_hit_rate, 3, "-").c_str(),
                  static_cast<unsigned long long>(w.prefix_cached_tokens),
                  static_cast<unsigned long long>(w.prefix_prompt_tokens),
                  static_cast<unsigned long long>(w.preemptions));
    out += line;
    return out;
}

std::string metrics_table_csv(const WindowStats& w) {
    std::string out = "metric,count,mean,p50,p90,p95,p99,max\n";
    for (const Row& r : rows(w)) {
        const Summary& s = *r.s;
        // Full precision: a CSV is read by programs, not people.
        out += std::string(r.name) + "," + std::to_string(s.count) + "," + num(s.mean, 6, "") +
               "," + num(s.p50, 6, "") + "," + num(s.p90, 6, "") + "," + num(s.p95, 6, "") + "," +
               num(s.p99, 6, "") + "," + num(s.max, 6, "") + "\n";
    }
    out += "wall_s," + num((w.end_ms - w.begin_ms) / 1000.0, 6, "") + "\n";
    out += "requests_finished," + std::to_string(w.requests_finished) + "\n";
    out += "requests_completed," + std::to_string(w.requests_completed) + "\n";
    out += "steps," + std::to_string(w.steps) + "\n";
    out += "prefill_tokens," + std::to_string(w.prefill_tokens) + "\n";
    out += "decode_tokens," + std::to_string(w.decode_tokens) + "\n";
    out += "input_throughput," + num(w.input_tokens_per_s, 6, "") + "\n";
    out += "output_throughput," + num(w.output_tokens_per_s, 6, "") + "\n";
    out += "request_throughput," + num(w.requests_per_s, 6, "") + "\n";
    out += "busy_fraction," + num(w.busy_fraction, 6, "") + "\n";
    return out;
}

}  // namespace wb::metrics
