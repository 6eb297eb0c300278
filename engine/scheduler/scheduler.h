#pragma once
// The continuous-batching scheduler: a bounded request queue, up to
// n_parallel sequences running at once over one KV pool, and one engine
// thread that runs the model step by step.
//
// Each step builds ONE ubatch (model::Batch) that mixes
//   1. one decode token of every running request that is past its prompt
//      (the token it sampled last step),
//   2. prefill chunks of admitted requests, oldest admission first, at most
//      `prefill_chunk` prompt tokens per request and step, and
//   3. the draft tokens of decoding requests that speculate (below),
// up to `step_tokens` tokens in all, as llama.cpp's server and vLLM's
// chunked prefill do: decode tokens first (it keeps inter-token latency
// steady), then drafts, then prefill chunks get what is left. One forward
// pass, then each request with a logits row samples with its own Sampler.
//
// KV pool (model::KvCells): blocks of cells shared by all sequences, as in
// vLLM. Admission is in arrival order when a slot (sequence id) is free
// and the pool's available blocks cover the request's prompt and first
// token after what running requests still need for their prompts; else
// the queue holds it. A running request needing a block when none is
// available preempts the youngest running request (vLLM's recompute
// preemption): its blocks go back, it waits at the head of the queue and
// later recomputes its K/V, keeping its sampler, so its tokens are the
// same. A request may use up to n_ctx positions (the whole context) when
// the pool has room, and ends with Context at n_ctx, or when it alone
// fills the pool.
//
// Prefix cache: at admission a request reuses the longest cached prefix of
// its prompt (full blocks by reference, then the cached tail of an ended
// sequence), so a chat's next turn and prompts sharing a system prompt
// prefill only what is new. While a request prefills, blocks that another
// request completes meanwhile are picked up at each block boundary, and a
// chunk whose first block another request computes in the same ubatch
// waits one step for it instead of computing it twice. Reuse never
// changes results: cached K/V are the values the same tokens at the same
// positions produced.
//
// Speculative decoding (Request::speculative, docs/speculative.md): each
// decoding request that asked for it adds up to k draft tokens (n-gram or
// the draft model of set_draft_model) after its decode token, all with
// logits, in the same ubatch as the other requests' decode tokens and
// prefill chunks (requests with and without a draft share the pass). The
// drafts take the step's token budget after the decode rows and before
// prefill chunks, sit at the END of the ubatch, and use only blocks left in
// the pool's free set after everything else in the step, so the tokens of
// plain decoding get the blocks they would get anyway and no cached block
// is evicted for a draft. After the pass speculative::verify keeps the
// agreed prefix plus one token, the KV pool is rolled back to it
// (KvCells::seq_truncate) and the kept tokens go through the usual token
// path, so EOS, stop strings and max_tokens end the request at the same
// token as plain decoding. The drafters run on the engine thread, one
// request after the other, before the pass.
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
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "metrics/metrics_store.h"
#include "model/model.h"
#include "scheduler/request.h"
#include "speculative/draft_length.h"
#include "speculative/drafter.h"
#include "tokenizer/vocab.h"

namespace wb::scheduler {

struct SchedulerParams {
    /// Most requests running at once (KV-cache sequences); must be <= the
    /// model context's n_seq_max. They share the KV pool; a request alone
    /// may use all of it. 0 is allowed but every request then ends with
    /// Error ("n_parallel is 0").
    uint32_t n_parallel = 4;
    /// Requests that may wait for a slot; a submit beyond it is Rejected.
    uint32_t max_queue = 64;
    /// Most prompt tokens of one request in one step (>= 1).
    uint32_t prefill_chunk = 64;
    /// Token budget of one ubatch (>= n_parallel, so every running request
    /// gets its decode token each step).
    uint32_t step_tokens = 256;
    /// Reuse cached prompt prefixes (off: every prompt is computed whole,
    /// e.g. to compare). Last, so positional initializers keep working.
    bool prefix_cache = true;
};

/// How many requests may run and wait, changeable while requests run
/// (Scheduler::set_admission) without touching the slots or the KV cache:
/// the slots (n_parallel) are the fixed capacity, these limits choose how
/// much of it is used and by whom.
struct AdmissionLimits {
    /// Requests running at once, across all clients; 0 = every slot.
    uint32_t max_running = 0;
    /// Requests that may wait for a slot; a submit beyond it is Rejected.
    uint32_t max_queue = 64;
    /// Requests of one client running at once; 0 = no limit. A client
    /// named in `per_client` uses its own limit instead.
    uint32_t per_client_default = 0;
    std::map<std::string, uint32_t> per_client;  ///< client -> limit (0 = no limit)

