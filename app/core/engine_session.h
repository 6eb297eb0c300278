#pragma once
// EngineSession: the one door to the engine. It owns a loaded model, its
// vocabulary and the continuous-batching scheduler (one engine thread), and
// every surface (chat, batch, compare, the CLI, a future server or load
// test) submits GenerationRequests to it:
//
//   auto s = EngineSession::open(path, opts);
//   RequestHandle h = s->submit(request, [](const RequestEvent& e) { ... });
//   h.cancel();                       // any thread
//
// Each request has its own event sink, so two surfaces sharing a session
// never see each other's events. The KV capacity (slots, cells) is fixed
// when the model is loaded; the admission limits (requests running at once,
// per-client concurrency, the queue bound) change while requests run
// (set_admission, set_client_limit), so a server and the GUI's Batch tab
// can share one session without rebuilding the scheduler or waiting for
// each other.
//
// The session also logs: every request with a run id reaches the session's
// RequestRecorder (set_recorder; the run log's ResponseLogger), whichever
// surface submitted it, so no surface wires its events into the run log.
//
// Threads: every method may be called from any thread, including from a
// sink (wait_idle and shutdown from a sink do not wait for the sinks).
// Events leave the engine thread at once and are delivered on the session's
// delivery thread, one event at a time in the order they happened (per
// request: Queued, Started, Token..., Finished; a refused request gets only
// Finished; the Finished event is always the last): first to the recorder,
// then to the request's sink. So a recorder may write to a database without
// slowing the engine, and a sink that hears Finished knows its row is
// written. Sinks must be cheap and never block (post the event to a UI
// thread or a queue): they hold up every other request's delivery.
// Qt-free.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "core/finished_request.h"
#include "core/generation_request.h"
#include "core/session_stats.h"
#include "core/settings_json.h"
#include "loader/load.h"
#include "metrics/metrics_store.h"
#include "scheduler/scheduler.h"
#include "tokenizer/vocab.h"

