#include "ui/load_runner.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <memory>

#include "cost/price.h"
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
    // second's go to compare_, its steps' signal indexes after the first's.
    size_t offset = 0;
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

    load::TargetPlan p;
    p.target = target;
    p.api = job.api;
    p.plan = job.plan;
    p.sweep = job.sweep;
    p.sweep_concurrency = job.sweep_concurrency;
    p.rates = rates;
    p.slo = job.slo;
    p.max_tokens = job.max_tokens;
    p.prompt = [&job](size_t i, bool) { return job.prompts[i % job.prompts.size()]; };
    p.db_path = job.db_path;
    if (job.compare_target) p.compare_target = job.compare_target->base_url;
    p.extra_settings = {{"front_end", "gui"}};
    if (job.price) p.extra_settings["price"] = cost::to_json(*job.price);

    // Refused connections before any success end the test (kRefusedToStop).
    size_t refused = 0;
    bool any_ok = false;
    load::TargetHooks hooks;
    hooks.step_started = [&](size_t index, const std::string& label, const load::StepPlan& plan) {
        emit stepStarted(static_cast<int>(offset + index), QString::fromStdString(prefix + label),
                         expected(plan, index == 0));
    };
    hooks.result = [&](size_t index, bool, const load::RequestSpec&, const load::RequestResult& r) {
        {
            std::lock_guard lock(mu_);
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
        emit requestDone(static_cast<int>(offset + index), r.ok);
    };
    hooks.step_done = [&](size_t index, const load::SweepStep& step) {
        {
            std::lock_guard lock(mu_);
            load::Report& rep = second ? *compare_ : report_;
            rep.steps.push_back(step);
            rep.best = load::best_step(rep.steps, job.slo);
        }
        emit stepDone(static_cast<int>(offset + index));
    };
    if (!second) {
        hooks.telemetry = [this](const load::TelemetryPoller* poller) {
            std::lock_guard lock(mu_);
            poller_ = poller;
        };
    }
    const load::TargetOutcome o = load::run_target(p, hooks);
    std::lock_guard lock(mu_);
    load::Report& rep = second ? *compare_ : report_;
    rep.best = o.best;
    rep.scheduler = o.scheduler;
    rep.telemetry_unavailable = o.telemetry_unavailable;
    rep.run_id = o.run_id;
    rep.db = o.db;
    if (!second) {
        rows_ = o.passes;
        spans_ = o.spans;
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