    /// The running limit of `client` (0 = no limit).
    uint32_t client_limit(const std::string& client) const {
        auto it = per_client.find(client);
        return it != per_client.end() ? it->second : per_client_default;
    }
};

using EventCallback = std::function<void(const Event&)>;

class Scheduler {
  public:
    /// `model` and `vocab` must outlive the Scheduler. Throws
    /// std::invalid_argument when n_parallel > model.context().n_seq_max,
    /// prefill_chunk is 0, or step_tokens <
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
    /// queue holds admission().max_queue requests (Rejected, "queue full
    /// ..."); or the
    /// request is invalid (Error): empty prompt, max_tokens <= 0, a prompt
    /// token outside the vocabulary, a prompt longer than
    /// max_sequence_tokens() (a text prompt over 64 KiB whose byte length
    /// alone proves it too long is refused before it is tokenized: no token
    /// stands for more bytes than the vocabulary's longest piece), or
    /// n_parallel 0. After stop(): refused with Error and no event.
    /// Tokenizes the prompt on the caller's thread.
    SubmitResult submit(Request request);

    /// Refuses `request` without queueing it, for a caller that found it
    /// unusable itself (e.g. a chat prompt that cannot be rendered): it gets
    /// an id and a Finished event with `reason` and `message` on the engine
    /// thread, counted in the metrics like any refusal. After stop(): no
    /// event (SubmitResult::stopped).
    SubmitResult reject(Request request, FinishReason reason, std::string message);

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
    /// Forgets the metrics so far and starts a new run at now_ms() (e.g. a
    /// benchmark's next level, between bursts). Any thread.
    void reset_metrics() { metrics_.reset(now_ms()); }
    /// Milliseconds since this Scheduler was constructed (steady clock).
    double now_ms() const;

    /// The parameters given to the constructor (params().max_queue is the
    /// initial queue bound; admission() has the current one).
    const SchedulerParams& params() const { return params_; }
    /// Most tokens (prompt + output) one request may hold: the model
    /// context's n_ctx. A request reaching it ends with Context; a chat
    /// that gets there must drop turns.
    uint32_t max_sequence_tokens() const { return n_ctx_; }

    /// Changes the admission limits; takes effect at the next step for
    /// requests not yet admitted (running ones are never stopped, and a
    /// queue already longer than a new max_queue is not trimmed). Any thread.
    void set_admission(AdmissionLimits limits);
    /// The current limits (initially max_running 0, max_queue
    /// params().max_queue, no per-client limit).
    AdmissionLimits admission() const;

    /// The drafter of requests with SpeculativeParams::Kind::DraftModel
    /// (a speculative::DraftModelDrafter over a second model whose
    /// vocabulary matches; its n_seq_max must cover n_parallel). Call
    /// before start(): the engine thread uses it without a lock. Without
    /// one, such requests are refused (Error).
    void set_draft_model(std::shared_ptr<speculative::Drafter> drafter);

  private:
    struct Job;
    struct Slot;
    struct Plan;

