#pragma once
// A rate sweep (GuideLLM's "sweep", vLLM's rate series): a synchronous step
// (one request at a time) gives the synchronous rate, a throughput step
// (many in flight) the maximum rate, then N open-loop steps at rates evenly
// between them. The highest rate whose step meets the SLOs is called out.

#include <functional>
#include <string>
#include <vector>

#include "load/driver.h"
#include "load/step_stats.h"

namespace wb::load {

/// One step of a sweep (or the single step of a plain run): its label and figures.
struct SweepStep {
    std::string label;  ///< "synchronous", "throughput", "rate 3.50"
    StepStats stats;
};

/// Every step of a sweep, in the order run, and the one called out.
struct SweepResult {
    std::vector<SweepStep> steps;
    /// Index into steps of the highest achieved rate meeting the SLOs
    /// (requests/s), or -1 when no step does (or no SLO was given).
    int best = -1;
    /// base.cancel stopped the sweep: steps holds those run (the last one
    /// possibly cut short).
    bool cancelled = false;
};

/// Called before each step (index, label) so a front end can show progress.
using OnStep = std::function<void(size_t index, const std::string& label)>;
/// Called after each step with its figures, so a front end can show them
/// as they come.
using OnStepDone = std::function<void(size_t index, const SweepStep& step)>;

/// The N rates of a sweep between `sync_rate` and `max_rate` (requests/s):
/// sync + k (max - sync) / (n + 1) for k = 1..n (both ends excluded, they
/// were measured). Throws std::invalid_argument for n < 1 or rates that
/// are not finite and > 0.
std::vector<double> sweep_rates(double sync_rate, double max_rate, int n);

/// Runs the sweep: `base` gives the arrival process, request count,
/// warm-up and seed of every step; `throughput_concurrency` the
/// throughput step's in-flight count. Throws as run_step(), and
/// std::runtime_error when the synchronous or throughput step has no
/// successful request (there is no rate to sweep). When base.cancel is
/// set, it returns after the step that saw it (cancelled = true).
/// `rates` (requests/s, each finite and > 0), when not empty, are the rate
/// steps run instead of the n between the measured rates: a comparison
/// runs its second target at the first one's rates, so both curves share
/// their x values.
SweepResult run_sweep(const Target& target, const StepPlan& base, int n, int throughput_concurrency,
                      const Slo& slo, const MakeRequest& make, const OnResult& on_result,
                      const TokenCounter& count, const OnStep& on_step,
                      const OnStepDone& on_step_done = {}, const std::vector<double>& rates = {});

/// The offered rates of the open-loop steps of `steps`, in order (what a
/// comparison passes as run_sweep's `rates`).
std::vector<double> offered_rates(const std::vector<SweepStep>& steps);

/// Index of the step with the highest achieved request rate among those
/// meeting `slo` (-1 when none does or `slo` is empty). Rate of a closed
/// step: its requests/s.
int best_step(const std::vector<SweepStep>& steps, const Slo& slo);

}  // namespace wb::load
