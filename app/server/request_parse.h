#pragma once
// The body of POST /v1/chat/completions or /v1/completions (OpenAI's API
// reference, "Create chat completion" / "Create completion") to a
// core::GenerationRequest, or the 4xx error that says which field is wrong.
// A pure function of its inputs (no session, no I/O), so a fuzz harness can
// call it on any bytes. Unknown fields are ignored, as OpenAI's clients send
// fields a server may not know.
// Qt-free.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/generation_request.h"
#include "server/api_error.h"

namespace wb::server {

/// Which endpoint a body was sent to.
enum class Route {
    ChatCompletions,  ///< POST /v1/chat/completions: `messages`
    Completions,      ///< POST /v1/completions: `prompt`
};

/// "/v1/chat/completions" or "/v1/completions".
const char* route_path(Route r);

/// What parsing needs to know about the server.
struct ParseLimits {
    std::string model_name;            ///< the served model's public name (`model` must equal it)
    int32_t default_max_tokens = 256;  ///< when the body gives neither max_tokens field
    int32_t max_tokens_cap = 1 << 20;  ///< the most a body may ask for (the context)
};

/// One parsed request: the engine's request and how to answer it.
struct CompletionRequest {
    Route route = Route::ChatCompletions;
    /// messages + chat_template "model" (chat) or prompt / prompt_tokens
    /// (completions); sampling (OpenAI's defaults: temperature 1, top_p 1,
    /// no top-k, min-p or repeat penalty), max_tokens, stop, seed (Fixed
    /// when given, else Random).
    core::GenerationRequest gen;
    bool stream = false;
    bool include_usage = false;  ///< stream_options.include_usage
    /// Chat: `logprobs` true; completions: `logprobs` given (an integer).
    bool logprobs = false;
    /// Chat: top_logprobs (0..20); completions: logprobs (0..5).
    int32_t top_logprobs = 0;
    /// OpenAI's `user`: the end user the client names (at most 256 bytes);
    /// "" when absent. A canary rollout keeps each user on one version.
    std::string user;
};

/// The result: a request, or the error to answer (status 400 for a bad body,
/// 404 for an unknown model).
struct ParseResult {
    std::optional<CompletionRequest> request;
    ApiError error;  ///< meaningful when !request
    bool ok() const { return request.has_value(); }
};

/// Parses `body` (UTF-8 JSON) sent to `route`. Checks: a JSON object;
/// model a string equal to limits.model_name (404 model_not_found
/// otherwise); chat: messages a non-empty array of {role: string, content:
/// string, null or an array of {"type": "text", "text": string} parts};
/// completions: prompt a string, an array of one string, or an array of
/// token ids; max_tokens / max_completion_tokens integers 1..max_tokens_cap
/// (both given: max_completion_tokens wins); temperature a number 0..2;
/// top_p a number in (0, 1]; seed an integer; stop a string or an array of
/// at most 4 strings; n an integer equal to 1; stream a boolean;
/// stream_options an object (only with stream true) whose include_usage is
/// a boolean; logprobs a boolean (chat) or an integer 0..5 (completions);
/// top_logprobs an integer 0..20 that needs logprobs true (chat); user a
/// string of at most 256 bytes. Every
/// failure names the field (ApiError::param). Never throws (but
/// std::bad_alloc).
ParseResult parse_completion_request(std::string_view body, Route route, const ParseLimits& limits);

}  // namespace wb::server
