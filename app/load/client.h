#pragma once
// One request to an OpenAI-compatible endpoint (vLLM, llama-server, TGI,
// Ollama, `workbench-cli serve`), timed on the client from the response
// stream. Definitions follow vLLM's `bench serve` (docs/load.md):
//   TTFT  send -> first chunk with content (ms)
//   ITL   gaps between successive content chunks (ms)
//   TPOT  (e2e - TTFT) / (output tokens - 1) (ms), when output tokens > 1
//   e2e   send -> end of the response (ms)
// Every failure (refused connection, stalled stream, HTTP error, invalid
// SSE, an oversized line, a stream that goes on past 1 KiB a token of
// max_tokens plus one line) is a result with ok = false and a reason;
// nothing throws for what a server does.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wb::load {

/// Which OpenAI route a target is driven through.
enum class Api { Chat, Completions };

/// A remote (or local) OpenAI-compatible endpoint.
struct Target {
    /// "http://host:port" or "https://host:port" with an optional path prefix ("http://h:8000/v1"
    /// is accepted: a trailing "/v1" is dropped before the route is added).
    std::string base_url;
    std::string model;    ///< the request's "model" field ("" = none sent)
    std::string api_key;  ///< sent as "Authorization: Bearer"; never logged or printed
    Api api = Api::Chat;
    double connect_timeout_s = 10;  ///< TCP connect limit
    /// Limit on one read (a stalled stream fails after this) and on the
    /// whole request (checked as data arrives).
    double timeout_s = 60;
    /// https: a PEM file of CA certificates to trust instead of the
    /// system's (a self-signed endpoint); "" = the system's store.
    std::string ca_cert_path;
    /// Longest SSE line / event data and longest non-streamed body (bytes).
    size_t max_line_bytes = 1u << 20;
};

/// One chat message as the OpenAI API sends it ({"role", "content"}).
struct ChatMessage {
    std::string role;  ///< "system", "user" or "assistant"
    std::string content;
};

/// What one request asks for.
struct RequestSpec {
    /// The text sent: Api::Completions' "prompt", or Api::Chat's one user
    /// message when `messages` is empty.
    std::string prompt;
    /// Api::Chat: the whole conversation (the endpoint renders it with its
    /// own template); empty = one user message holding `prompt`.
    std::vector<ChatMessage> messages;
    int max_tokens = 16;
    std::string user;  ///< the OpenAI "user" field ("" = none); lets a server's log be matched
    std::optional<uint64_t> seed;
    std::optional<double> temperature;  ///< "temperature"; nullopt = the endpoint's default
    std::optional<double> top_p;        ///< "top_p"; nullopt = the endpoint's default
    std::vector<std::string> stop;      ///< "stop" strings (none sent when empty)
    /// Called on the sending thread with each content chunk's text as it
    /// arrives (a chat's streamed reply); may be empty.
    std::function<void(const std::string& piece)> on_content;
    /// Set from any thread to stop the request: within about 50 ms its
    /// socket is shut down (a silent stream or a slow connect too), and it
    /// ends with ok = false and error "cancelled". May be null; when set, a
    /// watcher thread runs beside the request.
    std::shared_ptr<std::atomic<bool>> cancel;
};

/// Counts the tokens of a text with a local tokenizer (the model the
/// endpoint serves), for servers that send no usage block. A negative
/// count or a std::exception means "no count": the chunks are counted.
using TokenCounter = std::function<int64_t(const std::string& text)>;

