#pragma once
// Per-request latency metrics, defined as vLLM's serving benchmark
// (benchmarks/benchmark_serving.py, vllm/benchmarks/serve.py) defines them.
// Every time point is in ms on one monotonic clock (the scheduler's
// steady_clock epoch); what matters is only differences between them.

#include <cstdint>
#include <vector>

namespace wb::metrics {

/// What the scheduler saw of one request: when it was submitted, admitted to
/// a slot, when each generated token was sampled, and when it finished.
/// Times in ms since a common epoch; NaN where the request never got there
/// (e.g. admitted_ms for a request that timed out in the queue).
struct RequestTimeline {
    double submitted_ms;           ///< submit() returned (request entered the queue)
    double admitted_ms;            ///< a slot took it (prefill starts); NaN if never
    std::vector<double> token_ms;  ///< [generated_tokens] time each output token was sampled
    double finished_ms;            ///< finished event (any reason)
    int32_t prompt_tokens = 0;     ///< tokens of the prompt (BOS included)
    int32_t generated_tokens = 0;  ///< output tokens (== token_ms.size())

    RequestTimeline();
};

/// Derived per-request metrics, all in ms. NaN where undefined.
struct RequestMetrics {
    /// admitted - submitted: time spent waiting for a free slot.
    double queue_wait_ms;
    /// Time to first token, from SUBMISSION (not admission), as vLLM:
    /// token_ms[0] - submitted. Includes queue wait and prefill.
    double ttft_ms;
    /// Inter-token latencies: token_ms[i] - token_ms[i-1], i = 1..n-1
    /// ([generated_tokens - 1] values; vLLM's `itls`).
    std::vector<double> itl_ms;
    /// Time per output token after the first, vLLM's TPOT:
    /// (e2e - ttft) / (generated_tokens - 1); NaN when fewer than 2 tokens.
    /// Note e2e runs to the finished event, so TPOT >= mean ITL.
    double tpot_ms;
    /// End-to-end latency: finished - submitted.
    double e2e_ms;
    int32_t prompt_tokens = 0;
    int32_t generated_tokens = 0;

    RequestMetrics();
};

/// Computes the metrics above from a timeline. Pure function.
RequestMetrics compute_request_metrics(const RequestTimeline& t);

}  // namespace wb::metrics
