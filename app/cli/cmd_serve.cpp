// `workbench-cli serve`: the OpenAI-compatible HTTP server (app/server,
// docs/server.md) on one EngineSession. Prints "listening on
// http://HOST:PORT" to stdout once it accepts connections; Ctrl-C or
// SIGTERM stops accepting, cancels the requests in flight and exits 0.
// Every request is one run-log row under one run of kind "server".

#include <pthread.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
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
#include "draft_options.h"
#include "rollout/rollout.h"
#include "server/auth.h"
#include "server/serving.h"

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
    "back to 0% after --canary-max-failures failed steps; GET /canary shows the rollout.\n"
    "--draft ngram|FILE speculates for every request (docs/speculative.md), inside the\n"
    "same batched steps; each request's stats are in its run-log row.",
    concat(
        concat(
            concat(model_options(), draft_options()),
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
    std::string draft_path;
    so.speculative = draft_from_args(args, &draft_path);
    sopts.draft_model = draft_path;

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
    server::ServeConfig config;
    config.server = so;
    config.parallel = parallel;
    config.max_queue = max_queue;
    config.no_text = args.has("no-text");
    config.draft_model = draft_path;
    if (policy) config.canary_policy = *policy;
    std::shared_ptr<std::FILE> decisions_file;
    if (const auto f = args.get("canary-log")) {
        decisions_file.reset(std::fopen(f->c_str(), "a"), [](std::FILE* p) {
            if (p) std::fclose(p);
        });
        if (!decisions_file) throw UsageError("serve: --canary-log: cannot open " + *f);
    }
    config.on_decision = [decisions_file](const rollout::Decision& d) {
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
    // The run (kind "server"), metrics, rollout and events: app/server/serving.h.
    server::Serving serving(*session, path, canary_session.get(), canary_path, std::move(config),
                            log);
    if (!serving.load_warning().empty())
        std::fprintf(stderr, "warning: the model's cold start is not logged: %s\n",
                     serving.load_warning().c_str());
    serving.bind();
    std::thread stopper([&serving, &stop_signals] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        std::fprintf(stderr, "%s: stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        serving.stop();
    });
    std::printf("listening on %s\n", serving.base_url().c_str());
    std::fflush(stdout);
    const bool served = serving.serve();
    serving.stop();
    // The stopper waits for a signal; send it one if serving ended otherwise.
    pthread_kill(stopper.native_handle(), SIGTERM);
    stopper.join();
    const server::ServeEnd end = serving.finish();
    for (const std::string& w : end.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    const int status = served && end.ok ? 0 : 1;
    if (canary_session) canary_session->shutdown();
    session->shutdown();
    return status;
}

}  // namespace wb::cli