/// The outcome and client-side timing of one request. Durations in ms on
/// the steady clock; nullopt = not reached.
struct RequestResult {
    bool ok = false;
    /// Why it failed: a sentence ("connection refused ...", "HTTP 500: ...",
    /// "invalid SSE at event 3: ..."); "" when ok.
    std::string error;
    bool timed_out = false;  ///< the failure was a read or request timeout
    int http_status = 0;     ///< 0 when no response arrived
    bool streamed = false;   ///< false: the server answered with one JSON body
    double send_ms = 0;      ///< when it was sent, ms since the caller's epoch
    /// Open loop with a cap in flight: how long the request waited for a
    /// slot after it was due (ms). TTFT and e2e include this wait; send_ms
    /// does not (it is the actual send).
    double client_wait_ms = 0;
    std::optional<double> ttft_ms;
    std::vector<double> itl_ms;
    std::optional<double> tpot_ms;
    std::optional<double> e2e_ms;
    std::optional<int64_t> prompt_tokens;  ///< from usage (nullopt when not sent)
    /// The queue wait the server reported for this request (ms on its
    /// clock: submitted -> a slot took it), from a `timings.queue_ms`
    /// extension (our server sends it; OpenAI, vLLM and llama-server do
    /// not); nullopt when not sent, or not a finite number >= 0.
    std::optional<double> server_queue_ms;
    /// The server's own TTFT (`timings.ttft_ms`, submitted -> first token on
    /// its clock), under the same rule; the client's TTFT adds the network
    /// and HTTP framing to it.
    std::optional<double> server_ttft_ms;
    int64_t output_tokens = 0;
    /// "usage" (the server's usage block), "tokenizer" (our count of the
    /// text) or "chunks" (content chunks counted: approximate).
    std::string output_tokens_source = "chunks";
    std::string output;
    std::string response_id;    ///< the answer's "id"
    std::string served_model;   ///< the answer's "model" (what the endpoint says it ran)
    std::string finish_reason;  ///< as the server sent it ("stop", "length", ...)
    /// Response headers that name the server or its version ("server",
    /// "x-*-version", "openai-*"), lower-case names.
    std::map<std::string, std::string> server_headers;
};

/// Sends `spec` to `target` and reads the answer (stream=true with
/// stream_options.include_usage). `epoch_ms` is the caller's clock origin
/// (steady clock ms) for send_ms; `count` may be empty. Never throws for
/// network or server misbehaviour; throws std::invalid_argument for a
/// base URL that is not "http[s]://host[:port][/path]" (https only in a
/// build whose cpp-httplib has OpenSSL; the message says so otherwise).
RequestResult send_request(const Target& target, const RequestSpec& spec, double epoch_ms,
                           const TokenCounter& count);

/// The first model id GET <base>/v1/models lists, or "" when the endpoint
/// does not answer that route with a model list (never throws for what the
/// server does; throws std::invalid_argument for a bad base URL).
std::string first_model_id(const Target& target);

/// The model ids GET <base>/v1/models lists, in its order; nullopt when
/// the endpoint does not answer that route with a model list (never throws
/// for what the server does; throws std::invalid_argument for a bad base
/// URL).
std::optional<std::vector<std::string>> model_ids(const Target& target);

/// A warning when the endpoint lists its models and target.model is not
/// one of them ("http://h:8000 lists the models a, b; 'x' is not one of
/// them: each request will likely fail (HTTP 404)"); "" when it is, when
/// no model is named, or when the endpoint lists none. Throws as model_ids.
std::string unlisted_model_warning(const Target& target);

/// Steady-clock now in ms (the clock send_request times with).
double steady_now_ms();

/// What a GET of one of the target's paths returned.
struct GetResult {
    int status = 0;     ///< HTTP status; 0 when no answer came
    std::string body;   ///< at most `max_bytes`; longer bodies are an error
    std::string error;  ///< "" when an answer came within the limits
};

/// GETs `path` (from the server's root, "/metrics"; the base URL's path
/// without its "/v1" goes before it) with the target's key and timeouts.
/// Never throws for network or server misbehaviour (`error` says it);
/// throws std::invalid_argument for a bad base URL.
GetResult get_path(const Target& target, const std::string& path, size_t max_bytes = 8u << 20);

/// Checks a base URL as send_request() would; throws std::invalid_argument
/// with the reason.
void check_base_url(const std::string& base_url);

}  // namespace wb::load
