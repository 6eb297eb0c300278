#pragma once
// The continuous-batching scheduler: a bounded request queue, n_parallel
// KV-cache slots, and one engine thread that runs the model step by step.
//
// Each step builds ONE ubatch (model::Batch) that mixes
//   1. one decode token of every running request that is past its prompt
//      (the token it sampled last step), and
//   2. prefill chunks of admitted requests, oldest admission first, at most
//      `prefill_chunk` prompt tokens per request and step,
// up to `step_tokens` tokens in all (as llama.cpp's server and vLLM's chunked
// prefill do; decode first keeps inter-token latency steady). One forward
// pass, then each request with a logits row samples with its own Sampler.
// Requests are admitted in arrival order whenever a slot is free; a finished,
// cancelled or timed-out request's sequence is removed (Model::seq_rm) and
// the slot taken by the next request in the same step.
//
// Context: every slot may use n_ctx / n_parallel KV cells (llama.cpp
// server's n_ctx_slot), so running requests can never run out of cells; a
// prompt longer than that is refused, and a request whose next token would
// need a cell past it ends with Length.
//
// Threads: submit(), cancel(), stop(), wait_idle(), metrics(), now_ms() may be
// called from any thread, including from inside the event callback. The Model
// is used only by the engine thread once start() was called.
//
// Events: every event goes through the callback given to the constructor,
// called ON THE ENGINE THREAD, in order per request (queued, started,
// first_token + token..., finished; or only finished for a refused request).
// The callback must be cheap and must not block (copy the event into a
// queue, post it to a UI thread, ...): the engine waits for it. Use
// EventQueue (event_queue.h) to drain events on another thread instead.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "metrics/metrics_store.h"
#include "model/model.h"
#include "scheduler/request.h"
#include "tokenizer/vocab.h"

namespace wb::scheduler {

struct SchedulerParams {
    /// Slots = KV-cache sequences running at once; must be <= the model
    /// context's n_seq_max. 0 is allowed but every request then ends with
    /// Error ("n_parallel is 0").
    uint32_t n_parallel = 4;
    /// Requests that may wait for a slot; a submit beyond it is Rejected.
    uint32_t max_queue = 64;
    /// Most prompt tokens of one request in one step (>= 1).
    uint32_t prefill_chunk = 64;
    /// Token budget of one ubatch (>= n_parallel, so every running request
    /// gets its decode token each step).
    uint32_t step_tokens = 256;
};

using EventCallback = std::function<void(const Event&)>;

class Scheduler {
  public:
    /// `model` and `vocab` must outlive the Scheduler. Throws
    /// std::invalid_argument when n_parallel > model.context().n_seq_max,
    /// n_ctx / n_parallel is 0, prefill_chunk is 0, or step_tokens <
    /// n_parallel. The engine thread starts with start(); requests submitted
    /// before wait in the queue (handy to set up a deterministic order).
    Scheduler(model::Model& model, const tokenizer::Vocab& vocab, SchedulerParams params,
              EventCallback on_event);
    /// Calls stop().
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    /// Starts the engine thread (once; later calls do nothing).
    void start();

    /// Queues a request and returns at once, never waiting for the engine.
    /// Refused (accepted = false, and a Finished event follows) when: the
    /// queue holds max_queue requests (Rejected, "queue full ..."); or the
    /// request is invalid (Error): empty prompt, max_tokens <= 0, a prompt
    /// token outside the vocabulary, a prompt longer than n_ctx_per_slot(),
    /// or n_parallel 0. After stop(): refused with Error and no event.
    /// Tokenizes the prompt on the caller's thread.
    SubmitResult submit(Request request);

    /// Cancels a queued or running request: it ends with Cancelled at the
    /// start of the next step (its slot is freed then). Returns false when
    /// the id is unknown or the request already finished.
    bool cancel(RequestId id);

    /// Cancels every queued and running request (Finished events with
    /// Cancelled, "scheduler stopped") and joins the engine thread.
    /// Idempotent; later submits are refused.
    void stop();

    /// Waits until every submitted request has had its Finished event
    /// delivered. Returns false on timeout.
    bool wait_idle(std::chrono::milliseconds timeout);

    /// Live metrics (snapshot() is thread-safe); the clock is now_ms().
    const metrics::MetricsStore& metrics() const { return metrics_; }
    /// Milliseconds since this Scheduler was constructed (steady clock).
    double now_ms() const;

    const SchedulerParams& params() const { return params_; }
    /// KV cells each slot may use: n_ctx / n_parallel (0 when n_parallel is 0).
    uint32_t n_ctx_per_slot() const { return n_ctx_slot_; }

  private:
    struct Job;
    struct Slot;

    void run();
    void admit_locked(std::unique_ptr<Job> job, Slot& slot, double now, std::vector<Event>& ev);
    void step(std::vector<Event>& ev);
    void on_token(Slot& slot, int32_t token, double t, std::vector<Event>& ev);
    void finish_slot(Slot& slot, FinishReason reason, std::string message, double t,
                     std::vector<Event>& ev);
    Event finish_job(Job& job, FinishReason reason, std::string message, double t);
    void deliver(std::vector<Event>& ev);
    SubmitResult refuse_locked(RequestId id, const Request& r, FinishReason reason,
                               std::string message);

    model::Model& model_;
    const tokenizer::Vocab& vocab_;
    const SchedulerParams params_;
    const EventCallback on_event_;
    const std::chrono::steady_clock::time_point epoch_;
    uint32_t n_ctx_slot_ = 0;
    metrics::MetricsStore metrics_;

    // Shared with callers, guarded by mu_.
    mutable std::mutex mu_;
    std::condition_variable cv_;                // engine wakes: submit, cancel, stop
    std::condition_variable idle_cv_;           // wait_idle wakes: a Finished was delivered
    std::deque<std::unique_ptr<Job>> waiting_;  // arrival order
    std::vector<Event> pending_;                // events made by submit() for the engine to emit
    std::unordered_set<RequestId> live_;        // accepted, Finished not yet delivered
    std::unordered_set<RequestId> cancels_;     // cancel() asked, engine not yet seen
    size_t outstanding_ = 0;                    // submitted, Finished not yet delivered
    RequestId next_id_ = 1;
    bool stop_ = false;
    bool started_ = false;

    // Engine thread only.
    std::vector<Slot> slots_;  // [n_parallel]
    uint64_t admissions_ = 0;
    std::vector<float> logits_;     // [n_outputs, n_vocab] of the last step
    model::Batch batch_;            // the step's ubatch, reused
    bool busy_after_step_ = false;  // a request was running when the last step ended

    std::thread thread_;
};

}  // namespace wb::scheduler