namespace wb::core {

/// How a session loads and schedules.
struct SessionOptions {
    /// Backend, device and context: context.n_ctx is the KV cells of all
    /// slots together, context.n_seq_max the slots (fixed capacity).
    model::LoadOptions load;
    uint32_t prefill_chunk = 64;  ///< most prompt tokens of one request per step
    uint32_t step_tokens = 256;   ///< token budget of one ubatch (raised to the slots if smaller)
    /// Initial admission limits (queue bound 64, every slot, no per-client limit).
    scheduler::AdmissionLimits limits;
    /// A draft model for speculative decoding (GenerationRequest::
    /// speculative with Kind::DraftModel): its path, "" for none. Loaded
    /// with `load`'s backend and context; open() throws
    /// std::invalid_argument when its vocabulary is not the model's
    /// (speculative::check_same_vocab names the first differing token).
    std::string draft_model;
    /// How the model is built from the path and `load` (default
    /// model::load_model); tests count loads through it.
    std::function<std::unique_ptr<model::Model>(const std::string&, const model::LoadOptions&)>
        loader;
};

/// Where EngineSession::open's time went: the cold start up to a ready
/// session, in ms on the steady clock. The first token comes
/// later: open until a request's first token = clock_zero_ms + its
/// FinishedRequest::times.first_token_ms (the session clock).
struct SessionLoadTimes {
    int64_t opened_utc_ms = 0;  ///< when open() began, UTC ms since the Unix epoch
    double vocab_ms = 0;        ///< mapping the file, reading the vocabulary and chat template
    /// The model's own phases (model::load_model_timed). With a custom
    /// SessionOptions::loader they are not known: phases_known false, only
    /// model_load_ms.
    model::LoadTimings model;
    bool phases_known = false;
    double model_load_ms = 0;  ///< the whole model load (the loader's call)
    double ready_ms = 0;       ///< open() began until the scheduler runs
    double clock_zero_ms = 0;  ///< open() began until the session clock's zero (now_ms() = 0)
};

/// One event of one request.
struct RequestEvent {
    enum class Type {
        Queued,    ///< accepted into the queue
        Started,   ///< a slot took it; prefill begins (once per request)
        Token,     ///< one output token
        Finished,  ///< the end, whatever the reason; `result` says everything
        /// The KV pool ran out of blocks for an older request: this one gave
        /// its blocks back and waits at the head of the queue. Its output so
        /// far stays; a Resumed follows (scheduler::EventType::Preempted).
        Preempted,
        /// Readmitted after a Preempted: its K/V is computed again (from the
        /// prefix cache where still there), then tokens continue.
        Resumed,
    };
    Type type = Type::Queued;
    uint64_t id = 0;       ///< RequestHandle::id
    double time_ms = 0.0;  ///< session clock (EngineSession::now_ms)
    // Token:
    int32_t token = -1;  ///< token id
    int32_t index = -1;  ///< 0-based position among the output tokens
    /// Text that may be shown now: complete UTF-8 only; text that might
    /// begin a stop string is held back ("" is common). The Finished event
    /// carries the rest in `piece` too.
    std::string piece;
    /// Token, when GenerationRequest::top_logprobs >= 0: this token's
    /// log-probability and its step's top_logprobs most likely tokens.
    std::optional<TokenLogprobs> logprobs;
    /// Started: the request as it is admitted (ids, prompt, prompt tokens,
    /// seed, settings, submit and admission times; finish_reason
    /// "interrupted", no output), for a run-log row written now
    /// (ResponseLogger::start). Finished: everything about it.
    std::shared_ptr<const FinishedRequest> result;
};

/// Receives one request's events (delivery thread; see the top of this file).
using EventSink = std::function<void(const RequestEvent&)>;

/// Where a session records every request that has a run id
/// (GenerationRequest::run_id != 0): the run log (core::ResponseLogger),
/// whatever surface submitted it. Called on the session's delivery thread,
/// before the request's own sink hears the same event, in order per request
/// (started, text..., finished; a request refused or cancelled before it
/// started gets only finished). May block (a database write holds up
/// delivery, never the engine); must not throw.
class RequestRecorder {
  public:
    virtual ~RequestRecorder() = default;
    /// The request started: its Started event's snapshot (finish reason
    /// "interrupted" until it finishes).
    virtual void request_started(const std::shared_ptr<const FinishedRequest>& started) = 0;
    /// Its text so far (`output`, `tokens` tokens) at `now_ms` on the session
    /// clock, after each token; `started` as given to request_started.
    virtual void request_text(const std::shared_ptr<const FinishedRequest>& started,
                              const std::string& output, int64_t tokens, double now_ms) = 0;
    /// The request ended: everything about it.
    virtual void request_finished(const std::shared_ptr<const FinishedRequest>& result) = 0;
};

class EngineSession;
namespace detail {
struct SessionCore;  // engine_session.cpp
}

/// A submitted request. Copyable; outliving the session is harmless.
class RequestHandle {
  public:
    RequestHandle() = default;
    uint64_t id() const { return id_; }
    /// The RNG seed the request runs with (its SeedSpec resolved).
    uint64_t seed() const { return seed_; }
    /// False when it was refused at once (its Finished event still comes).
    bool accepted() const { return accepted_; }
    /// Cancels it (finish reason "cancelled" within one step); `why`, when
    /// given, is its message ("cancelled by Ctrl-C (SIGINT)"). False when it
    /// already finished, is unknown, or the session is gone.
    bool cancel(const std::string& why = {}) const;

