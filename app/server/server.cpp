#include "server/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "server/api_error.h"
#include "server/auth.h"
#include "server/deadline_server.h"
#include "server/exchange.h"
#include "server/http_status.h"
#include "server/request_parse.h"
#include "server/responses.h"

namespace wb::server {

namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

// A stream with nothing to send for this long writes an SSE comment, so a
// client that left while its request waited for a slot is found.
constexpr milliseconds kHeartbeat{1000};
// How long a disconnected stream waits for its cancelled request to end
// (one engine step) before giving up on reporting it.
constexpr milliseconds kCancelWait{30000};
// Header limits (httplib 0.11 caps one header line at 8 KiB and the request
// target at 8 KiB, but not how many lines): more fields than Apache's
// default LimitRequestFields, or more bytes than this, is 431.
constexpr size_t kMaxHeaderFields = 100;
constexpr size_t kMaxHeaderBytes = 64 * 1024;
// Scheduler passes in one GET /scheduler/passes answer (about 60 bytes
// each): a client pages through a long run with "next".
constexpr size_t kMaxPassesPerAnswer = 4096;

int64_t unix_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

void set_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(error_body(e).dump(-1, ' ', false, json::error_handler_t::replace),
                    "application/json");
}

ApiError status_error(int status, std::string message, std::string type, std::string code) {
    ApiError e;
    e.status = status;
    e.message = std::move(message);
    e.type = std::move(type);
    e.code = std::move(code);
    return e;
}

// The error answer of a request the engine did not run to completion.
ApiError engine_error(const core::FinishedRequest& f, int status) {
    if (status == 429)
        return status_error(429, "the server is busy: " + f.message + "; retry later",
                            "rate_limit_error", "rate_limit_exceeded");
    if (status == 400) return invalid_request(f.message, "", "invalid_prompt");
    if (status == 504) return status_error(504, f.message, "timeout_error", "timeout");
    if (status == 503) return status_error(503, f.message, "server_error", "server_stopping");
    return status_error(500, f.message, "server_error", "engine_error");
}

// The route a metrics series is labelled with: one of the server's routes,
// else "other", never the raw path (a client asking for arbitrary paths
// must not create a series per path).
std::string route_label(const std::string& path) {
    for (const char* r :
         {"/v1/chat/completions", "/v1/completions", "/v1/models", "/health", "/metrics"})
        if (path == r) return r;
    return "other";
}

}  // namespace

struct Server::Impl {
    core::EngineSession& session;
    ServerOptions opts;
    ServerHooks hooks;
    DeadlineServer http;  // httplib with a whole-request read deadline (slowloris)
    std::atomic<bool> stopping{false};
    std::atomic<uint64_t> next_id{1};
    std::atomic<int> listen_fd{-1};  // the listening socket, to widen its backlog
    ParseLimits limits;

    Impl(core::EngineSession& s, ServerOptions o, ServerHooks h)
        : session(s),
          opts(std::move(o)),
          hooks(std::move(h)),
          http(opts.read_timeout_s, 2 * opts.max_body_bytes + (size_t{1} << 20)) {
        limits.model_name = opts.model_name;
        limits.default_max_tokens = opts.default_max_tokens;
        limits.max_tokens_cap = opts.max_tokens_cap;
    }

    void refused(int status, const std::string& path) const {
        if (hooks.on_refused) hooks.on_refused(status, route_label(path));
    }
    void finished(const core::FinishedRequest& f, int status, const std::string& route) const {
        if (hooks.on_finished) hooks.on_finished(f, status, route);
    }

    void setup();
    void completion(const httplib::Request& req, httplib::Response& res, Route route);
    void stream(httplib::Response& res, std::shared_ptr<Exchange> ex, core::RequestHandle handle,
                CompletionRequest req, AnswerIds ids);
};

