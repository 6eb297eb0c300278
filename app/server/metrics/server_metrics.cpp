#include "server/metrics/server_metrics.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace wb::server {

// The buckets. A histogram answers "what share of requests took under X"
// only at its bounds, so the bounds sit where LLM serving latencies fall
// and where SLOs are set (vLLM and TGI export similar ranges):
// - TTFT: 5 ms (a cached prompt on a GPU) up to 60 s (a long prompt queued
//   behind others on the CPU backend), dense between 50 ms and 2 s where
//   interactive SLOs (e.g. p99 < 500 ms) are set.
// - Inter-token latency: 1 ms (a small model's decode step on a GPU) up to
//   2.5 s (a decode step stalled behind a long prefill chunk); dense from
//   10 to 100 ms, the 10-100 tokens/s range of reading speed and most
//   decode rates.
// - End-to-end: 50 ms (a short answer) up to 300 s (thousands of tokens at
//   a few tokens/s, the per-request timeout's order).
// - Queue wait: like TTFT (it is TTFT's first part); 0 when a slot was
//   free, which falls in the first bucket.
const std::vector<double>& LatencyBuckets::ttft() {
    static const std::vector<double> b = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,
                                          0.3,   0.5,  0.75,  1.0,  1.5,   2.0, 3.0,  5.0,
                                          7.5,   10.0, 15.0,  20.0, 30.0,  60.0};
    return b;
}

const std::vector<double>& LatencyBuckets::inter_token() {
    static const std::vector<double> b = {0.001, 0.0025, 0.005, 0.0075, 0.01,  0.015, 0.02,
                                          0.025, 0.03,   0.04,  0.05,   0.075, 0.1,   0.15,
                                          0.2,   0.3,    0.5,   0.75,   1.0,   2.5};
    return b;
}

const std::vector<double>& LatencyBuckets::e2e() {
    static const std::vector<double> b = {0.05, 0.1,  0.25, 0.5,  1.0,  2.5,   5.0,   10.0,  15.0,
                                          20.0, 30.0, 45.0, 60.0, 90.0, 120.0, 180.0, 240.0, 300.0};
    return b;
}

const std::vector<double>& LatencyBuckets::queue_wait() {
    return ttft();
}

namespace {

const std::vector<std::string> kVersion = {"model_version"};
const std::vector<std::string> kVersionRoute = {"model_version", "route"};

void observe_ms(HistogramFamily& h, const std::string& version, std::optional<double> ms) {
    if (ms && std::isfinite(*ms)) h.observe({version}, *ms / 1000.0);
}

}  // namespace

ServerMetrics::ServerMetrics()
    : requests_(registry_.counter("workbench_requests_total",
                                  "Requests answered, by HTTP status, API route and finish reason "
                                  "(stop, length, timeout, cancelled, rejected, error, context).",
                                  {"model_version", "route", "status", "finish_reason"})),
      prompt_tokens_(registry_.counter(
          "workbench_prompt_tokens_total",
          "Prompt tokens of requests that were admitted (cached ones included).", kVersionRoute)),
      cached_tokens_(registry_.counter("workbench_prompt_tokens_cached_total",
                                       "Prompt tokens whose K/V came from the prefix cache.",
                                       kVersionRoute)),
      generated_tokens_(registry_.counter("workbench_generation_tokens_total",
                                          "Output tokens generated.", kVersionRoute)),
      ttft_(registry_.histogram("workbench_time_to_first_token_seconds",
                                "Time to first token: submission to the first output token.",
                                kVersion, LatencyBuckets::ttft())),
      itl_(registry_.histogram("workbench_inter_token_latency_seconds",
                               "Gap between consecutive output tokens of a request (every gap).",
                               kVersion, LatencyBuckets::inter_token())),
      e2e_(registry_.histogram("workbench_e2e_request_latency_seconds",
                               "End-to-end request latency: submission to finish, any reason.",
                               kVersion, LatencyBuckets::e2e())),
      queue_wait_(registry_.histogram("workbench_request_queue_time_seconds",
                                      "Queue wait: submission to admission into a slot.", kVersion,
                                      LatencyBuckets::queue_wait())) {}

