#include "load/target_run.h"

#include <limits>
#include <memory>
#include <mutex>

#include "load/load_log.h"

namespace wb::load {

TargetOutcome run_target(const TargetPlan& p, const TargetHooks& hooks) {
    TargetOutcome out;
    out.reasons.resize(1);
    std::unique_ptr<LoadLog> log;
    if (!p.db_path.empty()) {
        nlohmann::json settings = load_run_settings(p.target, p.api, p.plan, p.max_tokens, p.sweep,
                                                    p.slo, p.compare_target);
        settings.update(p.extra_settings);
        log = std::make_unique<LoadLog>(p.db_path, p.target.base_url, p.target.model, p.local_model,
                                        settings);
        out.run_id = log->run_id();
        out.db = log->path();
    }

    // The step now running, shared with the request threads.
    std::mutex mu;
    size_t step_index = 0;
    std::string step_label = "single";
    const auto make = [&](size_t i, bool warm) {
        RequestSpec s;
        s.prompt = p.prompt(i, warm);
        s.max_tokens = p.max_tokens;
        std::lock_guard lock(mu);
        s.user = request_user(log ? log->run_id() : 0, step_index, warm, i);
        return s;
    };
    const auto on_result = [&](size_t, bool warm, const RequestSpec& s, const RequestResult& r) {
        std::string label;
        size_t index = 0;
        {
            std::lock_guard lock(mu);
            label = step_label;
            index = step_index;
            if (!r.ok) out.reasons[index][r.error]++;
        }
        // Queued for the log's writer thread; a failed write is counted.
        if (log) {
            log->log(s, r,
                     {{"step", label},
                      {"warmup", warm},
                      {"target", p.target.base_url},
                      {"model", p.target.model}});
        }
        if (hooks.result) hooks.result(index, warm, s, r);
    };
    const auto begin = [&](size_t index, const std::string& label, const StepPlan& plan) {
        {
            std::lock_guard lock(mu);
            step_index = index;
            step_label = label;
            if (out.reasons.size() <= index) out.reasons.resize(index + 1);
            out.spans.push_back({label, steady_now_ms(), 0});
        }
        if (hooks.step_started) hooks.step_started(index, label, plan);
    };
    const auto end = [&](size_t index, const SweepStep& step) {
        {
            std::lock_guard lock(mu);
            out.spans.back().end_ms = steady_now_ms();
        }
        if (hooks.step_done) hooks.step_done(index, step);
    };

    // Scheduler telemetry, where the target reports it (our server does).
    TelemetryPoller telemetry(p.target);
    const bool with_telemetry = telemetry.start();
    out.telemetry_unavailable = telemetry.unavailable();
    if (hooks.telemetry && with_telemetry) hooks.telemetry(&telemetry);
    // Whatever ends the test (a throw included), the front end lets go of
    // the poller before it goes.
    struct Release {
        const TargetHooks& h;
        bool on;
        ~Release() {
            if (on && h.telemetry) h.telemetry(nullptr);
        }
    } release{hooks, with_telemetry};

    if (p.sweep > 0) {
        // The sweep's own plans: its synchronous and throughput steps are
        // closed loops, the rest open loops at its rates.
        const auto on_step = [&](size_t index, const std::string& label) {
            StepPlan sp = p.plan;
            if (index == 0) sp.concurrency = 1;
            if (index == 1) sp.concurrency = p.sweep_concurrency;
            if (index > 1) sp.concurrency.reset();
            begin(index, label, sp);
        };
        SweepResult res = run_sweep(p.target, p.plan, p.sweep, p.sweep_concurrency, p.slo, make,
                                    on_result, p.count, on_step, end, p.rates);
        out.steps = std::move(res.steps);
        out.best = res.best;
        out.cancelled = res.cancelled;
    } else {
        SweepStep st;
        st.label = p.plan.concurrency ? "concurrency" : to_string(p.plan.arrival);
        begin(0, st.label, p.plan);
        st.stats = step_stats(run_step(p.target, p.plan, make, on_result, p.count), p.slo);
        if (p.plan.concurrency) {
            st.stats.concurrency = p.plan.concurrency;
        } else {
            st.stats.offered_rate = p.plan.rate;
        }
        out.steps.push_back(st);
        end(0, st);
        out.best = best_step(out.steps, p.slo);
        out.cancelled = p.plan.cancel && p.plan.cancel->load();
    }
    if (log) {
        log->end();
        out.log_write_errors = log->write_errors();
        out.first_write_error = log->first_write_error();
    }
    if (hooks.telemetry && with_telemetry) hooks.telemetry(nullptr);
    release.on = false;
    telemetry.stop();
    out.passes = telemetry.rows();
    if (with_telemetry) {
        // A step's passes: from its start to the next step's (to the end of
        // the test for the last), so no pass falls between two steps when
        // the engine's clock is placed on ours a fraction of a ms off.
        for (size_t k = 0; k < out.spans.size(); ++k) {
            const double until = k + 1 < out.spans.size() ? out.spans[k + 1].begin_ms
                                                          : std::numeric_limits<double>::infinity();
            out.scheduler.push_back(scheduler_stats(out.passes, out.spans[k].begin_ms, until));
        }
    }
    return out;
}

}  // namespace wb::load