void Server::Impl::setup() {
    const int threads = opts.threads;
    http.new_task_queue = [threads] {
        return new httplib::ThreadPool(static_cast<size_t>(threads));
    };
    // httplib's own options are SO_REUSEADDR and SO_REUSEPORT; the latter
    // would let another process bind the same port and take requests, so
    // only the former. The socket is kept to widen the backlog (bind()).
    http.set_socket_options([this](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
        listen_fd.store(sock);
    });
    http.set_payload_max_length(opts.max_body_bytes);
    http.set_read_timeout(opts.read_timeout_s, 0);
    http.set_write_timeout(opts.write_timeout_s, 0);
    // How long a connection may wait for its (next) request: a busy client
    // can take seconds from connect to sending; stop() waits for idle
    // connections this long.
    http.set_keep_alive_timeout(opts.keep_alive_timeout_s);

    // Oversized header sections are refused first (RFC 6585's 431); then
    // the key guards every route but /health (a load balancer's probe).
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        size_t header_bytes = 0;
        for (const auto& [name, value] : req.headers) header_bytes += name.size() + value.size();
        if (req.headers.size() > kMaxHeaderFields || header_bytes > kMaxHeaderBytes) {
            set_error(res,
                      status_error(431,
                                   "the request has " + std::to_string(req.headers.size()) +
                                       " header fields of " + std::to_string(header_bytes) +
                                       " bytes; at most " + std::to_string(kMaxHeaderFields) +
                                       " fields and " + std::to_string(kMaxHeaderBytes) +
                                       " bytes are read",
                                   "invalid_request_error", "request_header_fields_too_large"));
            refused(431, req.path);
            return httplib::Server::HandlerResponse::Handled;
        }
        if (opts.api_key.empty() || req.path == "/health")
            return httplib::Server::HandlerResponse::Unhandled;
        if (bearer_matches(req.get_header_value("Authorization"), opts.api_key))
            return httplib::Server::HandlerResponse::Unhandled;
        ApiError e = status_error(401,
                                  req.has_header("Authorization")
                                      ? "Incorrect API key provided"
                                      : "Missing API key: send 'Authorization: Bearer <key>'",
                                  "authentication_error", "invalid_api_key");
        set_error(res, e);
        refused(401, req.path);
        return httplib::Server::HandlerResponse::Handled;
    });
    // Errors httplib answers itself (413 body too large, 404 unknown path,
    // 400 unreadable request) get an error object too; a handler's own
    // errors already have a body.
    http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                       httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        ApiError e;
        e.status = res.status;
        if (res.status == 413) {
            e.message =
                "the request body is larger than " + std::to_string(opts.max_body_bytes) + " bytes";
            e.code = "request_too_large";
        } else if (res.status == 404) {
            e.message = "no route " + req.method + " " + req.path;
            e.code = "not_found";
        } else {
            e.message = "the request could not be read (HTTP " + std::to_string(res.status) + ")";
            if (res.status >= 500) e.type = "server_error";
        }
        set_error(res, e);
        refused(res.status, req.path);
        return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([this](const httplib::Request& req, httplib::Response& res,
                                      std::exception_ptr ep) {
        std::string what = "unknown error";
        try {
            if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
            what = e.what();
        } catch (...) {
        }
        set_error(res,
                  status_error(500, "internal error: " + what, "server_error", "internal_error"));
        refused(500, req.path);
    });

    http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
        res.set_content(R"({"status":"ok"})", "application/json");
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        const json body = {{"object", "list"},
                           {"data", json::array({{{"id", opts.model_name},
                                                  {"object", "model"},
                                                  {"created", unix_seconds()},
                                                  {"owned_by", "inference-workbench"}}})}};
        res.set_content(body.dump(), "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
        if (!hooks.metrics_text) {
            set_error(res, status_error(404, "metrics are not enabled on this server",
                                        "invalid_request_error", "not_found"));
            refused(404, req.path);
            return;
        }
        res.set_content(hooks.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
    });
    // Scheduler telemetry: the engine's forward passes from index `from`,
    // at most kMaxPassesPerAnswer an answer (a client pages with "next").
    http.Get("/scheduler/passes", [this](const httplib::Request& req, httplib::Response& res) {
        uint64_t from = 0;
        if (req.has_param("from")) {
            const std::string v = req.get_param_value("from");
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), from);
            if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
                ApiError e = status_error(400,
                                          "query parameter 'from' must be a pass index "
                                          "(a whole number >= 0), not '" +
                                              v.substr(0, 40) + "'",
                                          "invalid_request_error", "invalid_value");
                e.param = "from";
                set_error(res, e);
                refused(400, req.path);
                return;
            }
        }
        const metrics::MetricsStore& m = session.metrics();
        const double now = session.now_ms();
        const uint64_t end = m.lifetime().steps;
        const json body =
            passes_json(opts.model_name, m.passes_after(from, kMaxPassesPerAnswer), now, from, end);
        res.set_content(body.dump(), "application/json");
    });
    http.Get("/canary", [this](const httplib::Request& req, httplib::Response& res) {
        if (!hooks.rollout_status) {
            set_error(res, status_error(404, "no canary rollout on this server (serve --canary)",
                                        "invalid_request_error", "not_found"));
            refused(404, req.path);
            return;
        }
        res.set_content(hooks.rollout_status(), "application/json");
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
        completion(req, res, Route::ChatCompletions);
    });
    http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
        completion(req, res, Route::Completions);
    });
}

