#pragma once
// One served model, as `workbench-cli serve` and the app's Server tab run
// it: the Server on a stable session (and a canary session with its
// rollout), the Prometheus metrics of each version, the run of kind
// "server" every request is logged under, and the run's events
// (run_events: server_start, server_stop, each canary decision). Both
// surfaces only parse their options and present this object's state.
//
// Threads: serve() blocks (the CLI's main thread, a worker in the app);
// stop(), snapshot(), canary() and decide_by_hand() may be called from any
// thread meanwhile. Qt-free.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/engine_session.h"
#include "core/response_log.h"
#include "rollout/rollout.h"
#include "runlog/run_log.h"
#include "server/canary.h"
#include "server/metrics/server_metrics.h"
#include "server/metrics/version_gauges.h"
#include "server/server.h"

namespace wb::server {

/// How a model is served: the surfaces' options.
struct ServeConfig {
    /// host, port, api_key, timeouts and limits. model_name, run_id,
    /// threads, default_max_tokens and max_tokens_cap are set by Serving.
    ServerOptions server;
    uint32_t parallel = 4;    ///< slots the sessions were opened with (>= 1)
    uint32_t max_queue = 64;  ///< requests that may wait for a slot (>= 0)
    bool no_text = false;     ///< log requests without prompt and answer text
    /// The sessions' draft model file (SessionOptions::draft_model), "" =
    /// none: its model version is logged with each request
    /// (server.speculative says whether requests use it).
    std::string draft_model;
    /// The canary's rollout policy; used when a canary session is given.
    rollout::Policy canary_policy;
    std::chrono::milliseconds canary_tick{200};  ///< how often the rollout is stepped
    /// Each rollout decision after it was logged (timer thread, or the
    /// thread of decide_by_hand); may be empty; must not throw.
    std::function<void(const rollout::Decision&)> on_decision;
};

/// One model version's figures now (the same ones GET /metrics exports).
/// A canary that is the same file as the stable version is labelled with
/// "+canary" after the stable label, so the two keep separate series.
struct VersionSnapshot {
    std::string version;  ///< the model_version label
    bool canary = false;  ///< the canary version (else the stable one)
    VersionFigures figures;
    VersionGauges gauges;
};

/// The run_events kind of a rollout decision: "promote", "rollback", else
/// "canary_step" (advance, hold, fail).
const char* event_kind_of(const rollout::Decision& d);

/// Writes `d` as a run_events row of run `run_id` at `t_ms` (UTC ms):
/// kind event_kind_of(d), details d.to_json(). Throws what
/// RunLog::log_event throws.
int64_t log_decision(runlog::RunLog& log, int64_t run_id, const rollout::Decision& d, int64_t t_ms);

/// What finish() found.
struct ServeEnd {
    bool ok = true;                     ///< every response was logged
    std::vector<std::string> warnings;  ///< one sentence each, for people
};

class Serving {
  public:
    /// Serves `stable` (opened from `stable_path`) and, when `canary` is not
    /// null, `canary` (from `canary_path`) as a canary rollout. Both must
    /// outlive this object. With `log`, begins a run of kind "server" (the
    /// model's cold start logged for it: a failure becomes load_warning())
    /// and makes the sessions record every request into it. Throws
    /// std::invalid_argument when the host is not loopback and there is no
    /// api key, or for a bad policy or option; what the run log throws.
    Serving(core::EngineSession& stable, const std::string& stable_path,
            core::EngineSession* canary, const std::string& canary_path, ServeConfig config,
            std::shared_ptr<runlog::RunLog> log);
    /// Stops serving and waits (as finish(), its result dropped).
    ~Serving();
    Serving(const Serving&) = delete;
    Serving& operator=(const Serving&) = delete;

    /// Binds host:port, starts the rollout's clock, writes the
    /// server_start event; returns the port. Throws std::runtime_error
    /// naming the address and the cause when it cannot be bound (e.g. the
    /// port is in use).
    int bind();
    /// Answers requests until stop(); returns false when listening failed.
    bool serve();
    /// From any thread, idempotent: see Server::stop().
    void stop();
    /// After serve() returned: stops the rollout, waits for requests in
    /// flight (up to 30 s), flushes the log, writes the server_stop event
    /// (per version: requests, tokens) and ends the run. Idempotent.
    ServeEnd finish();

    /// "http://HOST:PORT" (IPv6 hosts in brackets) once bound, else "".
    std::string base_url() const;
    int64_t run_id() const { return run_id_; }  ///< 0 when not logged
    const std::string& load_warning() const { return load_warning_; }
    const std::string& model_name() const { return options_.model_name; }
    /// Every served version's figures now, the stable one first.
    std::vector<VersionSnapshot> snapshot() const;
    /// The rollout, or null without a canary.
    Canary* canary() { return canary_.get(); }

  private:
    void log_event(const std::string& kind, const nlohmann::json& details);

    core::EngineSession& stable_;
    core::EngineSession* canary_session_;
    ServeConfig config_;
    ServerOptions options_;
    std::shared_ptr<runlog::RunLog> log_;
    std::shared_ptr<core::ResponseLogger> logger_;
    int64_t run_id_ = 0;
    std::string load_warning_;
    std::string version_, canary_version_;
    std::shared_ptr<ServerMetrics> metrics_;
    std::unique_ptr<Canary> canary_;
    std::unique_ptr<Server> server_;
    int port_ = 0;
    bool finished_ = false;
};

}  // namespace wb::server
