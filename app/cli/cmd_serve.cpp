// `workbench-cli serve`: the OpenAI-compatible HTTP server (app/server,
// docs/server.md) on one EngineSession. Prints "listening on
// http://HOST:PORT" to stdout once it accepts connections; Ctrl-C or
// SIGTERM stops accepting, cancels the requests in flight and exits 0.
// Every request is one run-log row under one run of kind "server".

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "batch_common.h"
#include "common_options.h"
#include "core/engine_session.h"
#include "core/response_log.h"
#include "core/session_run.h"
#include "rollout/rollout.h"
#include "server/auth.h"
#include "server/canary.h"
#include "server/http_status.h"
#include "server/metrics/model_version.h"
#include "server/metrics/server_metrics.h"
#include "server/metrics/version_gauges.h"
#include "server/server.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "serve",
    "",
    "Serve the model over an OpenAI-compatible HTTP API.",
    "Routes: GET /health, GET /v1/models, POST /v1/chat/completions, POST /v1/completions\n"
    "(streaming with \"stream\": true), GET /metrics. The model's public name is its file\n"
    "name without .gguf. Requests share the engine: --parallel of them run at once\n"
    "(continuous batching over one KV pool), --max-queue more wait, the rest get 429\n"
    "with Retry-After. Binding an address other than 127.0.0.1, ::1 or localhost\n"
    "needs --api-key; with a key every route but /health needs\n"
    "'Authorization: Bearer KEY'. Prints 'listening on http://HOST:PORT' once ready;\n"
    "Ctrl-C or SIGTERM stops accepting, cancels the requests in flight, exits 0.\n"
    "Every request is logged (one run of kind \"server\") unless --no-log.\n"
    "--canary MODEL2 serves a second version under the same name to a share of the\n"
    "traffic that steps up (--canary-steps) while it stays within bounds of the first\n"
    "(TTFT and ITL p99 ratios, error rate, answer drift on shadow pairs), and rolls\n"
    "back to 0% after --canary-max-failures failed steps; GET /canary shows the rollout.",
    concat(
        concat(
            model_options(),
            {
                {"host", 0, "ADDR", "address to bind (default: 127.0.0.1)"},
                {"port", 0, "N", "TCP port, 0 = a free one (default: 8080)"},
                {"parallel", 0, "N", "requests running at once (default: 4)"},
                {"max-queue", 0, "N", "requests waiting for a slot (default: 64)"},
                {"api-key", 0, "KEY", "require 'Authorization: Bearer KEY'"},
                {"request-timeout-ms", 0, "N",
                 "longest submit-to-finish time of a request (default: none)"},
                {"max-body-bytes", 0, "N", "largest request body, larger: 413 (default: 1048576)"},
                {"read-timeout-s", 0, "N",
                 "a request (line, headers, body) must arrive within N s, else 400 or the "
                 "connection is closed (default: 10)"},
                {"keep-alive-timeout-s", 0, "N",
                 "an idle connection is closed after N s without a request (default: 5)"},
                {"db", 0, "PATH",
                 "run log database (default: "
                 "~/.local/share/inference-workbench/runlog.sqlite)"},
                {"no-log", 0, "", "do not log requests to the run log"},
                {"no-text", 0, "",
                 "log requests without their prompt and answer text (counts, hashes and "
                 "timings only)"},
                {"canary", 0, "MODEL2", "roll out MODEL2 as a canary of the model"},
                {"canary-steps", 0, "LIST",
                 "canary share per step, percent (default: 5,10,25,50,100)"},
                {"canary-step-s", 0, "S", "seconds per step (default: 60)"},
                {"canary-max-failures", 0, "N", "failed steps that roll back (default: 2)"},
                {"canary-shadow", 0, "F",
                 "share of canary requests also run on the stable version (default: 0.1)"},
                {"canary-min-requests", 0, "N",
                 "requests per version before a step is judged (default: 20)"},
                {"canary-min-shadow", 0, "N",
                 "shadow pairs before drift is judged, 0 = no drift checks (default: 5)"},
                {"canary-max-ttft-ratio", 0, "R", "canary/stable TTFT p99 (default: 1.25)"},
                {"canary-max-itl-ratio", 0, "R", "canary/stable ITL p99 (default: 1.25)"},
                {"canary-max-error-increase", 0, "F",
                 "canary error rate minus stable's (default: 0.02)"},
                {"canary-min-agreement", 0, "F",
                 "mean token agreement of shadow pairs (default: 0.9)"},
                {"canary-max-kld", 0, "NATS",
                 "mean KL divergence of shadow pairs, nats/token (default: 0.05)"},
                {"canary-log", 0, "FILE", "append each rollout decision to FILE (JSON lines)"},
            }),
        batch_context_options()),
    0,
    0,
};

