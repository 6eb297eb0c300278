#include "metrics/metrics_json.h"

#include <cmath>

namespace wb::metrics {

nlohmann::json summary_json(const Summary& s) {
    auto v = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
    return {{"count", s.count}, {"mean", v(s.mean)}, {"p50", v(s.p50)}, {"p90", v(s.p90)},
            {"p95", v(s.p95)},  {"p99", v(s.p99)},   {"max", v(s.max)}};
}

nlohmann::json window_json(const WindowStats& w) {
    auto v = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
    return {{"wall_ms", w.end_ms - w.begin_ms},
            {"queue_wait_ms", summary_json(w.queue_wait_ms)},
            {"ttft_ms", summary_json(w.ttft_ms)},
            {"itl_ms", summary_json(w.itl_ms)},
            {"tpot_ms", summary_json(w.tpot_ms)},
            {"e2e_ms", summary_json(w.e2e_ms)},
            {"prompt_tokens", summary_json(w.prompt_tokens)},
            {"output_tokens", summary_json(w.generated_tokens)},
            {"requests_finished", w.requests_finished},
            {"requests_completed", w.requests_completed},
            {"steps", w.steps},
            {"prefill_tokens", w.prefill_tokens},
            {"decode_tokens", w.decode_tokens},
            {"input_throughput", v(w.input_tokens_per_s)},
            {"output_throughput", v(w.output_tokens_per_s)},
            {"request_throughput", v(w.requests_per_s)},
            {"busy_fraction", v(w.busy_fraction)},
            {"prefix_prompt_tokens", w.prefix_prompt_tokens},
            {"prefix_cached_tokens", w.prefix_cached_tokens},
            {"prefix_hit_rate", v(w.prefix_hit_rate)},
            {"preemptions", w.preemptions}};
}

}  // namespace wb::metrics