  private:
    friend class EngineSession;
    std::weak_ptr<detail::SessionCore> core_;
    uint64_t id_ = 0;
    uint64_t seed_ = 0;
    bool accepted_ = false;
};

/// Loading progress: fraction 0..1 and the step in words. Return false to
/// cancel the load (open() then throws LoadCancelled).
using LoadProgress = std::function<bool(double fraction, const std::string& step)>;

/// Thrown by EngineSession::open when its LoadProgress returned false.
struct LoadCancelled : std::runtime_error {
    LoadCancelled() : std::runtime_error("model loading cancelled") {}
};

/// A request with its prompt rendered and tokenized by a session
/// (EngineSession::prepare): what the model will be given, for a token
/// meter or a context check before submitting, and what
/// EngineSession::submit(PreparedRequest) runs without rendering again.
/// Only a session makes one, so its ids always match its request.
class PreparedRequest {
  public:
    const GenerationRequest& request() const { return request_; }  ///< as prepared
    PromptMode mode() const { return prompt_mode(request_); }      ///< prompt_mode(request())
    /// The text the model sees: the raw prompt, the rendered chat prompt,
    /// or "" for a request given as tokens.
    const std::string& prompt() const { return prompt_; }
    /// [n_prompt] the token ids the request runs (empty when !ok()). A chat
    /// prompt that continues a conversation this session ran (its text
    /// starts with an earlier chat prompt and that reply) starts with the
    /// ids they ran as, the reply's generated ids included, so the prefix
    /// cache matches the whole history; the ids spell the same text as a
    /// fresh tokenization (which is used otherwise).
    const std::vector<int32_t>& prompt_tokens() const { return prompt_tokens_; }
    /// How the prompt became ids (template name and SHA-256, BOS, pre-tokenizer).
    const PromptFacts& prompt_facts() const { return prompt_facts_; }
    /// Why the template in use is not the one the request names ("" when
    /// it is, or for a request without messages).
    const std::string& template_note() const { return template_note_; }
    /// "" when the request can be submitted; else why not (submit refuses
    /// it with this message, finish reason "error").
    const std::string& problem() const { return problem_; }
    bool ok() const { return problem_.empty(); }
    /// The session that prepared it (EngineSession::session_id; 0: none).
    uint64_t session_id() const { return session_id_; }
    /// The model's training context in tokens (model::HParams::n_ctx_train;
    /// 0 = not in the file).
    uint32_t n_ctx_train() const { return n_ctx_train_; }
    /// True when the prompt alone is longer than the model's training
    /// context (n_prompt > n_ctx_train > 0): it may still run (the pool
    /// can be larger), but output past n_ctx_train is unreliable. Surfaces
    /// warn before submitting; FinishedRequest::past_n_ctx_train also
    /// counts the output.
    bool prompt_past_n_ctx_train() const {
        return n_ctx_train_ > 0 && prompt_tokens_.size() > n_ctx_train_;
    }
    /// Sets the run-log run the request belongs to (GenerationRequest::run_id;
    /// a run begun after the preview). Its rendering does not depend on it.
    void set_run_id(int64_t run_id) { request_.run_id = run_id; }
    /// Takes every setting of `from` but its prompt (messages, chat_vars,
    /// chat_template, prompt, prompt_tokens stay as prepared): sampling,
    /// max tokens, stop strings, seed, timeouts, client, run id, label. For a
    /// preview made before the settings were known (a token meter); the
    /// prompt's ids stay the ones shown. problem() is checked again.
    void set_settings(const GenerationRequest& from);

  private:
    friend class EngineSession;
    GenerationRequest request_;
    std::string prompt_;
    std::vector<int32_t> prompt_tokens_;
    PromptFacts prompt_facts_;
    std::string template_note_;
    std::string problem_;
    uint64_t session_id_ = 0;
    uint32_t n_ctx_train_ = 0;
};

/// The warning a surface shows when a request's sequence (`n_tokens`:
/// prompt, or prompt + output) goes past the model's training context
/// `n_ctx_train` (tokens, > 0): "N tokens go past the model's training
/// context (M tokens); output past it is unreliable".
std::string past_n_ctx_train_warning(size_t n_tokens, uint32_t n_ctx_train);

class EngineSession {
  public:
    /// Reads the vocabulary and chat template of the GGUF at `path`, loads
    /// the model with opts.load and starts the scheduler. Throws the
    /// engine's typed errors (errors/errors.h: file, format, unsupported,
    /// device, out of memory), std::invalid_argument for bad options,
    /// wb::FormatError when the vocabulary and the model disagree on
    /// n_vocab, LoadCancelled.
    static std::unique_ptr<EngineSession> open(const std::string& path, const SessionOptions& opts,
                                               const LoadProgress& progress = {});

    /// Cancels every request, delivers their Finished events, joins the
    /// engine thread (shutdown()).
    ~EngineSession();
    EngineSession(const EngineSession&) = delete;
    EngineSession& operator=(const EngineSession&) = delete;

    /// Queues `request`; returns at once. Prompts are rendered (chat: the
    /// template the request names, special tokens parsed) and tokenized here
    /// (prepare()). A request that cannot run (validate() fails, an unknown
    /// template, a chat render or tokenization error, a prompt longer than
    /// the context, a full queue) is refused: accepted() false and a
    /// Finished event with reason "error" or "rejected" on the engine
    /// thread. After shutdown() the sink gets that Finished event on the
    /// calling thread, before submit returns.
    RequestHandle submit(GenerationRequest request, EventSink sink);
    /// Queues a request prepare() rendered, running its prompt_tokens()
    /// as they are (one rendering for a meter and the run). One prepared by
    /// another session is prepared again here (its vocabulary may differ).
    /// Otherwise as submit(GenerationRequest, EventSink).
    RequestHandle submit(PreparedRequest prepared, EventSink sink);

