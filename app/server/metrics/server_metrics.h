#pragma once
// ServerMetrics: what the server exports at GET /metrics, in the
// Prometheus text format 0.0.4 (prometheus.h). Histograms of TTFT,
// inter-token latency, end-to-end latency and queue wait (seconds, the
// Prometheus convention), counters of requests and tokens, and the gauges
// of each loaded model version (VersionGauges); every series has the label
// model_version. docs/metrics.md ("Prometheus metrics") lists every series.
//
// The server calls observe() from its on_finished hook (the session's
// delivery thread), observe_refused() for requests answered before they
// reached a session (429, 4xx), and render() from its metrics_text hook
// (HTTP worker threads); all three may run at once. Qt-free.

#include <string>
#include <vector>

#include "core/finished_request.h"
#include "server/metrics/prometheus.h"
#include "server/metrics/version_gauges.h"

namespace wb::server {

/// Histogram bucket upper bounds in seconds, chosen for LLM serving (why:
/// server_metrics.cpp).
struct LatencyBuckets {
    static const std::vector<double>& ttft();         ///< time to first token, 5 ms .. 60 s
    static const std::vector<double>& inter_token();  ///< gap between tokens, 1 ms .. 2.5 s
    static const std::vector<double>& e2e();          ///< whole request, 50 ms .. 300 s
    static const std::vector<double>& queue_wait();   ///< submit to admission, as TTFT
};

/// One model version's counters and latency quantiles so far, from the
/// same series GET /metrics exports (for in-process charts). Quantiles are
/// histogram_quantile() estimates from the buckets, in ms; NaN before any
/// observation.
struct VersionFigures {
    double requests = 0;          ///< workbench_requests_total, every route/status/reason
    double requests_ok = 0;       ///< of those, answered with HTTP 200
    double generated_tokens = 0;  ///< workbench_generation_tokens_total
    double prompt_tokens = 0;     ///< workbench_prompt_tokens_total
    double ttft_p50_ms = 0, ttft_p95_ms = 0, ttft_p99_ms = 0;
    double itl_p50_ms = 0, itl_p95_ms = 0, itl_p99_ms = 0;
    double e2e_p50_ms = 0, e2e_p95_ms = 0, e2e_p99_ms = 0;
    double queue_wait_p50_ms = 0, queue_wait_p99_ms = 0;
};

class ServerMetrics {
  public:
    /// Registers every series (docs/metrics.md); nothing observed yet.
    ServerMetrics();

    /// Counts one request that went through a session and ended (any
    /// finish reason, refused by the session too), answered with
    /// `http_status` on `route` ("/v1/chat/completions"), run by
    /// `model_version`. Observes, in seconds: its queue wait when it was
    /// admitted, TTFT when it had a first token, every gap of
    /// times.itl_ms, its end-to-end latency when it was not refused; adds
    /// its prompt tokens (when admitted), cached prompt tokens and output
    /// tokens. Never throws but bad_alloc (NaN times are skipped).
    void observe(const core::FinishedRequest& f, int http_status, const std::string& route,
                 const std::string& model_version);
    /// Counts one request answered before it reached a session (a full
    /// queue's 429, a malformed body's 400): workbench_requests_total with
    /// finish_reason "rejected"; no latency, no tokens.
    void observe_refused(int http_status, const std::string& route,
                         const std::string& model_version);
    /// The whole exposition: the counters and histograms so far, then the
    /// gauges of `versions` (one series per entry). Text format 0.0.4, each
    /// line ending in '\n' (Registry::kContentType).
    std::string render(const std::vector<VersionGauges>& versions) const;
    /// The counters and latency quantiles of `model_version` so far. Never
    /// throws but bad_alloc.
    VersionFigures figures(const std::string& model_version) const;

  private:
    Registry registry_;
    CounterFamily& requests_;
    CounterFamily& prompt_tokens_;
    CounterFamily& cached_tokens_;
    CounterFamily& generated_tokens_;
    HistogramFamily& ttft_;
    HistogramFamily& itl_;
    HistogramFamily& e2e_;
    HistogramFamily& queue_wait_;
};

}  // namespace wb::server
