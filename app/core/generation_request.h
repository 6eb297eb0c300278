#pragma once
// GenerationRequest: what every surface (chat, batch, compare, the CLI, a
// future OpenAI-compatible server or load test) asks the engine for, in one
// type. EngineSession::submit takes it; the session renders, tokenizes,
// seeds and schedules it, and reports back a FinishedRequest.
//
// Qt-free.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "core/token_logprobs.h"
#include "sampling/sampler.h"
#include "scheduler/request.h"

namespace wb::core {

/// How a request's RNG seed is chosen. The seed actually used is always
/// reported back (RequestHandle::seed, FinishedRequest::seed) and logged.
enum class SeedPolicy {
    Fixed,          ///< SeedSpec::value
    Random,         ///< a fresh draw per request (std::random_device, 63 bits)
    BasePlusIndex,  ///< SeedSpec::value + SeedSpec::index (a batch: base + the prompt's index)
};

/// "fixed", "random", "base+index" (the run log's settings.seed_policy).
const char* to_string(SeedPolicy p);

struct SeedSpec {
    SeedPolicy policy = SeedPolicy::Fixed;
    uint64_t value = 0;  ///< the seed (Fixed) or the base (BasePlusIndex)
    uint64_t index = 0;  ///< BasePlusIndex: added to value (wrapping mod 2^64)
};

/// The seed `s` gives. Random draws below 2^63, so it prints back as a
/// signed --seed. Never throws.
uint64_t resolve_seed(const SeedSpec& s);

/// What the prompt was given as.
enum class PromptMode {
    Raw,     ///< `prompt` text, tokenized with BOS as the vocabulary asks
    Chat,    ///< `messages`, rendered by the chat template the request names (app/chat)
    Tokens,  ///< `prompt_tokens`, used as given
};

/// "raw", "chat", "tokens" (the run log's settings.prompt_mode).
const char* to_string(PromptMode m);

/// One generation request: its prompt (exactly one of messages, prompt and
/// prompt_tokens is set), the chat template that renders messages, its stop
/// strings and sampling settings. Everything a request needs travels with
/// it; the session holds no per-request state.
struct GenerationRequest {
    std::vector<chat::Message> messages;  ///< chat conversation, rendered to a prompt
    /// The template that renders `messages`: "model" (or "") for the GGUF's
    /// own tokenizer.chat_template, "none" for plain text, or a built-in's
    /// short name ("chatml", "llama3", ...; chat::builtin_format_by_name).
    /// chat::choose_template decides: a model without a template of its own
    /// gets plain text (chat::plain_text_prompt), one whose template is
    /// unusable a built-in, each with a note (PreparedRequest::template_note). A request without
    /// messages (a raw prompt or tokens) has no template and ignores it; an unknown name refuses
    /// the request.
    std::string chat_template = "model";
    /// Chat mode: extra template variables (a JSON object, e.g.
    /// {"enable_thinking": false}); chat::build_prompt's `extra`.
    nlohmann::ordered_json chat_vars = nlohmann::ordered_json::object();
    std::string prompt;                  ///< plain prompt text (UTF-8)
    std::vector<int32_t> prompt_tokens;  ///< [n_prompt] token ids, BOS included if wanted

    /// Temperature, top-k/p, min-p, repetition penalty. The `seed` field is
    /// ignored: `seed` below decides it.
    sampling::SamplingParams sampling;
    int32_t max_tokens = 128;       ///< most output tokens (>= 1)
    std::vector<std::string> stop;  ///< stop strings (not part of the output); "" ignored
    bool ignore_eos = false;        ///< keep generating after an end-of-generation token
    SeedSpec seed;                  ///< how the RNG seed is chosen
    /// Per-token log-probabilities (core/token_logprobs.h): -1 none; 0 the
    /// chosen token's log-probability only; 1..20 (kMaxTopLogprobs) also
    /// that many most likely tokens per step. Costs O(n_vocab) per token
    /// only when >= 0. Reported in RequestEvent::logprobs and
    /// FinishedRequest::logprobs.
    int32_t top_logprobs = -1;
    /// Speculative decoding (docs/speculative.md): n-gram drafts, or the
    /// session's draft model (SessionOptions::draft_model). Off by default.
    scheduler::SpeculativeParams speculative;
    int64_t queue_timeout_ms = -1;  ///< longest wait for a slot from submit; < 0 = none
    int64_t timeout_ms = -1;        ///< longest submit-to-finish time; < 0 = none

    /// Who asks ("chat", "batch", "compare", an API key): the session's
    /// per-client concurrency limit counts by it.
    std::string client_id;
    /// Run-log run this response belongs to (RunLog::begin_run); 0 = not logged.
    int64_t run_id = 0;
    /// The caller's id of this request, logged as request_id ("line-3", "chat-2").
    std::string label;
    /// Surface-specific facts logged with the request's settings
    /// (responses.settings), e.g. the server's {"api_route", "client_addr"}:
    /// a JSON object whose keys settings_json adds to its own; a key that
    /// settings_json already writes keeps settings_json's value, so every
    /// surface's standard keys mean the same. Not used by the engine.
    nlohmann::json log_settings = nlohmann::json::object();
};

/// Chat when messages are set, Tokens when prompt_tokens are, else Raw.
PromptMode prompt_mode(const GenerationRequest& r);

/// "" when `r` can be submitted, else why not: more than one prompt form
/// set, none set, max_tokens < 1, top_logprobs outside -1..20.
std::string validate(const GenerationRequest& r);

}  // namespace wb::core
