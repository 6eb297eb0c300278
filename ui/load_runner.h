#pragma once
// Runs one load test (app/load: a single step or a rate sweep) on a worker
// thread for the Load tab and reports its progress as signals (queued to
// the GUI thread): a step started, a request ended, a step's figures are
// ready, the test ended. Every request goes to the run log under one run
// of kind "load_test" when a run-log path is given.
//
// A target that refuses connections fails fast: after the first three
// requests of a test were all refused, the test stops with that reason
// instead of spending a whole schedule on requests that cannot succeed.

#include <QObject>
#include <QString>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cost/price.h"
#include "load/report.h"
#include "load/target_run.h"
#include "load/telemetry.h"

namespace wb::ui {

/// What one load test runs (the Load tab's fields, checked).
struct LoadJob {
    load::Target target;  ///< base URL, model ("" = the first of /v1/models), key, timeouts
    std::string api = "chat";
    load::StepPlan plan;               ///< arrival, rate or concurrency, requests, duration, seed
    int sweep = 0;                     ///< rate steps of a sweep; 0 = the plan as one step
    int sweep_concurrency = 64;        ///< in flight in the sweep's throughput step
    load::Slo slo;                     ///< limits (ms)
    std::vector<std::string> prompts;  ///< sent in turn; must not be empty
    int max_tokens = 16;               ///< max_tokens of each request
    std::string db_path;               ///< the run log; "" = not logged
    std::optional<cost::Price> price;  ///< the target's price (report().price), none = no cost
    /// Compare under load: the same test on this second target after the
    /// first (a sweep at the first one's rates); its model "" = the first
    /// of its /v1/models. Its steps follow the first's in the signals,
    /// labelled "B: ...".
    std::optional<load::Target> compare_target;
};

/// Runs LoadJobs one at a time on its own thread (see the top of the file).
class LoadRunner : public QObject {
    Q_OBJECT
  public:
    explicit LoadRunner(QObject* parent = nullptr);
    /// stopAndWait().
    ~LoadRunner() override;

    /// Starts `job` on the worker; false while a test runs (nothing started).
    bool start(LoadJob job);
    /// Asks the test to stop: no further request is sent; requests in
    /// flight end (bounded by the target's timeout), then finished().
    void stop();
    /// stop(), then waits for the worker (the window's close).
    void stopAndWait();
    /// A test runs (until finished() was emitted).
    bool running() const { return running_.load(); }

    /// The steps whose figures are ready, in order (copies; thread-safe).
    std::vector<load::SweepStep> steps() const;
    /// Error reasons per step (same order as steps, may be one longer).
    std::vector<load::ErrorReasons> reasons() const;
    /// The report of the last test (for JSON export): steps, best, SLOs,
    /// run, and the scheduler telemetry per step once the test ended.
    load::Report report() const;
    /// The target's scheduler passes fetched so far (load/telemetry.h; empty
    /// when it reports none), on the steady clock, and the steps' spans on
    /// the same clock (for the telemetry CSV). Thread-safe.
    std::vector<load::TelemetryRow> telemetry() const;
    /// The second target's report of a comparison (compare_target), once
    /// it began; nullopt otherwise.
    std::optional<load::Report> compareReport() const;
    std::vector<load::StepSpan> spans() const;

  signals:
    /// Step `index` began; `total` requests expected in it (0: unknown,
    /// the step ends by duration).
    void stepStarted(int index, const QString& label, qint64 total);
    /// A request of step `index` ended (warm-up included).
    void requestDone(int index, bool ok);
    /// Step `index`'s figures are ready (steps()).
    void stepDone(int index);
    /// The test ended: `error` is "" when it ran (or was stopped), else why
    /// it could not (connection refused, every request failed, bad URL, the
    /// run log could not be opened), as the load core said it.
    void finished(const QString& error, bool stopped);

  private:
    void work(LoadJob job);
    /// One target's test; `second`: the comparison's second target (its
    /// report is compare_, its steps' signal indexes follow the first's).
    void runTarget(const LoadJob& job, const load::Target& target, bool second,
                   const std::vector<double>& rates);

    std::thread thread_;
    std::atomic<bool> running_{false};
    std::atomic<bool> cancel_{false};
    mutable std::mutex mu_;
    load::Report report_;
    std::optional<load::Report> compare_;
    std::vector<load::StepSpan> spans_;
    // The running test's poller (null between tests) and the rows of the
    // last one.
    const load::TelemetryPoller* poller_ = nullptr;
    std::vector<load::TelemetryRow> rows_;
    std::string fatal_;  ///< why the test was stopped early (refused connections)
};

}  // namespace wb::ui