    void run();
    /// Admits `job` into free `slot` when the pool can hold it (after
    /// reusing its cached prefix); else undoes the reuse and returns false.
    bool try_admit(std::unique_ptr<Job>& job, Slot& slot, uint32_t reserved_blocks, bool alone,
                   double now, std::vector<Event>& ev);
    /// Blocks running prefills still need to finish their prompts (+1 each).
    uint32_t blocks_reserved() const;
    void extend_prefix(Slot& slot);
    /// Index in waiting_ of the oldest request the limits let in now, or -1
    /// (engine thread, under mu_: it counts the running requests in slots_).
    long next_admissible_locked() const;
    void step(std::vector<Event>& ev);
    /// Gives slot's blocks back and parks its job in preempted_.
    void preempt(Slot& slot, double t, std::vector<Event>& ev);
    /// `lp`: the token's log-probabilities when the request asked for them.
    void on_token(Slot& slot, int32_t token, std::optional<sampling::TokenLogprobs> lp, double t,
                  std::vector<Event>& ev);
    void finish_slot(Slot& slot, FinishReason reason, std::string message, double t,
                     std::vector<Event>& ev);
    Event finish_job(Job& job, FinishReason reason, std::string message, double t);
    void deliver(std::vector<Event>& ev);
    /// The draft for decoding `slot`, which asked for speculation: at most
    /// its draft length (speculative::DraftLength, from the pass costs with
    /// `n_base` tokens already in the step) and `budget` tokens (what the step's token budget has
    /// left after every decode row and older requests' drafts), within the
    /// positions its sequence can grow without evicting cached blocks (so
    /// that a rollback leaves no trace), the context and max_tokens. Ends
    /// the request with Error (and returns none) when the drafter throws.
    std::vector<int32_t> propose_draft(Slot& slot, uint32_t budget, uint32_t n_base,
                                       std::vector<Event>& ev);
    /// Verifies `draft` against `rows` ([draft + 1, n_vocab] logits: the
    /// fed token's row, then the draft's), rolls the KV back to the kept
    /// tokens and emits them (on_token) until the request ends. Returns the
    /// tokens emitted (0 when sampling failed and the request ended).
    size_t verify_draft(Slot& slot, std::span<const float> rows, const std::vector<int32_t>& draft,
                        double pass_ms, double t, std::vector<Event>& ev);
    SubmitResult refuse_locked(RequestId id, const Request& r, FinishReason reason,
                               std::string message, ErrorKind kind = ErrorKind::None);

    model::Model& model_;
    const tokenizer::Vocab& vocab_;
    const SchedulerParams params_;
    const EventCallback on_event_;
    const std::chrono::steady_clock::time_point epoch_;
    uint32_t n_ctx_ = 0;          // most positions of one sequence
    size_t max_piece_bytes_ = 1;  // longest token piece in bytes (prompt-size bound)
    metrics::MetricsStore metrics_;

    // Shared with callers, guarded by mu_.
    mutable std::mutex mu_;
    std::condition_variable cv_;                // engine wakes: submit, cancel, stop
    std::condition_variable idle_cv_;           // wait_idle wakes: a Finished was delivered
    std::deque<std::unique_ptr<Job>> waiting_;  // arrival order
    std::vector<Event> pending_;                // events made by submit() for the engine to emit
    std::unordered_set<RequestId> live_;        // accepted, Finished not yet delivered
    std::unordered_set<RequestId> cancels_;     // cancel() asked, engine not yet seen
    AdmissionLimits limits_;                    // set_admission()
    size_t outstanding_ = 0;                    // submitted, Finished not yet delivered
    RequestId next_id_ = 1;
    bool stop_ = false;
    bool started_ = false;

    // Engine thread only.
    std::vector<Slot> slots_;  // [n_parallel]
    std::vector<std::unique_ptr<Job>>
        preempted_;  // this step's, oldest first; requeued at the front
    uint64_t admissions_ = 0;
    std::vector<float> logits_;     // [n_outputs, n_vocab] of the last step
    std::vector<float> spec_rows_;  // [k + 1, n_vocab] one verify's rows, gathered (reused)
    model::Batch batch_;            // the step's ubatch, reused
    speculative::PassCostModel pass_costs_;  // ms of a pass by its tokens, for draft lengths
    std::shared_ptr<speculative::Drafter> draft_model_;  // set_draft_model()
    bool busy_after_step_ = false;  // a request was running when the last step ended

    std::thread thread_;
};

}  // namespace wb::scheduler
