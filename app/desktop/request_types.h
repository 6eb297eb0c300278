#pragma once
// Qt-side value types that carry one request and its outcome between the
// engine bridge (which talks to the scheduler on the engine thread) and the
// widgets (which live on the GUI thread). Copied through queued signals, so
// they are registered metatypes.

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "desktop/gen_settings.h"
#include "scheduler/request.h"

namespace wb::core {
class PreparedRequest;
}

namespace wb::gui {

/// One request for the scheduler.
struct RequestSpec {
    QString id;     ///< caller's id, unique among requests in flight ("chat-3", "batch2:p17")
    QString label;  ///< id shown and logged (the prompt set's id); empty = id
    /// Plain prompt text (BOS as the vocabulary says, no special tokens),
    /// used when `messages` is empty.
    QString prompt;
    /// A chat conversation, rendered by the session with the chat template
    /// `chat_template` names and tokenized with special tokens parsed
    /// (chat::build_prompt, as `workbench-cli generate --chat`).
    std::vector<chat::Message> messages;
    /// "model" (the GGUF's tokenizer.chat_template) or a built-in's short
    /// name ("chatml", ...); used with `messages`.
    QString chat_template = QStringLiteral("model");
    /// The session's rendering of this prompt made for a preview (the
    /// Chat tab's meter; EngineSession::prepare): when set and made by the
    /// loaded session, it is what runs (its ids, not a second rendering)
    /// with the settings below; else messages / prompt are rendered again.
    std::shared_ptr<const core::PreparedRequest> prepared;
    GenSettings settings;  ///< sampling settings; settings.max_tokens is the limit
    /// Stop strings sent to a remote target (RemoteClient); the local
    /// session takes a batch line's own through core::BatchRunner.
    std::vector<std::string> stop;
    /// How the request's seed is chosen: Fixed = settings.seed, Random = a
    /// fresh draw by the session (reported back in the result's settings
    /// and logged as seed_policy "random").
    core::SeedPolicy seed_policy = core::SeedPolicy::Fixed;
    int queue_timeout_ms = 0;  ///< max wait for a slot, 0 = none
    int total_timeout_ms = 0;  ///< max submit-to-finish time, 0 = none
    qint64 run_id = 0;         ///< run-log run this response belongs to; 0 = not logged
    /// Speculative decoding (docs/speculative.md): n-gram drafts, or the
    /// session's draft model (LoadRequest::draft_model). Off by default.
    scheduler::SpeculativeParams speculative;
};

/// What became of a request. Times in ms from the request's submit time
/// (vLLM benchmark definitions: TTFT is measured from submit, not from
/// admission; TPOT = (e2e - TTFT) / (generated tokens - 1)).
struct RequestResult {
    QString id;
    QString label;      ///< copied from RequestSpec::label
    qint64 run_id = 0;  ///< copied from RequestSpec::run_id
    QString prompt;     ///< the prompt the model saw (a chat: rendered by its template)
    /// How a chat prompt became ids: prompt_mode "chat", chat_template,
    /// chat_template_sha256, add_bos, pre_tokenizer, parse_special (as in
    /// the run log's settings). Empty for a plain prompt.
    QJsonObject prompt_format;
    QString output;
    QList<int> token_ids;  ///< generated token ids, in order
    /// stop | length | context | timeout | cancelled | rejected | error
    /// (context: the conversation reached the context size; length: max tokens)
    QString finish_reason;
    QString error;  ///< message when finish_reason is not stop / length
    /// The conversation outgrew the context (core::FinishedRequest::context_full):
    /// it reached the context size, or its prompt alone was longer and it
    /// was refused. Acted on by kind, never by the error's wording.
    bool context_full = false;
    int prompt_tokens = 0;
    /// Prompt tokens whose K/V came from the prefix cache (a chat's earlier
    /// turns, a shared system prompt); -1 when the request never started.
    int prompt_cached_tokens = -1;
    int preemptions = 0;  ///< times it gave its KV blocks back and recomputed them
    /// The model's training context in tokens (core::FinishedRequest::n_ctx_train; 0 = unknown).
    int n_ctx_train = 0;
    /// Prompt + output tokens went past n_ctx_train (> 0): output past it is
    /// unreliable (core::FinishedRequest::past_n_ctx_train).
    bool past_n_ctx_train = false;
    int generated_tokens = 0;
    double queue_wait_ms = 0;
    double ttft_ms = -1;  ///< -1 when no token was produced
    double tpot_ms = -1;  ///< -1 when fewer than 2 tokens
    double e2e_ms = 0;
    double prefill_tps = 0;    ///< prompt tokens / prefill time (tokens/s)
    double decode_tps = 0;     ///< (generated - 1) / decode time (tokens/s)
    qint64 start_utc_ms = 0;   ///< submit time, ms since the Unix epoch (UTC)
    qint64 finish_utc_ms = 0;  ///< finish time, ms since the Unix epoch (UTC)
    GenSettings settings;      ///< settings the request ran with
    /// What the request asked of speculation (copied from RequestSpec).
    scheduler::SpeculativeParams speculative_asked;
    /// What speculation did (drafted, accepted, passes, draft / verify ms);
    /// empty drafter when the request did not speculate.
    scheduler::SpeculativeStats speculative;
    /// A remote target's request (RemoteClient): the endpoint's base URL;
    /// "" for the loaded model.
    QString target_url;
    /// The model the endpoint says it ran (the answer's "model"); "" locally.
    QString served_model;
    /// Where generated_tokens came from on a remote target: "usage" (the
    /// endpoint's count), "tokenizer" or "chunks" (content chunks counted:
    /// approximate); "" locally (the engine's own count).
    QString tokens_source;
    /// A remote request's inter-token latencies as the client saw them (ms,
    /// gaps between content chunks); empty locally (the metrics store has them).
    std::vector<double> itl_ms;
};

/// Engine memory by purpose (bytes) and what the driver reports, if anything.
struct MemoryUse {
    double weights = 0;
    double kv_cache = 0;
    double activations = 0;
    double staging = 0;
    double device_usage = -1;   ///< VK_EXT_memory_budget heap usage, -1 = not reported
    double device_budget = -1;  ///< VK_EXT_memory_budget heap budget, -1 = not reported
    /// The engine's memory is host memory (the CPU backend): there is no
    /// device heap, so no driver usage or budget to report.
    bool host = false;
    double total() const { return weights + kv_cache + activations + staging; }
};

/// One request's latency sample for the live charts: recorded `t_s`
/// seconds after the model loaded, `ms` long (TTFT or end-to-end).
struct LatencyEvent {
    double t_s = 0;
    double ms = 0;
};

/// One request's first prefill for the live charts, `t_s` seconds after the
/// model loaded: `cached_tokens` of its `prompt_tokens` came from the
/// prefix cache.
struct PrefixEvent {
    double t_s = 0;
    double prompt_tokens = 0;
    double cached_tokens = 0;
};

/// One sample of the live metrics, taken on the GUI thread at ~10 Hz from
/// the engine's thread-safe metrics snapshot. Latencies in ms over the
/// metrics store's sliding window; -1 where there are no samples yet.
struct LiveSnapshot {
    double t_s = 0;  ///< seconds since the model was loaded
    MemoryUse memory;
    double ttft_p50 = -1, ttft_p95 = -1, ttft_p99 = -1;
    double e2e_p50 = -1, e2e_p95 = -1, e2e_p99 = -1;
    /// Span of decode_tps (s): the last 2 s, counted over the part of it in
    /// which the engine was generating.
    static constexpr double kThroughputWindowS = 2.0;
    /// Output tokens / active generation time within the last
    /// kThroughputWindowS (tokens/s; 0 when nothing ran in it). For one
    /// request this matches RequestResult::decode_tps.
    double decode_tps = 0;
    int queued = 0;   ///< requests waiting for a slot
    int running = 0;  ///< requests in slots
    int kv_cells_used = 0;
    /// Prompt tokens taken from the prefix cache / all prompt tokens of the
    /// requests whose prefill ended in the window (0..1); -1 = none yet.
    double prefix_hit_rate = -1;
    bool busy = false;  ///< the engine thread has work
    /// The per-request samples recorded since the time the caller asked
    /// for (EngineBridge::snapshot's cursor), so the charts can
    /// compute any window over them: TTFT at the first token, e2e at a
    /// completed request's finish, prefix-cache counts at the first prefill.
    std::vector<LatencyEvent> ttft_events;
    std::vector<LatencyEvent> e2e_events;
    std::vector<PrefixEvent> prefix_events;
};

}  // namespace wb::gui

Q_DECLARE_METATYPE(wb::gui::RequestResult)
Q_DECLARE_METATYPE(wb::gui::LiveSnapshot)
