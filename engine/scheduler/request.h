#pragma once
// What a caller hands the scheduler (Request) and what it hears back
// (Event), one request at a time.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/request_metrics.h"
#include "sampling/logprobs.h"
#include "sampling/sampler.h"

namespace wb::scheduler {

/// Scheduler-assigned request number, unique per Scheduler, from 1.
using RequestId = uint64_t;

/// Why a request ended (the names are what logs and JSON use).
enum class FinishReason {
    Stop,       ///< EOS / end-of-generation token, or a stop string
    Length,     ///< max_tokens generated
    Context,    ///< the sequence reached the context size (n_ctx tokens), or it
                ///< alone filled the whole KV pool: shorten the conversation
    Timeout,    ///< queue-wait timeout or total timeout passed
    Cancelled,  ///< cancel() or Scheduler shutdown
    Rejected,   ///< the queue was full at submission
    Error,      ///< invalid request (empty prompt, prompt longer than the
                ///< context, max_tokens <= 0, n_parallel 0), a failed decode,
                ///< or logits that are not finite (the message names the step)
};

/// "stop", "length", "context", "timeout", "cancelled", "rejected", "error".
const char* to_string(FinishReason r);

/// What kind of error a FinishReason::Error is, for callers that act on it
/// (the chat offers to drop earlier turns when a prompt is too long); the
/// message is for people, and its wording may change.
enum class ErrorKind {
    None,           ///< not an error, or one no caller tells apart
    PromptTooLong,  ///< the prompt has more tokens than the context (n_ctx) holds
};

/// "none", "prompt_too_long".
const char* to_string(ErrorKind k);

/// Speculative decoding for one request (docs/speculative.md): a drafter
/// proposes up to k tokens, the target checks them all in one pass
/// (speculative::verify). Output is unchanged: token for token at
/// temperature <= 0, in distribution when sampling. Speculating requests
/// share each step's pass with the other running requests (continuous
/// batching; SpeculativeStats::shared_passes counts those passes).
struct SpeculativeParams {
    enum class Kind {
        None,        ///< plain decoding
        Ngram,       ///< prompt lookup (speculative::NgramDrafter), no second model
        DraftModel,  ///< the Scheduler's draft model (Scheduler::set_draft_model)
    };
    Kind kind = Kind::None;
    uint32_t k = 5;  ///< most draft tokens per pass (>= 1)
    /// Draft length per pass in [0, k] from the measured pass costs and
    /// this request's acceptance rate (speculative::DraftLength; 0 = no
    /// draft where speculation would lose); off: always k.
    bool adaptive = true;
    uint32_t ngram_min = 1, ngram_max = 3;  ///< Ngram: n-gram sizes tried, longest first
};

/// "none", "ngram", "draft_model".
const char* to_string(SpeculativeParams::Kind k);

/// What speculation did for one request (Finished events; zeros for a
/// request without speculation).
struct SpeculativeStats {
    std::string drafter;        ///< "ngram" or the draft model's label; "" = none
    int32_t target_passes = 0;  ///< decode passes of the target for this request
    int32_t verify_passes = 0;  ///< of which checked a non-empty draft
    int32_t shared_passes = 0;  ///< of which other requests had tokens in (with or without a draft)
    int32_t drafted = 0;        ///< draft tokens proposed and checked
    int32_t accepted = 0;       ///< of which the target kept
    double draft_ms = 0.0;      ///< time spent proposing (ms)
    double verify_ms = 0.0;     ///< time of the target passes that checked a draft (ms)
    /// Logits rows the target computed in this request's decode passes: one
    /// per pass (the fed token) plus its draft tokens (k + 1 for a verify
    /// pass). What the passes cost, in tokens of compute.
    int32_t decode_rows = 0;
    /// Output tokens those passes emitted (1 + accepted per verify pass,
    /// fewer when the request ended inside it; the prefill's first token is
    /// not counted). What the metrics' decode tokens/s count.
    int32_t decode_tokens = 0;
    /// accepted / drafted (0 when nothing was drafted).
    double acceptance_rate() const { return drafted > 0 ? double(accepted) / drafted : 0.0; }
    /// accepted / verify_passes: draft tokens kept per checking pass.
    double mean_accepted_per_pass() const {
        return verify_passes > 0 ? double(accepted) / verify_passes : 0.0;
    }
};

/// One generation request.
struct Request {
    /// Caller's label (e.g. the "id" of a prompts file line); echoed in every
    /// event. Not interpreted.
    std::string label;
    /// Prompt text, tokenized with the model vocab (BOS added as the vocab
    /// says, no special-token parsing). Ignored when prompt_tokens is set.
    std::string prompt;
    /// Pre-tokenized prompt (BOS included if wanted); used when non-empty.
    std::vector<int32_t> prompt_tokens;
    /// Most output tokens to generate; must be >= 1.
    int32_t max_tokens = 128;
    /// Sampling settings and seed; each request gets its own Sampler.
    sampling::SamplingParams sampling;
    /// Generation stops when the output contains one of these (the stop
    /// string is not part of the output). Empty strings are ignored.
    std::vector<std::string> stop;
    /// Keep generating after an end-of-generation token (it is then an
    /// ordinary output token), as llama.cpp's golden runs did.
    bool ignore_eos = false;
    /// Longest time (ms) the request may wait for a slot, from submission;
    /// negative = no limit. Checked before admission at every step, so 0
    /// always ends in the queue with Timeout (a deterministic test case).
    int64_t queue_timeout_ms = -1;
    /// Longest time (ms) from submission to the finish; negative = no limit.
    int64_t timeout_ms = -1;
    /// Log-probabilities to report per output token (sampling/logprobs.h):
    /// -1 none; 0 the chosen token's only; 1..20 also that many most likely
    /// tokens of the step. Other values make the request invalid (Error).
    int32_t top_logprobs = -1;
    /// Speculative decoding (off by default).
    SpeculativeParams speculative;
    /// Who submitted it ("batch", "chat", a server's API key, ...): the
    /// per-client concurrency limit (AdmissionLimits) counts running
    /// requests by this name. "" is a client like any other.
    std::string client;
};

/// What submit() returns at once (it never blocks on the engine).
struct SubmitResult {
    RequestId id = 0;       ///< also set for a refused request (its events use it)
    bool accepted = false;  ///< false: rejected (queue full) or invalid
    FinishReason reason = FinishReason::Error;  ///< when !accepted: Rejected or Error
    std::string message;                        ///< when !accepted: why, in words
    /// Refused because stop() was called: no event follows (every other
    /// refusal is followed by its Finished event).
    bool stopped = false;
};

enum class EventType {
    Queued,      ///< accepted into the queue
    Started,     ///< admitted to a slot; prefill begins (again after a Preempted)
    FirstToken,  ///< the first output token exists (time = TTFT point); a Token event follows
    Token,       ///< one output token
    Finished,    ///< the end, whatever the reason; always the request's last event
    /// The KV pool ran out of blocks for an older request: this one gave its
    /// blocks back and waits at the head of the queue; a Started follows
    /// when it is readmitted, and it resumes by recomputing its K/V (from
    /// the prefix cache where still there). Its sampler state and the
    /// tokens streamed so far are kept, so its output is what it would
    /// have been without the preemption.
    Preempted,
};

/// "queued", "started", "first_token", "token", "finished", "preempted".
const char* to_string(EventType t);

/// One event of one request. Fields beyond the first four are set only for
/// the event types noted.
struct Event {
    EventType type = EventType::Queued;
    RequestId id = 0;
    std::string label;     ///< Request::label
    double time_ms = 0.0;  ///< when it happened (ms, Scheduler::now_ms() clock)