void Server::Impl::completion(const httplib::Request& hreq, httplib::Response& res, Route route) {
    const std::string path = route_path(route);
    if (stopping.load()) {
        set_error(res,
                  status_error(503, "the server is stopping", "server_error", "server_stopping"));
        refused(503, path);
        return;
    }
    ParseResult parsed = parse_completion_request(hreq.body, route, limits);
    if (!parsed.ok()) {
        set_error(res, parsed.error);
        refused(parsed.error.status, path);
        return;
    }
    CompletionRequest req = std::move(*parsed.request);
    const uint64_t n = next_id.fetch_add(1);
    core::GenerationRequest& g = req.gen;
    g.run_id = opts.run_id;
    g.client_id = hreq.remote_addr;
    g.label = "http-" + std::to_string(n);
    g.timeout_ms = opts.request_timeout_ms;
    g.log_settings = {{"api_route", path},
                      {"client_addr", hreq.remote_addr + ":" + std::to_string(hreq.remote_port)},
                      {"stream", req.stream}};
    if (req.logprobs) g.log_settings["top_logprobs"] = req.top_logprobs;
    g.speculative = opts.speculative;
    if (opts.draft_model_version_id > 0)
        g.log_settings["draft_model_version_id"] = opts.draft_model_version_id;
    if (!req.user.empty()) g.log_settings["user"] = req.user;
    // Per-token log-probabilities only when asked (they cost O(n_vocab) a token).
    g.top_logprobs = req.logprobs ? req.top_logprobs : -1;
    core::EngineSession* engine = &session;
    if (hooks.pick) {
        SessionPick p = hooks.pick(g, req.user.empty() ? hreq.remote_addr : req.user);
        if (p.session != nullptr) engine = p.session;
        g.top_logprobs = std::max(g.top_logprobs, p.min_top_logprobs);
        for (const auto& [key, value] : p.log_settings.items()) g.log_settings[key] = value;
    }

    AnswerIds ids;
    ids.id = (route == Route::ChatCompletions ? "chatcmpl-" : "cmpl-") + std::to_string(n);
    ids.created = unix_seconds();
    ids.model = opts.model_name;
    ids.route = route;
    ids.vocab = &engine->vocab();

    auto ex = std::make_shared<Exchange>();
    const core::RequestHandle handle =
        engine->submit(g, [ex](const core::RequestEvent& e) { ex->push(e); });
    // The first event says whether it was queued or refused (a full queue:
    // 429), before any status goes out.
    while (!ex->peek(milliseconds(1000))) {
    }
    if (auto f = ex->finished(); f && f->refused) {
        const int status = http_status_of(*f);
        set_error(res, engine_error(*f, status));
        if (status == 429) res.set_header("Retry-After", std::to_string(opts.retry_after_s));
        finished(*f, status, path);
        return;
    }
    if (req.stream) {
        stream(res, std::move(ex), handle, std::move(req), std::move(ids));
        return;
    }
    // A plain answer: the whole text once it finished (a timeout or stop()
    // ends every request, so this wait ends). A client that goes away
    // meanwhile cancels it (checked every 100 ms), which frees its slot as
    // a closed stream does.
    std::shared_ptr<const core::FinishedRequest> f;
    bool cancelled = false;
    while (!(f = ex->wait_finished(milliseconds(100)))) {
        if (!cancelled && DeadlineServer::client_gone()) {
            handle.cancel("client disconnected");
            cancelled = true;
        }
    }
    const int status = http_status_of(*f);
    if (status == 200)
        res.set_content(
            full_response(ids, *f, req).dump(-1, ' ', false, json::error_handler_t::replace),
            "application/json");
    else
        set_error(res, engine_error(*f, status));
    finished(*f, status, path);
}