    /// Cancels the request `id` (its message `why` when given, else the
    /// scheduler's); false when unknown or finished.
    bool cancel(uint64_t id, const std::string& why = {});
    /// Cancels every queued and running request.
    void cancel_all();
    /// Cancels everything, delivers every Finished event (recorder and
    /// sinks) and stops the engine thread; later submits are refused.
    /// Called from a sink, the remaining events are delivered after that
    /// sink returns. Idempotent.
    void shutdown();
    /// Waits until no request is in flight and every event is delivered
    /// (recorder and sinks). False on timeout (always, from a sink).
    bool wait_idle(std::chrono::milliseconds timeout);
    /// Requests submitted whose Finished event has not been delivered.
    size_t in_flight() const;

    /// Admission limits, changeable while requests run (no reload, no
    /// scheduler rebuild): requests running at once, the queue bound, and
    /// per-client concurrency. The slots (facts().n_parallel) stay fixed.
    void set_admission(const scheduler::AdmissionLimits& limits);
    scheduler::AdmissionLimits admission() const;
    /// Sets one client's running limit (0 = none), keeping the rest.
    void set_client_limit(const std::string& client, uint32_t limit);

    /// Called on the delivery thread for every request that finishes
    /// (refused ones too, and those without a run id), after the recorder
    /// and before its sink's Finished event. Set it before submitting;
    /// empty = none.
    using FinishHook = std::function<void(const std::shared_ptr<const FinishedRequest>&)>;
    void set_finish_hook(FinishHook hook);

    /// Records every later event of requests with a run id through
    /// `recorder` (null: none), on the delivery thread (RequestRecorder).
    void set_recorder(std::shared_ptr<RequestRecorder> recorder);

    /// The result of a request that never reached the engine (a batch
    /// entry cancelled before it was submitted): finish reason "cancelled"
    /// with `message`, its settings as it would have run, nothing
    /// generated; recorded like every other request (a row when it has a
    /// run id) before this returns, on the calling thread. Never throws
    /// except what the recorder's allocation does.
    std::shared_ptr<const FinishedRequest> finish_unsubmitted(const GenerationRequest& request,
                                                              const std::string& message);

    /// The chat template `name` stands for, by chat::choose_template (the
    /// one rule: "" or "model": the GGUF's own, plain text for a model
    /// without one, a built-in for one that is unusable; "none": plain
    /// text; else a built-in's short name) and, in its note, why it is not
    /// the one asked for ("" when it is). Parsed once per name and cached
    /// for the session's life. Throws std::invalid_argument for an unknown
    /// name.
    std::shared_ptr<const chat::TemplateChoice> chat_template(const std::string& name) const;

    /// Renders and tokenizes `request`'s prompt as submit() would (chat: the
    /// template it names, special tokens parsed; raw: BOS as the vocabulary
    /// says; tokens: as given), resolves nothing else. For token meters and
    /// context checks before submitting: submit(PreparedRequest) then runs
    /// exactly these ids without rendering again. Never throws: a request
    /// that cannot run has its reason in problem().
    PreparedRequest prepare(GenerationRequest request) const;
    const std::string& model_path() const;
    /// The model; use it directly (compare's figures) only while no request
    /// is in flight, from one thread.
    model::Model& model();
    const model::Model& model() const;
    const tokenizer::Vocab& vocab() const;
    /// Context and scheduling facts the settings JSON is made from.
    const EngineFacts& facts() const;
    /// Where the model runs (the run log's environment).
    const model::DeviceFacts& device() const;
    /// Live metrics (snapshot() is thread-safe), on the now_ms() clock.
    const metrics::MetricsStore& metrics() const;
    /// Starts the metrics afresh at now_ms() (between a benchmark's bursts).
    void reset_metrics();
    /// Running and queued requests, KV pool blocks, prompt and cached
    /// tokens, engine busy time and memory now (SessionStats, defined in
    /// session_stats.cpp), O(1) from any thread; counts since open, not
    /// cleared by reset_metrics(). Never throws.
    SessionStats stats() const;
    /// Milliseconds since the session started (steady clock).
    double now_ms() const;
    /// How long open() took, by phase (the cold start up to ready).
    const SessionLoadTimes& load_times() const;
    /// This session's id, unique within the process (FinishedRequest::session_id).
    uint64_t session_id() const;

  private:
    EngineSession(std::string path, tokenizer::Vocab vocab,
                  std::optional<std::string> model_template, std::string template_read_error,
                  std::unique_ptr<model::Model> model, const SessionOptions& opts,
                  SessionLoadTimes times, std::chrono::steady_clock::time_point opened);
    std::shared_ptr<detail::SessionCore> core_;
};

}  // namespace wb::core
