#include "server/responses.h"

#include <algorithm>
#include <cmath>
#include <span>

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

json timings_json(const core::FinishedRequest& f) {
    const auto ms = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    return {{"queue_ms", ms(f.queue_wait_ms())},
            {"ttft_ms", ms(f.ttft_ms())},
            {"prompt_n", f.prompt_tokens_computed},
            {"cache_n", f.prompt_tokens_cached},
            {"prompt_ms", ms(f.prefill_ms())},
            {"predicted_n", static_cast<int64_t>(f.output_tokens.size())},
            {"predicted_ms", ms(f.decode_ms())}};
}

namespace {

double openai_logprob(float lp) {
    return std::isfinite(lp) ? static_cast<double>(lp) : -9999.0;
}

json bytes_of(const std::string& piece) {
    json b = json::array();
    for (const char c : piece) b.push_back(static_cast<unsigned char>(c));
    return b;
}

}  // namespace

json logprobs_json(const core::FinishedRequest& f, const CompletionRequest& req,
                   const AnswerIds& ids) {
    if (!req.logprobs || ids.vocab == nullptr || f.logprobs.empty()) return nullptr;
    const tokenizer::Vocab& vocab = *ids.vocab;
    auto piece = [&](int32_t id) { return vocab.token_to_piece(id, /*special=*/true); };
    // The engine may have been asked for more alternatives than the client
    // (a canary's shadow pair): answer what the client asked for.
    const auto n_top = static_cast<size_t>(std::max(req.top_logprobs, 0));
    auto top_of = [n_top](const core::TokenLogprobs& step) {
        return std::span<const core::TokenLogprob>(step.top.data(),
                                                   std::min(step.top.size(), n_top));
    };
    if (ids.route == Route::ChatCompletions) {
        json content = json::array();
        for (const core::TokenLogprobs& step : f.logprobs) {
            const std::string p = piece(step.token);
            json top = json::array();
            for (const core::TokenLogprob& t : top_of(step)) {
                const std::string tp = piece(t.token);
                top.push_back({{"token", tp},
                               {"logprob", openai_logprob(t.logprob)},
                               {"bytes", bytes_of(tp)}});
            }
            content.push_back({{"token", p},
                               {"logprob", openai_logprob(step.logprob)},
                               {"bytes", bytes_of(p)},
                               {"top_logprobs", top}});
        }
        return {{"content", content}, {"refusal", nullptr}};
    }
    json tokens = json::array(), token_logprobs = json::array(), top_logprobs = json::array(),
         text_offset = json::array();
    size_t offset = 0;
    for (const core::TokenLogprobs& step : f.logprobs) {
        const std::string p = piece(step.token);
        tokens.push_back(p);
        token_logprobs.push_back(openai_logprob(step.logprob));
        json top = json::object();
        for (const core::TokenLogprob& t : top_of(step))
            top[piece(t.token)] = openai_logprob(t.logprob);
        top_logprobs.push_back(top);
        text_offset.push_back(offset);
        offset += p.size();
    }
    return {{"tokens", tokens},
            {"token_logprobs", token_logprobs},
            {"top_logprobs", top_logprobs},
            {"text_offset", text_offset}};
}

json full_response(const AnswerIds& ids, const core::FinishedRequest& f,
                   const CompletionRequest& req) {
    json j = envelope(ids, false);
    json choice = {{"index", 0},
                   {"finish_reason", openai_finish_reason(f.finish_reason)},
                   {"logprobs", logprobs_json(f, req, ids)}};
    if (ids.route == Route::ChatCompletions)
        choice["message"] = {{"role", "assistant"}, {"content", f.output}, {"refusal", nullptr}};
    else
        choice["text"] = f.output;
    j["choices"] = json::array({choice});
    j["usage"] = usage_json(f);
    j["timings"] = timings_json(f);
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
                   {"logprobs", logprobs_json(f, req, ids)}};
    if (ids.route == Route::ChatCompletions)
        choice["delta"] = json::object();
    else
        choice["text"] = "";
    j["choices"] = json::array({choice});
    if (with_usage_null) j["usage"] = nullptr;
    j["timings"] = timings_json(f);
    return j;
}

json usage_chunk(const AnswerIds& ids, const core::FinishedRequest& f) {
    json j = envelope(ids, true);
    j["choices"] = json::array();
    j["usage"] = usage_json(f);
    return j;
}

json passes_json(const std::string& model, const std::vector<metrics::PassTelemetry>& passes,
                 double now_ms, uint64_t from, uint64_t end) {
    json rows = json::array();
    for (const metrics::PassTelemetry& p : passes) {
        rows.push_back({p.index, p.end_ms, p.duration_ms, p.batch, p.prefill_tokens,
                        p.decode_tokens, p.queued, p.kv_blocks_used, p.kv_blocks_total,
                        p.preemptions});
    }
    return {{"object", "scheduler.passes"},
            {"model", model},
            {"now_ms", now_ms},
            {"next", passes.empty() ? std::min(from, end) : passes.back().index + 1},
            {"end", end},
            {"columns",
             {"index", "end_ms", "duration_ms", "batch", "prefill_tokens", "decode_tokens",
              "queued", "kv_blocks_used", "kv_blocks_total", "preemptions"}},
            {"passes", std::move(rows)}};
}

std::string sse_event(const json& j) {
    return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

std::string sse_done() {
    return "data: [DONE]\n\n";
}

}  // namespace wb::server
