#pragma once
// One target's whole load test, the same for `workbench-cli load` and the
// Load tab: a single step or a rate sweep (run_sweep), every request to the
// run log under one load_test run (LoadLog), the target's scheduler
// telemetry fetched meanwhile (TelemetryPoller) and summed per step. The
// front ends add only presentation, through the hooks.

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "load/driver.h"
#include "load/step_stats.h"
#include "load/sweep.h"
#include "load/telemetry.h"

namespace wb::load {

/// What one target is tested with.
struct TargetPlan {
    Target target;
    std::string api = "chat";  ///< "chat" | "completions" (the run's settings)
    StepPlan plan;             ///< arrival, rate or concurrency, requests, warm-up, seed, cancel
    int sweep = 0;             ///< rate steps of a sweep; 0 = the plan as one step
    int sweep_concurrency = 64;
    /// A sweep's rate steps instead of the n between its measured rates (a
    /// comparison's second target runs at the first one's); empty = its own.
    std::vector<double> rates;
    Slo slo;
    int max_tokens = 16;
    /// The prompt of request i (warm: a warm-up request); must not be empty.
    std::function<std::string(size_t i, bool warm)> prompt;
    TokenCounter count;          ///< counts output tokens without usage (may be empty)
    std::string db_path;         ///< the run log; "" = not logged
    std::string local_model;     ///< the served model's GGUF, for the run's model row ("" = none)
    std::string compare_target;  ///< the other target of a comparison ("" = none), in the settings
    nlohmann::json extra_settings = nlohmann::json::object();  ///< merged into the run's settings
};

/// How a front end follows the test (each may be empty). Called on the
/// test's thread (on_result: on a request's thread).
struct TargetHooks {
    /// Step `index` begins with `plan` (the sweep's closed or open loop).
    std::function<void(size_t index, const std::string& label, const StepPlan& plan)> step_started;
    /// A request of step `index` ended (warm-up included).
    std::function<void(size_t index, bool warm, const RequestSpec&, const RequestResult&)> result;
    /// Step `index`'s figures are ready.
    std::function<void(size_t index, const SweepStep& step)> step_done;
    /// The poller, while the test runs (null once it ended): live charts.
    std::function<void(const TelemetryPoller*)> telemetry;
};

/// What a target's test gave.
struct TargetOutcome {
    std::vector<SweepStep> steps;
    int best = -1;  ///< index into steps of the highest rate within the SLOs, -1 = none
    bool cancelled = false;
    std::vector<std::map<std::string, size_t>> reasons;  ///< per step: error -> count
    /// Per step (the passes from its start to the next step's); empty: no
    /// telemetry.
    std::vector<SchedulerStats> scheduler;
    std::string telemetry_unavailable;  ///< why there is none ("" = there is)
    std::vector<TelemetryRow> passes;   ///< the target's passes, steady clock
    std::vector<StepSpan> spans;        ///< each step's span, steady clock
    std::optional<int64_t> run_id;      ///< the load_test run when logged
    std::optional<std::string> db;
    size_t log_write_errors = 0;  ///< rows the run log could not take
    std::string first_write_error;
};

/// Runs the test. Throws as run_step()/run_sweep() (a bad plan, a sweep
/// without a successful request) and as LoadLog (a run log that cannot be
/// opened); what was logged before a throw stays logged.
TargetOutcome run_target(const TargetPlan& p, const TargetHooks& hooks = {});

}  // namespace wb::load
