#include "server/responses.h"

namespace wb::server {

namespace {

using json = nlohmann::json;

const char* object_name(Route r, bool chunk) {
    if (r == Route::ChatCompletions) return chunk ? "chat.completion.chunk" : "chat.completion";
    return "text_completion";  // OpenAI names streamed legacy chunks the same
}

json envelope(const AnswerIds& ids, bool chunk) {
    return {{"id", ids.id},
            {"object", object_name(ids.route, chunk)},
            {"created", ids.created},
            {"model", ids.model},
            {"system_fingerprint", nullptr}};
}

}  // namespace

std::string openai_finish_reason(const std::string& engine_reason) {
    if (engine_reason == "length" || engine_reason == "context") return "length";
    return engine_reason;
}

json usage_json(const core::FinishedRequest& f) {
    const auto prompt = static_cast<int64_t>(f.prompt_tokens.size());
    const auto completion = static_cast<int64_t>(f.output_tokens.size());
    return {{"prompt_tokens", prompt},
            {"completion_tokens", completion},
            {"total_tokens", prompt + completion},
            {"prompt_tokens_details", {{"cached_tokens", f.prompt_tokens_cached}}}};
}

json logprobs_json(const core::FinishedRequest& /*f*/, const CompletionRequest& /*req*/) {
    return nullptr;
}

json full_response(const AnswerIds& ids, const core::FinishedRequest& f,
                   const CompletionRequest& req) {
    json j = envelope(ids, false);
    json choice = {{"index", 0},
                   {"finish_reason", openai_finish_reason(f.finish_reason)},
                   {"logprobs", logprobs_json(f, req)}};
    if (ids.route == Route::ChatCompletions)
        choice["message"] = {{"role", "assistant"}, {"content", f.output}, {"refusal", nullptr}};
    else
        choice["text"] = f.output;
    j["choices"] = json::array({choice});
    j["usage"] = usage_json(f);
    return j;
}

json text_chunk(const AnswerIds& ids, const std::string& text, bool first, bool with_usage_null) {
    json j = envelope(ids, true);
    json choice = {{"index", 0}, {"finish_reason", nullptr}, {"logprobs", nullptr}};
    if (ids.route == Route::ChatCompletions) {
        json delta = {{"content", text}};
        if (first) delta["role"] = "assistant";
        choice["delta"] = delta;
    } else {
        choice["text"] = text;
    }
    j["choices"] = json::array({choice});
    if (with_usage_null) j["usage"] = nullptr;
    return j;
}

json finish_chunk(const AnswerIds& ids, const core::FinishedRequest& f,
                  const CompletionRequest& req, bool with_usage_null) {
    json j = envelope(ids, true);
    json choice = {{"index", 0},
                   {"finish_reason", openai_finish_reason(f.finish_reason)},
                   {"logprobs", logprobs_json(f, req)}};
    if (ids.route == Route::ChatCompletions)
        choice["delta"] = json::object();
    else
        choice["text"] = "";
    j["choices"] = json::array({choice});
    if (with_usage_null) j["usage"] = nullptr;
    return j;
}

json usage_chunk(const AnswerIds& ids, const core::FinishedRequest& f) {
    json j = envelope(ids, true);
    j["choices"] = json::array();
    j["usage"] = usage_json(f);
    return j;
}

std::string sse_event(const json& j) {
    return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

std::string sse_done() {
    return "data: [DONE]\n\n";
}

}  // namespace wb::server