void Server::Impl::stream(httplib::Response& res, std::shared_ptr<Exchange> ex,
                          core::RequestHandle handle, CompletionRequest req, AnswerIds ids) {
    res.set_header("Cache-Control", "no-cache");
    const bool usage = req.include_usage;
    // Reported once: when the engine's Finished event arrives, before the
    // last chunks go out (a client that has read [DONE] finds its request
    // in /metrics, as it is in the run log), or by `release` when the answer
    // ended otherwise.
    auto reported = std::make_shared<std::atomic<bool>>(false);
    const std::string path(route_path(ids.route));
    auto provider = [this, ex, ids, req, usage, reported, path](size_t, httplib::DataSink& sink) {
        auto write = [&sink](const std::string& s) { return sink.write(s.data(), s.size()); };
        bool first = true;
        for (;;) {
            const std::vector<core::RequestEvent> events = ex->take(kHeartbeat);
            if (events.empty() && !write(": keep-alive\n\n")) return false;
            for (const core::RequestEvent& e : events) {
                if (!e.piece.empty()) {
                    if (!write(sse_event(text_chunk(ids, e.piece, first, usage)))) return false;
                    first = false;
                }
                if (e.type != core::RequestEvent::Type::Finished) continue;
                const core::FinishedRequest& f = *e.result;
                if (!reported->exchange(true)) finished(f, 200, path);
                bool ok = true;
                if (f.completed()) {
                    ok = write(sse_event(finish_chunk(ids, f, req, usage)));
                } else {
                    // Headers said 200 already: the failure is an error event,
                    // worded as the plain answer's would be (stopping, timeout).
                    const int as = f.finish_reason == "cancelled" ? 503
                                   : f.finish_reason == "timeout" ? 504
                                                                  : 500;
                    ok = write(sse_event(error_body(engine_error(f, as))));
                }
                if (ok && usage) ok = write(sse_event(usage_chunk(ids, f)));
                if (ok) ok = write(sse_done());
                if (ok) sink.done();
                return ok;
            }
        }
    };
    // Runs when the answer is over, however it ended: a request whose
    // client went away (a failed write, or headers that never went out) is
    // cancelled here, which frees its slot; then it is reported.
    auto release = [this, ex, handle, reported, path](bool) {
        try {
            if (!ex->finished()) handle.cancel("client disconnected");
            if (auto f = ex->wait_finished(kCancelWait); f && !reported->exchange(true))
                finished(*f, 200, path);
        } catch (...) {  // a destructor's callback: nothing may escape
        }
    };
    res.set_chunked_content_provider("text/event-stream", std::move(provider), std::move(release));
}

Server::Server(core::EngineSession& session, ServerOptions options, ServerHooks hooks) {
    if (!is_loopback_host(options.host) && options.api_key.empty())
        throw std::invalid_argument("serving on " + options.host +
                                    " (not a loopback address) needs an API key (--api-key)");
    if (options.port < 0 || options.port > 65535)
        throw std::invalid_argument("port " + std::to_string(options.port) +
                                    " is not between 0 and 65535");
    if (options.read_timeout_s < 1 || options.write_timeout_s < 1 ||
        options.keep_alive_timeout_s < 1)
        throw std::invalid_argument("the read, write and keep-alive timeouts must be >= 1 s");
    if (options.threads < 1) options.threads = 1;
    impl_ = std::make_unique<Impl>(session, std::move(options), std::move(hooks));
    impl_->setup();
}

Server::~Server() {
    stop();
}

int Server::bind() {
    const ServerOptions& o = impl_->opts;
    const std::string host = o.host == "[::1]" ? "::1" : o.host;
    int port = o.port;
    if (port == 0) {
        port = impl_->http.bind_to_any_port(host);
        if (port < 0) port = 0;
    } else if (!impl_->http.bind_to_port(host, port)) {
        port = 0;
    }
    if (port == 0)
        throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) +
                                 " (address in use or not available)");
    // httplib 0.11 listens with a backlog of 5: a burst of clients (200 at
    // once) overflows it and the kernel resets the late ones. Listening again
    // on the bound socket sets the backlog (Linux listen(2)).
    if (const int fd = impl_->listen_fd.load(); fd >= 0) ::listen(fd, SOMAXCONN);
    return port;
}

bool Server::serve() {
    return impl_->http.listen_after_bind();
}

void Server::stop() {
    if (!impl_ || impl_->stopping.exchange(true)) return;
    impl_->session.cancel_all();  // streams end, so the workers can be joined
    for (core::EngineSession* other : impl_->hooks.other_sessions) other->cancel_all();
    impl_->http.stop();
}

}  // namespace wb::server
