#pragma once
// The OpenAI-compatible HTTP server (docs/server.md): routes, auth, limits
// and streaming over cpp-httplib, every generation submitted to one
// core::EngineSession (continuous batching, shared KV pool, prefix cache,
// admission limits). Routes:
//   GET  /health               200 {"status":"ok"} (no key needed)
//   GET  /v1/models            the one served model
//   POST /v1/chat/completions  messages -> chat template -> engine
//   POST /v1/completions       prompt -> engine
//   GET  /metrics              ServerHooks::metrics_text (Prometheus text)
// Streaming answers are server-sent events; a client that goes away is seen
// when a write to it fails (every token, and a ": keep-alive" comment after
// a second without one) and its request is cancelled, freeing its slot.
// Qt-free.

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/engine_session.h"
#include "core/finished_request.h"

namespace wb::server {

/// How the server listens and what it accepts.
struct ServerOptions {
    std::string host = "127.0.0.1";   ///< bind address; not loopback: api_key required
    int port = 8080;                  ///< TCP port; 0 = a free one (Server::bind returns it)
    std::string api_key;              ///< "" = none; else every route but /health needs it
    std::string model_name;           ///< the public name `model` must equal (the file's stem)
    int64_t run_id = 0;               ///< run-log run of every request (0 = not logged)
    size_t max_body_bytes = 1 << 20;  ///< larger bodies: 413
    /// The most seconds a request (line, headers and body) may take to
    /// arrive once it started, and the longest wait for any one read; a
    /// client slower than that (slowloris) gets 400 or is disconnected. >= 1.
    int read_timeout_s = 10;
    int write_timeout_s = 10;  ///< a client that takes one write longer than this is dropped; >= 1
    /// A connection's wait for its next request (the first one too), s; >= 1.
    int keep_alive_timeout_s = 5;
    /// HTTP worker threads; a streaming answer holds one while it runs, so
    /// n_parallel + max_queue + a few keeps every admitted stream served.
    int threads = 8;
    int64_t request_timeout_ms = -1;   ///< submit-to-finish limit per request (< 0 none)
    int retry_after_s = 1;             ///< Retry-After of a 429
    int32_t default_max_tokens = 256;  ///< when the body gives no max tokens
    int32_t max_tokens_cap = 1 << 20;  ///< the most a body may ask for
    /// Speculative decoding for every request (docs/speculative.md): n-gram
    /// drafts, or the session's draft model (SessionOptions::draft_model).
    /// Each request speculates inside the scheduler's mixed batches, beside
    /// requests without drafts. Off by default.
    scheduler::SpeculativeParams speculative;
    /// The draft file's model_versions row, logged with each request's
    /// settings (0 = none: no draft model, or not logged).
    int64_t draft_model_version_id = 0;
};

/// Which engine serves one request (ServerHooks::pick).
struct SessionPick {
    /// The session to submit to (it must outlive the server); null: the
    /// session the server was made with.
    core::EngineSession* session = nullptr;
    /// Ask the engine for at least this many log-probability alternatives
    /// (a shadow pair compares distributions); the answer still shows only
    /// what the client asked for. -1: only what the client asked for.
    int32_t min_top_logprobs = -1;
    /// Keys joined into the request's logged settings (which rollout arm).
    nlohmann::json log_settings = nlohmann::json::object();
};

/// What the server reports to the rest of the program (metrics). Each may
/// be empty. Called on HTTP worker threads, concurrently; must not throw.
struct ServerHooks {
    /// The body of GET /metrics (Prometheus text format 0.0.4). Empty: 404.
    std::function<std::string()> metrics_text;
    /// A request that reached the engine ended (any reason, a 429 from a
    /// full queue included), with the status it was answered with and its
    /// route ("/v1/chat/completions", "/v1/completions").
    std::function<void(const core::FinishedRequest&, int http_status, const std::string& route)>
        on_finished;
    /// A request answered without reaching the engine (400 bad body, 401,
    /// 404 unknown model or path, 413, 503 while stopping), with its path.
    std::function<void(int http_status, const std::string& route)> on_refused;
    /// Picks the engine for a request (a canary rollout: two versions under
    /// one public name), given the request as parsed (its label is unique)
    /// and its sticky key: the body's `user`, else the client's address.
    /// Empty: always the server's own session.
    std::function<SessionPick(const core::GenerationRequest&, const std::string& sticky_key)> pick;
    /// Every other session `pick` may return: stop() cancels their requests too.
    std::vector<core::EngineSession*> other_sessions;
    /// The body of GET /canary (JSON: the rollout's state and decisions). Empty: 404.
    std::function<std::string()> rollout_status;
};

class Server {
  public:
    /// A server for `session` (which must outlive it). Throws
    /// std::invalid_argument when options.host is not loopback and there is
    /// no api_key, or options are out of range (port, a timeout under 1 s).
    Server(core::EngineSession& session, ServerOptions options, ServerHooks hooks = {});
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    /// Binds host:port; returns the port (the one picked for port 0).
    /// Throws std::runtime_error when the address cannot be bound.
    int bind();
    /// Answers requests until stop(); returns after every worker finished.
    /// Call bind() first. Returns false when listening failed.
    bool serve();
    /// From any thread, idempotent: new requests get 503, every request in
    /// flight is cancelled (streams end, their rows say "cancelled"), the
    /// listening socket closes and serve() returns.
    void stop();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace wb::server