// The rollout policy from the --canary-* options.
rollout::Policy canary_policy(const ParsedArgs& args) {
    rollout::Policy p;
    if (const auto steps = args.get("canary-steps")) {
        try {
            p.steps = rollout::parse_steps(*steps);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("serve: --canary-steps: ") + e.what());
        }
    }
    p.step_seconds = args.get_double("canary-step-s", p.step_seconds, 0.05, 86400.0 * 30);
    p.max_failures =
        static_cast<uint32_t>(args.get_int("canary-max-failures", p.max_failures, 1, 1000));
    p.shadow_share = args.get_double("canary-shadow", p.shadow_share, 0.0, 1.0);
    rollout::Limits& l = p.limits;
    l.min_requests =
        static_cast<uint32_t>(args.get_int("canary-min-requests", l.min_requests, 1, 1 << 20));
    l.min_shadow =
        static_cast<uint32_t>(args.get_int("canary-min-shadow", l.min_shadow, 0, 1 << 20));
    l.max_ttft_p99_ratio = args.get_double("canary-max-ttft-ratio", l.max_ttft_p99_ratio, 1.0, 1e6);
    l.max_itl_p99_ratio = args.get_double("canary-max-itl-ratio", l.max_itl_p99_ratio, 1.0, 1e6);
    l.max_error_rate_increase =
        args.get_double("canary-max-error-increase", l.max_error_rate_increase, 0.0, 1.0);
    l.min_token_agreement =
        args.get_double("canary-min-agreement", l.min_token_agreement, 0.0, 1.0);
    l.max_mean_kld = args.get_double("canary-max-kld", l.max_mean_kld, 0.0, 1e6);
    if (l.min_shadow > 0 && p.shadow_share == 0)
        throw UsageError(
            "serve: --canary-shadow 0 runs no shadow pairs; set --canary-min-shadow 0");
    return p;
}

// The served model's public name: the file name without ".gguf".
std::string public_name(const std::string& path) {
    return std::filesystem::path(path).stem().string();
}

}  // namespace

