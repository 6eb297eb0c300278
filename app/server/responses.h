#pragma once
// The JSON bodies and server-sent-event chunks the server answers with,
// shaped as OpenAI's API sends them (API reference: "The chat completion
// object", "The chat completion chunk object", "The completion object"),
// built from what the engine reported (core::FinishedRequest). Pure
// functions, no I/O.
// Qt-free.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/finished_request.h"
#include "metrics/metrics_store.h"
#include "server/request_parse.h"
#include "tokenizer/vocab.h"

namespace wb::server {

/// What every chunk and body of one answer shares.
struct AnswerIds {
    std::string id;       ///< "chatcmpl-<n>" or "cmpl-<n>"
    int64_t created = 0;  ///< Unix time in seconds
    std::string model;    ///< the served model's public name
    Route route = Route::ChatCompletions;
    /// Spells the tokens of `logprobs` (token_to_piece, special tokens as
    /// their text); null: logprobs are answered as null.
    const tokenizer::Vocab* vocab = nullptr;
};

/// OpenAI's finish reason for the engine's: "stop" stays, "length" and
/// "context" (the context is full) are "length". Anything else (the
/// request did not complete) is returned as it is.
std::string openai_finish_reason(const std::string& engine_reason);

/// {"prompt_tokens", "completion_tokens", "total_tokens",
///  "prompt_tokens_details": {"cached_tokens"}} of `f` (tokens: the prompt
/// as run, the output without an end-of-generation token that stopped it,
/// the prompt tokens whose K/V came from the prefix cache).
nlohmann::json usage_json(const core::FinishedRequest& f);

/// The request's timings as the engine measured them, an extension beside
/// "usage" (OpenAI sends none; the names follow llama-server's `timings`
/// object, plus queue_ms and ttft_ms): {"queue_ms" (submitted -> a slot
/// took it), "ttft_ms" (submitted -> first token), "prompt_n" (prompt
/// tokens computed), "cache_n" (prompt tokens from the prefix cache),
/// "prompt_ms" (admitted -> first token), "predicted_n" (output tokens),
/// "predicted_ms" (first -> last token; null under 2 tokens)}, ms on the server's clock (the
/// definitions in core/finished_request.h); a time the request never
/// reached is null. A load test reads queue_ms as the queue wait the
/// target reports (app/load/answer_reader.h).
nlohmann::json timings_json(const core::FinishedRequest& f);

/// The `logprobs` of a choice, from f.logprobs (the log-softmax of the
/// model's raw logits at each output step, core::TokenLogprobs), shaped as
/// OpenAI's API: chat {"content": [{token, logprob, bytes, top_logprobs:
/// [{token, logprob, bytes}]}], "refusal": null}; completions (legacy)
/// {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}
/// with text_offset in bytes from the start of the completion text. A
/// -inf log-probability (a token the model rules out) is -9999.0, OpenAI's
/// value for "very unlikely". Null when the request did not ask
/// (req.logprobs false), ids.vocab is null, or f has none (refused).
nlohmann::json logprobs_json(const core::FinishedRequest& f, const CompletionRequest& req,
                             const AnswerIds& ids);

/// The non-streaming body: one choice with the whole text (chat: message
/// {role "assistant", content}; completions: text), finish_reason, logprobs,
/// usage and timings (timings_json).
nlohmann::json full_response(const AnswerIds& ids, const core::FinishedRequest& f,
                             const CompletionRequest& req);

/// A streamed chunk with `text` (chat: delta {"content": text}, the first
/// chunk also "role": "assistant"; completions: "text") and no finish
/// reason. `with_usage_null`: the chunk carries "usage": null, as OpenAI's
/// does when stream_options.include_usage is set.
nlohmann::json text_chunk(const AnswerIds& ids, const std::string& text, bool first,
                          bool with_usage_null);

/// The last chunk of the choice: empty delta (chat) or "" text, its finish
/// reason and logprobs, and the request's timings (timings_json).
nlohmann::json finish_chunk(const AnswerIds& ids, const core::FinishedRequest& f,
                            const CompletionRequest& req, bool with_usage_null);

/// The usage chunk after the finish chunk (stream_options.include_usage):
/// "choices": [] and "usage".
nlohmann::json usage_chunk(const AnswerIds& ids, const core::FinishedRequest& f);

/// The body of GET /scheduler/passes (scheduler telemetry, an extension of
/// ours): {"object": "scheduler.passes", "model", "now_ms" (the engine's
/// clock now, ms: a client aligns end_ms to its own clock with it), "next"
/// (the index to ask for next), "end" (`end`: the index after the last
/// pass the engine has recorded, so a client can start from now), "columns": ["index", "end_ms",
/// "duration_ms", "batch", "prefill_tokens", "decode_tokens", "queued",
/// "kv_blocks_used", "kv_blocks_total", "preemptions"], "passes": one array
/// per pass in that order (metrics::PassTelemetry)}. `next` is the last
/// pass's index + 1, or min(`from`, `end`) when there is none (never past
/// the passes recorded).
nlohmann::json passes_json(const std::string& model,
                           const std::vector<metrics::PassTelemetry>& passes, double now_ms,
                           uint64_t from, uint64_t end);

/// One server-sent event: "data: <json>\n\n" (the WHATWG HTML "server-sent
/// events" format; the JSON is on one line, invalid UTF-8 replaced).
std::string sse_event(const nlohmann::json& j);

/// The stream's end: "data: [DONE]\n\n", as OpenAI's API ends it.
std::string sse_done();

}  // namespace wb::server
