#pragma once
// The figures of one load-test step (docs/load.md defines each; names follow
// vLLM's `bench serve`): throughput, latency percentiles and goodput under
// service-level objectives (SLOs).

#include <optional>
#include <vector>

#include "load/client.h"
#include "metrics/percentile.h"

namespace wb::load {

/// Latency limits (ms); nullopt = no limit on that figure. A step meets the
/// SLOs when its p99 of each limited figure is <= the limit; a request
/// meets them when its own TTFT, its own p99 ITL and its e2e are.
struct Slo {
    std::optional<double> ttft_p99_ms;
    std::optional<double> itl_p99_ms;
    std::optional<double> e2e_p99_ms;
    /// True when at least one limit is set.
    bool any() const { return ttft_p99_ms || itl_p99_ms || e2e_p99_ms; }
};

/// True when request `r` succeeded and its TTFT, p99 of its own ITLs
/// (none: 0) and e2e are within `slo`.
bool meets_slo(const RequestResult& r, const Slo& slo);

/// One step's figures. Rates per second over duration_s; latencies in ms.
struct StepStats {
    std::optional<double> offered_rate;  ///< requests/s asked for (open loop), nullopt for closed
    std::optional<int> concurrency;      ///< closed loop: requests kept in flight
    size_t requests = 0;                 ///< sent (warm-up excluded)
    size_t completed = 0;                ///< answered successfully
    size_t errors = 0;                   ///< failed, timeouts included
    size_t timeouts = 0;                 ///< failed by a read or request timeout
    double duration_s = 0;               ///< first send -> last response end
    double achieved_rate = 0;       ///< (requests - 1) / (last send - first send), actual sends
    double request_throughput = 0;  ///< "requests/s": completed / duration_s
    double output_throughput = 0;   ///< "output tokens/s": output tokens / duration_s
    double input_throughput = 0;    ///< "input tokens/s over the run"
    double goodput = 0;             ///< requests meeting every SLO / duration_s
    bool output_tokens_approximate = false;  ///< some counts were content chunks
    metrics::Summary ttft, itl, tpot, e2e;
    /// Queue wait the target reported (RequestResult::server_queue_ms) over
    /// the successful requests that carry it; count 0 when the target
    /// reports none (OpenAI, vLLM, llama-server).
    metrics::Summary queue_wait;
    bool meets_slo = true;  ///< the step's p99s are within every SLO given
};

/// Computes the figures of `results` (one step's requests, warm-up
/// excluded). Percentiles: wb::metrics::summarize (numpy "linear"); ITL
/// pools every gap of every successful request (as vLLM does).
StepStats step_stats(const std::vector<RequestResult>& results, const Slo& slo);

}  // namespace wb::load