void ServerMetrics::observe(const core::FinishedRequest& f, int http_status,
                            const std::string& route, const std::string& model_version) {
    requests_.inc({model_version, route, std::to_string(http_status), f.finish_reason});
    if (f.admitted()) {
        prompt_tokens_.inc({model_version, route}, static_cast<double>(f.prompt_tokens.size()));
        cached_tokens_.inc({model_version, route},
                           static_cast<double>(std::max(0, f.prompt_tokens_cached)));
        observe_ms(queue_wait_, model_version, f.queue_wait_ms());
    }
    generated_tokens_.inc({model_version, route}, static_cast<double>(f.output_tokens.size()));
    observe_ms(ttft_, model_version, f.ttft_ms());
    for (double gap : f.times.itl_ms) observe_ms(itl_, model_version, gap);
    if (!f.refused) observe_ms(e2e_, model_version, f.e2e_ms());
}

void ServerMetrics::observe_refused(int http_status, const std::string& route,
                                    const std::string& model_version) {
    requests_.inc({model_version, route, std::to_string(http_status), "rejected"});
}

std::string ServerMetrics::render(const std::vector<VersionGauges>& versions) const {
    std::string out = registry_.render();
    // Gauges are read at scrape time, so they live in a registry of their own.
    Registry g;
    GaugeFamily& running =
        g.gauge("workbench_requests_running", "Requests holding a slot.", kVersion);
    GaugeFamily& queued =
        g.gauge("workbench_requests_waiting", "Requests waiting for a slot.", kVersion);
    GaugeFamily& used =
        g.gauge("workbench_kv_blocks_used", "KV pool blocks held by running sequences.", kVersion);
    GaugeFamily& free_blocks =
        g.gauge("workbench_kv_blocks_free",
                "KV pool blocks free for new sequences (cached ones included).", kVersion);
    GaugeFamily& cached =
        g.gauge("workbench_kv_blocks_cached",
                "Free KV pool blocks whose K/V the prefix cache keeps.", kVersion);
    GaugeFamily& hit = g.gauge("workbench_prefix_cache_hit_rate",
                               "Prompt tokens served from the prefix cache / prompt tokens, since "
                               "the model was loaded (NaN before the first prompt).",
                               kVersion);
    GaugeFamily& memory = g.gauge("workbench_memory_bytes",
                                  "Bytes the loaded model holds (location: device or host).",
                                  {"model_version", "location"});
    GaugeFamily& busy =
        g.gauge("workbench_engine_busy_ratio",
                "Engine busy time / wall time since the model was loaded.", kVersion);
    for (const VersionGauges& v : versions) {
        const std::vector<std::string> l = {v.model_version};
        running.set(l, v.running);
        queued.set(l, v.queued);
        used.set(l, v.kv_blocks_used);
        free_blocks.set(l, v.kv_blocks_free);
        cached.set(l, v.kv_blocks_cached);
        hit.set(l, v.prefix_cache_hit_rate);
        memory.set({v.model_version, v.memory_on_device ? "device" : "host"}, v.memory_bytes);
        busy.set(l, v.busy_share);
    }
    return out + g.render();
}

VersionFigures ServerMetrics::figures(const std::string& model_version) const {
    VersionFigures f;
    f.requests = requests_.sum_matching({model_version});
    f.requests_ok = requests_.sum_matching({model_version, "", "200"});
    f.generated_tokens = generated_tokens_.sum_matching({model_version});
    f.prompt_tokens = prompt_tokens_.sum_matching({model_version});
    const std::vector<std::string> v = {model_version};
    f.ttft_p50_ms = 1000.0 * ttft_.quantile(v, 0.50);
    f.ttft_p95_ms = 1000.0 * ttft_.quantile(v, 0.95);
    f.ttft_p99_ms = 1000.0 * ttft_.quantile(v, 0.99);
    f.itl_p50_ms = 1000.0 * itl_.quantile(v, 0.50);
    f.itl_p95_ms = 1000.0 * itl_.quantile(v, 0.95);
    f.itl_p99_ms = 1000.0 * itl_.quantile(v, 0.99);
    f.e2e_p50_ms = 1000.0 * e2e_.quantile(v, 0.50);
    f.e2e_p95_ms = 1000.0 * e2e_.quantile(v, 0.95);
    f.e2e_p99_ms = 1000.0 * e2e_.quantile(v, 0.99);
    f.queue_wait_p50_ms = 1000.0 * queue_wait_.quantile(v, 0.50);
    f.queue_wait_p99_ms = 1000.0 * queue_wait_.quantile(v, 0.99);
    return f;
}

}  // namespace wb::server
