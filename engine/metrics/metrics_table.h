#pragma once
// The serving-metrics table of one span (a batch run): what `workbench-cli
// batch` prints and the app's Batch panel shows, exports and copies, so the
// two read the same for the same run.

#include <string>

#include "metrics/metrics_store.h"

namespace wb::metrics {

/// The table: one row per metric (queue wait, TTFT, ITL, TPOT, e2e in ms;
/// prompt and output tokens per request) with count, mean, p50, p90, p95,
/// p99, max ("-" where there is no sample), then a requests line and an
/// "over the run:" line with the wall-time ratios (input tokens/s, output
/// tokens/s, requests/s; docs/metrics.md). Ends with a newline.
std::string format_metrics_table(const WindowStats& w);

/// The same rows as CSV (RFC 4180, "." decimals, empty where no sample):
/// header "metric,count,mean,p50,p90,p95,p99,max", the seven metric rows,
/// then "name,value" rows for wall_s, requests_finished, requests_completed,
/// steps, prefill_tokens, decode_tokens, input_throughput,
/// output_throughput (tokens/s), request_throughput (requests/s) and
/// busy_fraction. Ends with a newline.
std::string metrics_table_csv(const WindowStats& w);

}  // namespace wb::metrics