int cmd_serve(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    server::ServerOptions so;
    so.host = args.get("host").value_or("127.0.0.1");
    so.port = static_cast<int>(args.get_int("port", 8080, 0, 65535));
    so.api_key = args.get("api-key").value_or("");
    if (!server::is_loopback_host(so.host) && so.api_key.empty())
        throw UsageError("serve: binding " + so.host +
                         " (not 127.0.0.1, ::1 or localhost) needs --api-key KEY");
    const auto parallel = static_cast<uint32_t>(args.get_int("parallel", 4, 1, 256));
    const auto max_queue = static_cast<uint32_t>(args.get_int("max-queue", 64, 0, 1 << 20));
    so.request_timeout_ms = args.get_int("request-timeout-ms", -1, 1, int64_t{1} << 40);
    so.max_body_bytes =
        static_cast<size_t>(args.get_int("max-body-bytes", 1 << 20, 1024, int64_t{1} << 30));
    so.read_timeout_s = static_cast<int>(args.get_int("read-timeout-s", 10, 1, 3600));
    so.keep_alive_timeout_s = static_cast<int>(args.get_int("keep-alive-timeout-s", 5, 1, 3600));
    if (args.has("no-log") && args.has("db"))
        throw UsageError("serve: --db and --no-log exclude each other");

    // The run log first: a bad database is reported before the model loads.
    std::shared_ptr<runlog::RunLog> log;
    if (!args.has("no-log")) log = open_run_log(args);
    const std::string path = resolve_model_path(args.get("model"));
    core::SessionOptions sopts = batch_session_options(path, args, parallel);
    sopts.limits.max_queue = std::max<uint32_t>(max_queue, 1);

    // SIGINT/SIGTERM are taken by one thread (sigwait), so every thread the
    // session and the server start inherits them blocked; a write to a
    // client that left must not kill the process (SIGPIPE).
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    std::unique_ptr<core::EngineSession> session = core::EngineSession::open(path, sopts);
    print_warnings(session->vocab().load_warnings());
    // The canary: a second version of the model, loaded the same way.
    std::unique_ptr<core::EngineSession> canary_session;
    std::optional<rollout::Policy> policy;
    std::string canary_path;
    if (const auto c = args.get("canary")) {
        policy = canary_policy(args);
        canary_path = resolve_model_path(c);
        canary_session = core::EngineSession::open(canary_path, sopts);
        print_warnings(canary_session->vocab().load_warnings());
    }
    const core::EngineFacts& facts = session->facts();
    so.model_name = public_name(path);
    so.threads = static_cast<int>(parallel + std::max<uint32_t>(max_queue, 1) + 4);
    // One request may use one slot's share of the pool by default.
    so.max_tokens_cap = static_cast<int32_t>(std::min<uint32_t>(facts.n_ctx, 1u << 20));
    so.default_max_tokens =
        static_cast<int32_t>(std::max<uint32_t>(facts.n_ctx / std::max(facts.n_parallel, 1u), 1));

    std::shared_ptr<core::ResponseLogger> logger;
    if (log) {
        logger = std::make_shared<core::ResponseLogger>(log);
        nlohmann::json run_settings = {{"model", so.model_name},        {"host", so.host},
                                       {"parallel", parallel},          {"max_queue", max_queue},
                                       {"n_ctx", facts.n_ctx},          {"backend", facts.backend},
                                       {"api_key", !so.api_key.empty()}};
        if (so.request_timeout_ms > 0) run_settings["request_timeout_ms"] = so.request_timeout_ms;
        const core::SessionRun run = core::begin_session_run(
            logger, *session, "server", so.model_name, run_settings, args.has("no-text"));
        so.run_id = run.run_id;
        // Each row also says the HTTP status the client got.
        session->set_recorder(server::with_http_status(logger));
        if (canary_session) canary_session->set_recorder(server::with_http_status(logger));
        if (!run.load_warning.empty())
            std::fprintf(stderr, "warning: the model's cold start is not logged: %s\n",
                         run.load_warning.c_str());
    }

    // Prometheus metrics (docs/metrics.md), every series labelled with the
    // model version: its quantization and file hash prefix.
    const std::string version = server::model_version_label_of_file(path);
    auto metrics = std::make_shared<server::ServerMetrics>();
    server::ServerHooks hooks;
    const core::EngineSession& engine = *session;
    const std::string canary_version =
        canary_session ? server::model_version_label_of_file(canary_path) : std::string();
    std::unique_ptr<server::Canary> canary;
    if (canary_session) {
        server::CanaryOptions co;
        co.policy = *policy;
        std::shared_ptr<std::FILE> decisions_file;
        if (const auto f = args.get("canary-log")) {
            decisions_file.reset(std::fopen(f->c_str(), "a"), [](std::FILE* p) {
                if (p) std::fclose(p);
            });
            if (!decisions_file) throw UsageError("serve: --canary-log: cannot open " + *f);
        }
        co.on_decision = [decisions_file](const rollout::Decision& d) {
            const std::string line =
                d.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            std::fprintf(stderr, "canary: %s at %.1f s: share %.0f%% -> %.0f%%\n",
                         rollout::to_string(d.verdict), d.time_s, 100 * d.share_before,
                         100 * d.share_after);
            if (decisions_file) {
                std::fprintf(decisions_file.get(), "%s\n", line.c_str());
                std::fflush(decisions_file.get());
            }
        };
        canary = std::make_unique<server::Canary>(*session, *canary_session, std::move(co));
        hooks.pick = [c = canary.get()](const core::GenerationRequest& g, const std::string& key) {
            return c->pick(g, key);
        };
        hooks.other_sessions = {canary_session.get()};
        hooks.rollout_status = [c = canary.get()] { return c->status().dump(); };
    }
    const core::EngineSession* canary_engine = canary_session.get();
    hooks.metrics_text = [metrics, &engine, version, canary_engine, canary_version,
                          c = canary.get()] {
        std::vector<server::VersionGauges> gauges = {server::gauges_of(engine, version)};
        if (canary_engine) gauges.push_back(server::gauges_of(*canary_engine, canary_version));
        std::string text = metrics->render(gauges);
        if (c) {
            text +=
                "# HELP workbench_canary_share Share of requests routed to the canary (0..1).\n"
                "# TYPE workbench_canary_share gauge\n"
                "workbench_canary_share{model_version=\"" +
                canary_version + "\"} " + std::to_string(c->rollout().share()) + "\n";
        }
        return text;
    };
    hooks.on_finished = [metrics, version, canary_version, c = canary.get()](
                            const core::FinishedRequest& f, int status, const std::string& route) {
        const bool on_canary = c && c->arm_of(f) == rollout::Arm::Canary;
        metrics->observe(f, status, route, on_canary ? canary_version : version);
        if (c) c->on_finished(f, status);
    };
    hooks.on_refused = [metrics, version](int status, const std::string& route) {
        metrics->observe_refused(status, route, version);
    };
    server::Server srv(*session, so, std::move(hooks));
    if (canary) canary->start();
    const int port = srv.bind();
    const std::string shown_host =
        so.host.find(':') != std::string::npos && so.host[0] != '[' ? "[" + so.host + "]" : so.host;
    std::thread stopper([&srv, &stop_signals] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        std::fprintf(stderr, "%s: stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        srv.stop();
    });
    std::printf("listening on http://%s:%d\n", shown_host.c_str(), port);
    std::fflush(stdout);
    const bool served = srv.serve();
    srv.stop();
    // The stopper waits for a signal; send it one if serving ended otherwise.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    if (canary) {
        canary->stop();
        canary_session->cancel_all();  // shadow runs end too
        canary_session->wait_idle(std::chrono::seconds(30));
    }
    session->wait_idle(std::chrono::seconds(30));
    canary.reset();

    int status = served ? 0 : 1;
    if (logger) {
        if (logger->flush() > 0) {
            std::fprintf(stderr, "warning: %zu responses not logged: %s\n", logger->unlogged(),
                         logger->last_error().c_str());
            status = 1;
        } else {
            try {
                logger->end_run(so.run_id);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "warning: the run's end is not logged: %s\n", e.what());
            }
        }
    }
    if (canary_session) canary_session->shutdown();
    session->shutdown();
    return status;
}

}  // namespace wb::cli
