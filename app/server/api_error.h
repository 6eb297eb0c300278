#pragma once
// An error answer of the OpenAI-compatible server: the HTTP status and the
// body OpenAI's API sends, {"error": {"message", "type", "param", "code"}}
// (platform.openai.com/docs/guides/error-codes), so SDKs raise their typed
// errors (BadRequestError, AuthenticationError, RateLimitError, ...).
// Qt-free.

#include <nlohmann/json.hpp>
#include <string>

namespace wb::server {

/// One error answer.
struct ApiError {
    int status = 400;     ///< HTTP status (4xx for the client's mistakes, 5xx for ours)
    std::string message;  ///< for people: what is wrong and where (the field's name)
    /// OpenAI's error type: "invalid_request_error", "authentication_error",
    /// "rate_limit_error", "server_error", "timeout_error".
    std::string type = "invalid_request_error";
    std::string param;  ///< the request field at fault ("" = none: JSON null)
    std::string code;   ///< machine-readable ("model_not_found", ...; "" = null)
};

/// The body of `e`: {"error": {"message", "type", "param", "code"}}, with
/// "" param/code as JSON null. Never throws (but std::bad_alloc).
nlohmann::json error_body(const ApiError& e);

/// An invalid_request_error (400) about `param`.
ApiError invalid_request(std::string message, std::string param = {}, std::string code = {});

}  // namespace wb::server
