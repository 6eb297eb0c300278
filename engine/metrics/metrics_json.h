#pragma once
// The serving metrics of a span as JSON, one definition for every surface
// that writes them (workbench-cli batch --summary-json, bench --concurrency
// --json, the Batch panel's Export JSON), so the same run exports the same
// object wherever it ran. Field meanings: metrics_store.h (vLLM benchmark
// definitions).

#include <nlohmann/json.hpp>

#include "metrics/metrics_store.h"

namespace wb::metrics {

/// A Summary as {"count", "mean", "p50", "p90", "p95", "p99", "max"}; NaN
/// (no samples) is written as null.
nlohmann::json summary_json(const Summary& s);

/// Every field of a span: wall_ms, the latency summaries in ms
/// (queue_wait_ms, ttft_ms, itl_ms, tpot_ms, e2e_ms), the token-count
/// summaries (prompt_tokens, output_tokens), request/step/token counts, the
/// wall-time ratios under vLLM's names (input_throughput and
/// output_throughput in tokens/s, request_throughput in requests/s;
/// docs/metrics.md), busy_fraction, and the prefix
/// cache: prefix_prompt_tokens, prefix_cached_tokens, prefix_hit_rate
/// (cached / prompt tokens, 0..1) and preemptions (NaN -> null).
nlohmann::json window_json(const WindowStats& w);

}  // namespace wb::metrics
