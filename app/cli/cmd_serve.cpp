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
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "batch_common.h"
#include "common_options.h"
#include "core/engine_session.h"
#include "core/response_log.h"
#include "core/session_run.h"
#include "server/auth.h"
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
    "Every request is logged (one run of kind \"server\") unless --no-log.",
    concat(concat(model_options(),
                  {
                      {"host", 0, "ADDR", "address to bind (default: 127.0.0.1)"},
                      {"port", 0, "N", "TCP port, 0 = a free one (default: 8080)"},
                      {"parallel", 0, "N", "requests running at once (default: 4)"},
                      {"max-queue", 0, "N", "requests waiting for a slot (default: 64)"},
                      {"api-key", 0, "KEY", "require 'Authorization: Bearer KEY'"},
                      {"request-timeout-ms", 0, "N",
                       "longest submit-to-finish time of a request (default: none)"},
                      {"max-body-bytes", 0, "N",
                       "largest request body, larger: 413 (default: 1048576)"},
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
                  }),
           batch_context_options()),
    0,
    0,
};

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
    hooks.metrics_text = [metrics, &engine, version] {
        return metrics->render({server::gauges_of(engine, version)});
    };
    hooks.on_finished = [metrics, version](const core::FinishedRequest& f, int status,
                                           const std::string& route) {
        metrics->observe(f, status, route, version);
    };
    hooks.on_refused = [metrics, version](int status, const std::string& route) {
        metrics->observe_refused(status, route, version);
    };
    server::Server srv(*session, so, std::move(hooks));
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
    session->wait_idle(std::chrono::seconds(30));

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
    session->shutdown();
    return status;
}

}  // namespace wb::cli
