#include "server/serving.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "core/session_run.h"
#include "runlog/time_utc.h"
#include "server/auth.h"
#include "server/http_status.h"
#include "server/metrics/model_version.h"

namespace wb::server {

const char* event_kind_of(const rollout::Decision& d) {
    if (d.verdict == rollout::Verdict::Promote) return "promote";
    if (d.verdict == rollout::Verdict::Rollback) return "rollback";
    return "canary_step";
}

int64_t log_decision(runlog::RunLog& log, int64_t run_id, const rollout::Decision& d,
                     int64_t t_ms) {
    runlog::RunEvent e;
    e.run_id = run_id;
    e.t_ms = t_ms;
    e.kind = event_kind_of(d);
    e.details = d.to_json();
    return log.log_event(e);
}

namespace {

// The served model's public name: the file name without ".gguf".
std::string public_name(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

}  // namespace

Serving::Serving(core::EngineSession& stable, const std::string& stable_path,
                 core::EngineSession* canary, const std::string& canary_path, ServeConfig config,
                 std::shared_ptr<runlog::RunLog> log)
    : stable_(stable),
      canary_session_(canary),
      config_(std::move(config)),
      options_(config_.server),
      log_(std::move(log)),
      metrics_(std::make_shared<ServerMetrics>()) {
    if (!is_loopback_host(options_.host) && options_.api_key.empty())
        throw std::invalid_argument("binding " + options_.host +
                                    " (not 127.0.0.1, ::1 or localhost) needs an API key");
    const core::EngineFacts& facts = stable_.facts();
    const uint32_t parallel = std::max<uint32_t>(config_.parallel, 1);
    const uint32_t queue = std::max<uint32_t>(config_.max_queue, 1);
    options_.model_name = public_name(stable_path);
    // A streaming answer holds an HTTP worker while it runs.
    options_.threads = static_cast<int>(parallel + queue + 4);
    // One request may use one slot's share of the pool by default.
    options_.max_tokens_cap = static_cast<int32_t>(std::min<uint32_t>(facts.n_ctx, 1u << 20));
    options_.default_max_tokens =
        static_cast<int32_t>(std::max<uint32_t>(facts.n_ctx / std::max(facts.n_parallel, 1u), 1));
    version_ = model_version_label_of_file(stable_path);
    if (canary_session_) canary_version_ = model_version_label_of_file(canary_path);
    // The same file as its own canary (a rehearsal) would give both
    // versions one label: their series would merge (and the gauges repeat).
    if (canary_session_ && canary_version_ == version_) canary_version_ += "+canary";

    if (log_) {
        logger_ = std::make_shared<core::ResponseLogger>(log_);
        nlohmann::json run_settings = {{"model", options_.model_name},
                                       {"host", options_.host},
                                       {"parallel", parallel},
                                       {"max_queue", config_.max_queue},
                                       {"n_ctx", facts.n_ctx},
                                       {"backend", facts.backend},
                                       {"api_key", !options_.api_key.empty()}};
        if (options_.request_timeout_ms > 0)
            run_settings["request_timeout_ms"] = options_.request_timeout_ms;
        if (canary_session_) run_settings["canary"] = public_name(canary_path);
        if (options_.speculative.kind != scheduler::SpeculativeParams::Kind::None)
            run_settings["speculative"] = scheduler::to_string(options_.speculative.kind);
        if (!config_.draft_model.empty())
            options_.draft_model_version_id = log_->ensure_model_version(config_.draft_model);
        const core::SessionRun run = core::begin_session_run(
            logger_, stable_, "server", options_.model_name, run_settings, config_.no_text);
        run_id_ = run.run_id;
        options_.run_id = run_id_;
        load_warning_ = run.load_warning;
        // Each row also says the HTTP status the client got.
        stable_.set_recorder(with_http_status(logger_));
        if (canary_session_) canary_session_->set_recorder(with_http_status(logger_));
    }

    ServerHooks hooks;
    if (canary_session_) {
        CanaryOptions co;
        co.policy = config_.canary_policy;
        co.tick = config_.canary_tick;
        co.on_decision = [this](const rollout::Decision& d) {
            if (log_ && run_id_ > 0) {
                try {
                    log_decision(*log_, run_id_, d, runlog::now_utc_ms());
                } catch (const std::exception&) {
                    // The decision stands; the log says what it lost at finish().
                }
            }
            if (config_.on_decision) config_.on_decision(d);
        };
        canary_ = std::make_unique<Canary>(stable_, *canary_session_, std::move(co));
        hooks.pick = [c = canary_.get()](const core::GenerationRequest& g, const std::string& key) {
            return c->pick(g, key);
        };
        hooks.other_sessions = {canary_session_};
        hooks.rollout_status = [c = canary_.get()] { return c->status().dump(); };
    }
    hooks.metrics_text = [this] {
        std::vector<VersionGauges> gauges = {gauges_of(stable_, version_)};
        if (canary_session_) gauges.push_back(gauges_of(*canary_session_, canary_version_));
        std::string text = metrics_->render(gauges);
        if (canary_) {
            text +=
                "# HELP workbench_canary_share Share of requests routed to the canary (0..1).\n"
                "# TYPE workbench_canary_share gauge\n"
                "workbench_canary_share{model_version=\"" +
                canary_version_ + "\"} " + std::to_string(canary_->rollout().share()) + "\n";
        }
        return text;
    };
    hooks.on_finished = [this](const core::FinishedRequest& f, int status,
                               const std::string& route) {
        const bool on_canary = canary_ && canary_->arm_of(f) == rollout::Arm::Canary;
        metrics_->observe(f, status, route, on_canary ? canary_version_ : version_);
        if (canary_) canary_->on_finished(f, status);
    };
    hooks.on_refused = [this](int status, const std::string& route) {
        metrics_->observe_refused(status, route, version_);
    };
    server_ = std::make_unique<Server>(stable_, options_, std::move(hooks));
}

Serving::~Serving() {
    try {
        stop();
        finish();
    } catch (...) {
        // A destructor must not throw; finish() reports through its result.
    }
}

int Serving::bind() {
    port_ = server_->bind();
    if (canary_) canary_->start();
    nlohmann::json details = {{"url", base_url()},
                              {"host", options_.host},
                              {"port", port_},
                              {"model", options_.model_name},
                              {"model_version", version_},
                              {"parallel", config_.parallel},
                              {"max_queue", config_.max_queue},
                              {"api_key", !options_.api_key.empty()},
                              {"no_text", config_.no_text}};
    if (canary_) {
        nlohmann::json steps = nlohmann::json::array();
        for (double s : config_.canary_policy.steps) steps.push_back(s);
        details["canary_version"] = canary_version_;
        details["canary_steps"] = steps;
        details["canary_step_s"] = config_.canary_policy.step_seconds;
        details["canary_max_failures"] = config_.canary_policy.max_failures;
        details["canary_shadow"] = config_.canary_policy.shadow_share;
    }
    log_event("server_start", details);
    return port_;
}

bool Serving::serve() {
    return server_->serve();
}

void Serving::stop() {
    server_->stop();
}

ServeEnd Serving::finish() {
    ServeEnd end;
    if (finished_) return end;
    finished_ = true;
    server_->stop();
    if (canary_) {
        canary_->stop();
        canary_session_->cancel_all();  // shadow runs end too
        canary_session_->wait_idle(std::chrono::seconds(30));
    }
    stable_.wait_idle(std::chrono::seconds(30));
    if (logger_) {
        if (logger_->flush() > 0) {
            end.ok = false;
            end.warnings.push_back(std::to_string(logger_->unlogged()) +
                                   " responses not logged: " + logger_->last_error());
        }
        nlohmann::json versions = nlohmann::json::array();
        for (const VersionSnapshot& v : snapshot())
            versions.push_back({{"model_version", v.version},
                                {"canary", v.canary},
                                {"requests", v.figures.requests},
                                {"requests_ok", v.figures.requests_ok},
                                {"generated_tokens", v.figures.generated_tokens}});
        nlohmann::json details = {{"url", base_url()}, {"versions", versions}};
        if (canary_) details["canary_phase"] = rollout::to_string(canary_->rollout().phase());
        log_event("server_stop", details);
        try {
            logger_->end_run(run_id_);
        } catch (const std::exception& e) {
            // Every response is in the log: a warning, not a failure.
            end.warnings.push_back(std::string("the run's end is not logged: ") + e.what());
        }
        // The sessions may serve other surfaces after this.
        stable_.set_recorder(nullptr);
        if (canary_session_) canary_session_->set_recorder(nullptr);
    }
    canary_.reset();
    return end;
}

std::string Serving::base_url() const {
    if (port_ == 0) return "";
    const std::string& h = options_.host;
    const bool v6 = h.find(':') != std::string::npos && h[0] != '[';
    return "http://" + (v6 ? "[" + h + "]" : h) + ":" + std::to_string(port_);
}

std::vector<VersionSnapshot> Serving::snapshot() const {
    std::vector<VersionSnapshot> out;
    VersionSnapshot s;
    s.version = version_;
    s.figures = metrics_->figures(version_);
    s.gauges = gauges_of(stable_, version_);
    out.push_back(s);
    if (canary_session_) {
        VersionSnapshot c;
        c.version = canary_version_;
        c.canary = true;
        c.figures = metrics_->figures(canary_version_);
        c.gauges = gauges_of(*canary_session_, canary_version_);
        out.push_back(c);
    }
    return out;
}

void Serving::log_event(const std::string& kind, const nlohmann::json& details) {
    if (!log_ || run_id_ == 0) return;
    runlog::RunEvent e;
    e.run_id = run_id_;
    e.t_ms = runlog::now_utc_ms();
    e.kind = kind;
    e.details = details;
    try {
        log_->log_event(e);
    } catch (const std::exception&) {
        // The server runs on; an event the log cannot take is not a reason to stop.
    }
}

}  // namespace wb::server
