#pragma once
// FinishedRequest: everything known about one request when it ends, the
// same for every surface. It is the only input of the run-log row builder
// (response_log.h), and the timing fields below are defined here once:
//
//   submitted    submit() (the request enters the queue)
//   admitted     a slot took it; prefill starts
//   first token  the first output token was sampled
//   last token   the last output token was sampled
//   finished     the request ended (any reason)
//
//   queue_wait_ms = admitted - submitted
//   prefill_ms    = first token - admitted   (the prompt's forward passes,
//                   possibly in chunks between other requests' decode steps,
//                   plus sampling the first token)
//   ttft_ms       = first token - submitted  = queue_wait_ms + prefill_ms
//   decode_ms     = last token - first token
//   tpot_ms       = (e2e_ms - ttft_ms) / (output tokens - 1)   (vLLM's TPOT)
//   e2e_ms        = finished - submitted
//   prefill_tps   = prompt tokens / prefill_ms (tokens/s)
//   decode_tps    = (output tokens - 1) / decode_ms (tokens/s)
//
// TTFT counts from submission, as vLLM's serving benchmark does. A value
// that does not exist (never admitted, no token, one token) is nullopt.
// Qt-free.

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/generation_request.h"
#include "core/settings_json.h"
#include "model/model.h"
#include "scheduler/request.h"

namespace wb::core {

/// Time points of one request, in ms on one monotonic clock (the session's);
/// NaN where the request never got there.
struct RequestTimes {
    double submitted_ms = 0.0;
    double admitted_ms = NAN;
    double first_token_ms = NAN;
    double last_token_ms = NAN;
    double finished_ms = NAN;
    std::vector<double> itl_ms;  ///< [output tokens - 1] gaps between tokens (may be empty)
};

struct FinishedRequest {
    /// The session it ran in, unique within the process (request ids
    /// restart with every session); with `id` it names the request.
    uint64_t session_id = 0;
    uint64_t id = 0;        ///< the session's request id (RequestHandle::id)
    std::string label;      ///< GenerationRequest::label
    std::string client_id;  ///< GenerationRequest::client_id
    int64_t run_id = 0;     ///< GenerationRequest::run_id (0 = not logged)

    PromptMode mode = PromptMode::Raw;
    std::vector<chat::Message> messages;  ///< Chat mode: the conversation
    /// The prompt text the model saw: the raw prompt, the rendered chat
    /// prompt, or "" for Tokens mode.
    std::string prompt;
    std::vector<int32_t> prompt_tokens;  ///< [n_prompt]
    /// Prompt tokens whose K/V came from the prefix cache (first admission;
    /// at Started: what that admission found).
    int32_t prompt_tokens_cached = 0;
    /// Prompt tokens computed by prefill the first time through; cached +
    /// computed = n_prompt once the first token exists.
    int32_t prompt_tokens_computed = 0;
    int32_t preemptions = 0;  ///< times the KV pool took its blocks back
    /// What speculative decoding did (drafted, accepted, passes, draft and
    /// verify ms); empty drafter when the request did not speculate.
    scheduler::SpeculativeStats speculative;
    /// The model's training context in tokens (model::HParams::n_ctx_train,
    /// the GGUF's <arch>.context_length; 0 = not in the file).
    uint32_t n_ctx_train = 0;
    /// True when the sequence went past the training context: prompt tokens
    /// + output tokens > n_ctx_train > 0 (at Started: the prompt alone).
    /// Output past it is unreliable (llama.cpp warns "possible training
    /// context overflow"); logged as responses.settings.past_n_ctx_train.
    bool past_n_ctx_train = false;
    std::vector<int32_t>
        output_tokens;   ///< [n_out] (an end-of-generation token that stopped it excluded)
    std::string output;  ///< text, cut before a stop string
    /// [n_out] each output token's log-probability and its step's most
    /// likely tokens (GenerationRequest::top_logprobs >= 0); empty when not
    /// requested.
    std::vector<TokenLogprobs> logprobs;

    /// "stop" | "length" | "timeout" | "cancelled" | "rejected" | "error"
    /// ("interrupted" in the Started event's snapshot: not finished yet).
    std::string finish_reason = "error";
    std::string message;  ///< detail: which stop, which timeout, why refused (for people)
    /// finish_reason "error": what kind, where callers act on it (never
    /// match `message`'s wording).
    scheduler::ErrorKind error_kind = scheduler::ErrorKind::None;
    bool refused = false;  ///< refused at submission (never queued): invalid or queue full

    uint64_t seed = 0;  ///< the RNG seed it ran with
    SeedPolicy seed_policy = SeedPolicy::Fixed;
    /// How the prompt became ids (template, add_bos, pre-tokenizer, parse_special).
    PromptFacts prompt_facts;
    /// The response's settings (core/settings_json.h): one JSON object,
    /// numbers as numbers, logged as responses.settings.
    nlohmann::json settings = nlohmann::json::object();

    RequestTimes times;
    int64_t submitted_utc_ms = 0;  ///< submit time, ms since the Unix epoch (UTC)

    std::string model_path;     ///< the GGUF the session loaded
    model::DeviceFacts device;  ///< where it ran (the environment row)

    bool admitted() const { return !std::isnan(times.admitted_ms); }
    bool completed() const { return finish_reason == "stop" || finish_reason == "length"; }
    /// The conversation outgrew the context: it reached the context size
    /// (finish reason "context") or its prompt alone was longer (refused,
    /// error kind PromptTooLong). Dropping earlier turns is the remedy.
    bool context_full() const {
        return finish_reason == "context" ||
               (finish_reason == "error" && error_kind == scheduler::ErrorKind::PromptTooLong);
    }

    // The definitions at the top of this file.
    std::optional<double> queue_wait_ms() const;
    std::optional<double> prefill_ms() const;
    std::optional<double> ttft_ms() const;
    std::optional<double> decode_ms() const;
    std::optional<double> tpot_ms() const;
    std::optional<double> e2e_ms() const;
    std::optional<double> prefill_tps() const;
    std::optional<double> decode_tps() const;
    /// finished time in UTC ms (submitted_utc_ms + e2e), nullopt if unknown.
    std::optional<int64_t> finished_utc_ms() const;
};

}  // namespace wb::core