    // Token (and FirstToken):
    int32_t token = -1;  ///< token id
    int32_t index = -1;  ///< 0-based position among the output tokens
    /// Text that may be shown now: complete UTF-8 only, and text that could
    /// begin a stop string is held back, so a piece may be "" and a later
    /// one may carry several tokens' text.
    std::string piece;
    /// Token, when Request::top_logprobs >= 0: the token's log-probability
    /// under the step's raw logits and the step's top_logprobs most likely
    /// tokens (FirstToken: not set).
    std::optional<sampling::TokenLogprobs> logprobs;

    // Started:
    int32_t slot = -1;  ///< KV-cache sequence id the request runs in
    /// Started: tokens whose K/V this admission took from the prefix cache
    /// (shared or taken-over blocks) instead of computing them.
    int32_t cached_tokens = 0;

    // Finished:
    FinishReason reason = FinishReason::Error;
    ErrorKind error_kind = ErrorKind::None;  ///< reason Error: what kind, when one is told apart
    std::string message;                     ///< details for error/timeout/rejected/cancelled
    std::vector<int32_t> prompt_tokens;      ///< [n_prompt] the prompt's token ids
    std::vector<int32_t>
        output_tokens;   ///< [n_out] generated ids (an EOS that stopped it excluded)
    std::string output;  ///< output text (cut before a stop string)
    /// [n_out] one per output_tokens entry when Request::top_logprobs >= 0,
    /// else empty.
    std::vector<sampling::TokenLogprobs> output_logprobs;
    /// Prompt tokens computed by prefill the first time through (after
    /// the ones taken from the prefix cache); cached + processed = prompt
    /// length once the first token exists.
    int32_t prompt_tokens_processed = 0;
    int32_t prompt_tokens_cached = 0;   ///< prompt tokens taken from the prefix cache
    int32_t preemptions = 0;            ///< times the request was preempted
    int32_t recomputed_tokens = 0;      ///< tokens computed again after preemptions
    metrics::RequestTimeline timeline;  ///< submitted/admitted/token/finished times
    metrics::RequestMetrics metrics;    ///< queue wait, TTFT, ITLs, TPOT, e2e (ms)
    SpeculativeStats speculative;       ///< when Request::speculative asked for it
};

}  // namespace wb::scheduler
