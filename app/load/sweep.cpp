#include "load/sweep.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace wb::load {

std::vector<double> sweep_rates(double sync_rate, double max_rate, int n) {
    if (n < 1) throw std::invalid_argument("a sweep needs at least 1 rate step");
    if (!(std::isfinite(sync_rate) && sync_rate > 0 && std::isfinite(max_rate) && max_rate > 0)) {
        throw std::invalid_argument("sweep rates must be finite and > 0 requests/s");
    }
    std::vector<double> r;
    for (int k = 1; k <= n; ++k) r.push_back(sync_rate + k * (max_rate - sync_rate) / (n + 1));
    return r;
}

int best_step(const std::vector<SweepStep>& steps, const Slo& slo) {
    if (!slo.any()) return -1;
    int best = -1;
    double best_rate = -1;
    for (size_t i = 0; i < steps.size(); ++i) {
        const StepStats& s = steps[i].stats;
        if (!s.meets_slo) continue;
        const double rate = s.request_throughput;
        if (rate > best_rate) {
            best_rate = rate;
            best = static_cast<int>(i);
        }
    }
    return best;
}

std::vector<double> offered_rates(const std::vector<SweepStep>& steps) {
    std::vector<double> r;
    for (const SweepStep& s : steps) {
        if (s.stats.offered_rate) r.push_back(*s.stats.offered_rate);
    }
    return r;
}

SweepResult run_sweep(const Target& target, const StepPlan& base, int n, int throughput_concurrency,
                      const Slo& slo, const MakeRequest& make, const OnResult& on_result,
                      const TokenCounter& count, const OnStep& on_step,
                      const OnStepDone& on_step_done, const std::vector<double>& rates) {
    for (const double r : rates) {
        if (!(std::isfinite(r) && r > 0))
            throw std::invalid_argument("sweep rates must be finite and > 0 requests/s");
    }
    SweepResult out;
    const auto step = [&](const std::string& label, StepPlan plan) {
        if (on_step) on_step(out.steps.size(), label);
        // Warm-up only before the first step: the server is warm after it.
        if (!out.steps.empty()) plan.warmup = 0;
        out.steps.push_back(
            {label, step_stats(run_step(target, plan, make, on_result, count), slo)});
        const StepStats& s = out.steps.back().stats;
        if (plan.concurrency) out.steps.back().stats.concurrency = plan.concurrency;
        if (!plan.concurrency) out.steps.back().stats.offered_rate = plan.rate;
        if (on_step_done) on_step_done(out.steps.size() - 1, out.steps.back());
        return s.request_throughput;
    };
    const auto stopped = [&] {
        out.cancelled = base.cancel && base.cancel->load();
        if (out.cancelled) out.best = best_step(out.steps, slo);
        return out.cancelled;
    };
    StepPlan sync = base;
    sync.concurrency = 1;
    const double sync_rate = step("synchronous", sync);
    if (stopped()) return out;
    StepPlan thr = base;
    thr.concurrency = throughput_concurrency;
    const double max_rate = step("throughput", thr);
    if (stopped()) return out;
    if (!(sync_rate > 0) || !(max_rate > 0)) {
        throw std::runtime_error(
            "the sweep's synchronous or throughput step had no successful request; see the "
            "errors above");
    }
    for (const double r : rates.empty() ? sweep_rates(sync_rate, max_rate, n) : rates) {
        StepPlan p = base;
        p.concurrency.reset();
        p.rate = r;
        char label[48];
        std::snprintf(label, sizeof label, "rate %.2f", r);
        step(label, p);
        if (stopped()) return out;
    }
    out.best = best_step(out.steps, slo);
    return out;
}

}  // namespace wb::load
