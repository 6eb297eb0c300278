#pragma once
// The exports of a load test: JSON (every figure of every step, the best
// step, the SLOs, the run id) and CSV (one row per step). `workbench-cli
// load --json / --csv` and the GUI's Load tab write the same text through
// these functions. Keys and columns are listed in docs/load.md.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cost/price.h"
#include "load/step_stats.h"
#include "load/sweep.h"
#include "load/telemetry.h"

namespace wb::load {

/// Error reasons of one step and how many requests failed with each.
using ErrorReasons = std::map<std::string, size_t>;

/// {"count","mean","p50","p90","p95","p99","max"} of `s` (ms); a figure
/// that is not finite (no sample) is null.
nlohmann::json summary_json(const metrics::Summary& s);

/// One step as JSON: label, offered_rate (null for a closed loop),
/// concurrency, counts, rates, goodput, meets_slo, the four latency
/// summaries, "queue_wait_ms" (the target's own report; count 0 and null
/// figures when it sends none) and `reasons` as "error_reasons".
nlohmann::json step_json(const SweepStep& step, const ErrorReasons& reasons);

/// What a step cost at `price`: its completed requests, their input and
/// output tokens (throughput x duration) and, per hour, the step's wall
/// time (a remote endpoint is paid while it is up, busy or not).
cost::Figures step_cost(const StepStats& s, const cost::Price& price);

/// What a whole load test reports (the `--json` document).
struct Report {
    std::string target;  ///< base URL (never a key)
    std::string model;
    std::string api;  ///< "chat" | "completions"
    std::vector<SweepStep> steps;
    std::vector<ErrorReasons> reasons;  ///< per step; may be shorter (none)
    int best = -1;                      ///< index into steps, -1 = none
    Slo slo;
    std::optional<int64_t> run_id;     ///< the load_test run, nullopt when not logged
    std::optional<std::string> db;     ///< the run log's path
    std::optional<cost::Price> price;  ///< the target's price, when one was given
    /// Scheduler telemetry per step (same order as steps; empty when the
    /// target reports none).
    std::vector<SchedulerStats> scheduler;
    /// Why there is no telemetry ("" when there is).
    std::string telemetry_unavailable;
};

/// {"passes","batch_mean","batch_max","prefill_tokens","decode_tokens",
/// "kv_blocks_used_max","kv_blocks_total","preemptions","busy_ms"} (a NaN
/// mean is null).
nlohmann::json scheduler_json(const SchedulerStats& s);

/// The JSON document of `r`: target, model, api, steps (step_json, with
/// "cost" (cost::to_json of step_cost) when `r.price` is set and
/// "scheduler" (scheduler_json) when telemetry came), best_step (null for
/// none), slo, run_id, db, price (cost::to_json or null), telemetry
/// ({"available", "reason"}).
nlohmann::json report_json(const Report& r);

/// The CSV text of `steps`: a header line, then one line per step (label,
/// rates, counts, goodput, meets_slo as 1/0, p50/p90/p95/p99 of TTFT, ITL,
/// TPOT, e2e and the reported queue wait in ms; an empty field for a
/// figure without samples).
/// With `price`, four more columns: cost_total, cost_per_request,
/// cost_per_1k_requests, cost_per_m_output_tokens (step_cost, 8
/// significant digits). Numbers with 6 decimals; labels contain no comma
/// or quote.
std::string steps_csv(const std::vector<SweepStep>& steps,
                      const std::optional<cost::Price>& price = std::nullopt);

/// The steps of a comparison under load as one list for steps_csv: the
/// first target's labelled "A: ...", then the second's "B: ...".
std::vector<SweepStep> compared_steps(const std::vector<SweepStep>& a,
                                      const std::vector<SweepStep>& b);

/// Writes steps_csv(steps, price) to `path`. Throws std::runtime_error
/// naming the path when it cannot be written.
void write_csv(const std::string& path, const std::vector<SweepStep>& steps,
               const std::optional<cost::Price>& price = std::nullopt);

}  // namespace wb::load
