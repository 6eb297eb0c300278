#include "load_runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

#include "load/driver.h"
#include "load/load_log.h"

namespace wb::ui {

namespace {

// Requests refused in a row, before any success, that end a test: the
// target is not listening, and every further request would fail the same way.
constexpr size_t kRefusedToStop = 3;

bool is_refused(const std::string& error) {
    return error.rfind("could not connect", 0) == 0;
}

// Requests a step is expected to send (warm-up included in the first
// step), for its progress bar; 0 when the step ends by time.
qint64 expected(const load::StepPlan& plan, bool first) {
    const qint64 warm = first ? static_cast<qint64>(plan.warmup) : 0;
    if (!plan.duration_s) return static_cast<qint64>(plan.requests) + warm;
    if (plan.concurrency) return 0;  // a closed loop ends by time
    const double due = std::floor(*plan.duration_s * plan.rate) + 1;
    return static_cast<qint64>(std::min<double>(static_cast<double>(plan.requests), due)) + warm;
}

}  // namespace

LoadRunner::LoadRunner(QObject* parent) : QObject(parent) {}

LoadRunner::~LoadRunner() {
    stopAndWait();
}

bool LoadRunner::start(LoadJob job) {
    if (running_.load()) return false;
    if (thread_.joinable()) thread_.join();
    cancel_ = false;
    running_ = true;
    {
        std::lock_guard lock(mu_);
        report_ = {};
        compare_.reset();
        fatal_.clear();
        spans_.clear();
        rows_.clear();
    }
    thread_ = std::thread([this, j = std::move(job)]() mutable { work(std::move(j)); });
    return true;
}

void LoadRunner::stop() {
    cancel_ = true;
}

void LoadRunner::stopAndWait() {
    stop();
    if (thread_.joinable()) thread_.join();
}

std::vector<load::SweepStep> LoadRunner::steps() const {
    std::lock_guard lock(mu_);
    return report_.steps;
}

std::vector<load::ErrorReasons> LoadRunner::reasons() const {
    std::lock_guard lock(mu_);
    return report_.reasons;
}

std::vector<load::TelemetryRow> LoadRunner::telemetry() const {
    std::lock_guard lock(mu_);
    return poller_ ? poller_->rows() : rows_;
}

std::vector<load::StepSpan> LoadRunner::spans() const {
    std::lock_guard lock(mu_);
    return spans_;
}

load::Report LoadRunner::report() const {
    std::lock_guard lock(mu_);
    return report_;
}

std::optional<load::Report> LoadRunner::compareReport() const {
    std::lock_guard lock(mu_);
    return compare_;
}

void LoadRunner::runTarget(const LoadJob& job, const load::Target& target, bool second,
                           const std::vector<double>& rates) {
    // The first target's report and telemetry feed the live charts; the
    // second's go to compare_.
    size_t offset = 0;  // the second target's steps follow the first's in the signals
    {
        std::lock_guard lock(mu_);
        load::Report& rep = second ? *compare_ : report_;
        rep.target = target.base_url;
        rep.model = target.model;
        rep.api = job.api;
        rep.slo = job.slo;
        rep.price = job.price;
        rep.reasons.resize(1);
        if (second) offset = report_.steps.size();
    }
    const std::string prefix = second ? "B: " : "";
    std::unique_ptr<load::LoadLog> log;
    if (!job.db_path.empty()) {
        // The run's settings as the CLI writes them; never the key.
        nlohmann::json settings = {{"target", target.base_url},
                                   {"model", target.model},
                                   {"api", job.api},
                                   {"arrival", load::to_string(job.plan.arrival)},
                                   {"rate", job.plan.rate},
                                   {"burstiness", job.plan.burstiness},
                                   {"requests", job.plan.requests},
                                   {"warmup", job.plan.warmup},
                                   {"max_tokens", job.max_tokens},
                                   {"sweep", job.sweep},
                                   {"seed", job.plan.seed},
                                   {"front_end", "gui"}};
        if (job.plan.concurrency) settings["concurrency"] = *job.plan.concurrency;
        if (job.plan.duration_s) settings["duration_s"] = *job.plan.duration_s;
        if (job.slo.ttft_p99_ms) settings["slo_ttft_p99_ms"] = *job.slo.ttft_p99_ms;
        if (job.slo.itl_p99_ms) settings["slo_itl_p99_ms"] = *job.slo.itl_p99_ms;
        if (job.slo.e2e_p99_ms) settings["slo_e2e_p99_ms"] = *job.slo.e2e_p99_ms;
        if (job.compare_target) settings["compare_target"] = job.compare_target->base_url;
        log = std::make_unique<load::LoadLog>(job.db_path, target.base_url, target.model, "",
                                              settings);
        std::lock_guard lock(mu_);
        load::Report& rep = second ? *compare_ : report_;
        rep.run_id = log->run_id();
        rep.db = log->path();
    }

    // Scheduler telemetry, where the target reports it (our server).
    load::TelemetryPoller poller(target);
    const bool with_telemetry = poller.start();
    {
        std::lock_guard lock(mu_);
        if (!second) poller_ = with_telemetry ? &poller : nullptr;
        (second ? *compare_ : report_).telemetry_unavailable = poller.unavailable();
    }
    // Whatever ends the test (a throw included), the poller is gone with
    // this scope: the GUI thread must not reach it after.
    struct Detach {
        LoadRunner* r;
        ~Detach() {
            std::lock_guard lock(r->mu_);
            r->poller_ = nullptr;
        }
    } detach{this};
    std::vector<load::StepSpan> spans;

    // Shared with the request threads: the step now running and the
    // refused-connection count.
    size_t step_index = 0;
    std::string step_label = "single";
    size_t refused = 0;
    bool any_ok = false;
    const auto make = [&](size_t i, bool warm) {
        load::RequestSpec s;
        s.prompt = job.prompts[i % job.prompts.size()];
        s.max_tokens = job.max_tokens;
        std::lock_guard lock(mu_);
        s.user = load::request_user(log ? log->run_id() : 0, step_index, warm, i);
        return s;
    };
    const auto on_result = [&](size_t, bool warm, const load::RequestSpec& s,
                               const load::RequestResult& r) {
        std::string label;
        size_t index = 0;
        {
            std::lock_guard lock(mu_);
            label = step_label;
            index = step_index;
            if (r.ok) {
                any_ok = true;
            } else {
                load::Report& rep = second ? *compare_ : report_;
                if (rep.reasons.size() <= index) rep.reasons.resize(index + 1);
                rep.reasons[index][r.error]++;
                if (!any_ok && is_refused(r.error) && ++refused >= kRefusedToStop &&
                    fatal_.empty()) {
                    fatal_ = r.error;
                    cancel_ = true;
                }
            }
        }
        if (log) {
            log->log(s, r,
                     {{"step", label},
                      {"warmup", warm},
                      {"target", target.base_url},
                      {"model", target.model}});
        }
        emit requestDone(static_cast<int>(offset + index), r.ok);
    };
    const auto begin_step = [&](size_t index, const std::string& label,
                                const load::StepPlan& plan) {
        {
            std::lock_guard lock(mu_);
            step_index = index;
            step_label = label;
            load::Report& rep = second ? *compare_ : report_;
            if (rep.reasons.size() <= index) rep.reasons.resize(index + 1);
            spans.push_back({label, load::steady_now_ms(), 0});
            if (!second) spans_ = spans;
        }
        emit stepStarted(static_cast<int>(offset + index), QString::fromStdString(prefix + label),
                         expected(plan, index == 0));
    };
    const auto end_step = [&](size_t index, const load::SweepStep& step) {
        {
            std::lock_guard lock(mu_);
            if (!spans.empty()) spans.back().end_ms = load::steady_now_ms();
            if (!second) spans_ = spans;
            load::Report& rep = second ? *compare_ : report_;
            rep.steps.push_back(step);
            rep.best = load::best_step(rep.steps, job.slo);
        }
        emit stepDone(static_cast<int>(offset + index));
    };

    if (job.sweep > 0) {
        // The sweep's own plans: its synchronous and throughput steps
        // are closed loops, the rest open loops at its rates.
        const auto on_step = [&](size_t index, const std::string& label) {
            load::StepPlan p = job.plan;
            if (index == 0) p.concurrency = 1;
            if (index == 1) p.concurrency = job.sweep_concurrency;
            if (index > 1) p.concurrency.reset();
            begin_step(index, label, p);
        };
        load::SweepResult res =
            load::run_sweep(target, job.plan, job.sweep, job.sweep_concurrency, job.slo, make,
                            on_result, {}, on_step, end_step, rates);
        std::lock_guard lock(mu_);
        (second ? *compare_ : report_).best = res.best;
    } else {
        load::SweepStep st;
        st.label = job.plan.concurrency ? "concurrency" : load::to_string(job.plan.arrival);
        {
            std::lock_guard lock(mu_);
            step_label = st.label;
        }
        begin_step(0, st.label, job.plan);
        st.stats = load::step_stats(load::run_step(target, job.plan, make, on_result, {}), job.slo);
        if (job.plan.concurrency) {
            st.stats.concurrency = job.plan.concurrency;
        } else {
            st.stats.offered_rate = job.plan.rate;
        }
        end_step(0, st);
    }
    if (log) log->end();
    poller.stop();
    std::lock_guard lock(mu_);
    if (!second) {
        poller_ = nullptr;
        rows_ = poller.rows();
    }
    load::Report& rep = second ? *compare_ : report_;
    if (with_telemetry) {
        const std::vector<load::TelemetryRow> rows = poller.rows();
        for (const load::StepSpan& sp : spans)
            rep.scheduler.push_back(load::scheduler_stats(rows, sp.begin_ms, sp.end_ms));
    }
}

void LoadRunner::work(LoadJob job) {
    QString error;
    try {
        job.plan.cancel = &cancel_;
        if (job.target.model.empty()) job.target.model = load::first_model_id(job.target);
        if (job.compare_target && job.compare_target->model.empty())
            job.compare_target->model = load::first_model_id(*job.compare_target);
        runTarget(job, job.target, false, {});
        // Compare under load: the same test on the second target, a sweep
        // at the first one's rates (both curves on one x axis).
        bool go_on = false;
        {
            std::lock_guard lock(mu_);
            go_on = job.compare_target && !cancel_.load() && fatal_.empty();
            if (go_on) compare_ = load::Report{};
        }
        if (go_on) {
            std::vector<double> rates;
            if (job.sweep > 0) rates = load::offered_rates(steps());
            runTarget(job, *job.compare_target, true, rates);
        }
    } catch (const std::exception& e) {
        error = QString::fromUtf8(e.what());
        // The sweep's "no successful request" names no reason: add the
        // commonest one of the step that had none.
        std::lock_guard lock(mu_);
        const load::Report& rep = compare_ ? *compare_ : report_;
        if (!rep.reasons.empty()) {
            const load::ErrorReasons& r = rep.reasons.back();
            std::string top;
            size_t n = 0;
            for (const auto& [why, count] : r) {
                if (count > n) {
                    n = count;
                    top = why;
                }
            }
            if (!top.empty()) error = QString::fromStdString(top);
        }
        if (compare_)
            error =
                tr("compare target %1: %2").arg(QString::fromStdString(compare_->target), error);
    }
    QString fatal;
    {
        std::lock_guard lock(mu_);
        fatal = QString::fromStdString(fatal_);
    }
    if (!fatal.isEmpty()) error = fatal;
    const bool stopped = cancel_.load() && fatal.isEmpty();
    running_ = false;
    emit finished(error, stopped);
}

}  // namespace wb::ui
