#include "scheduler/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "sampling/logprobs.h"
#include "sampling/sampler.h"
#include "scheduler/stop_strings.h"
#include "speculative/draft_length.h"
#include "speculative/ngram_drafter.h"
#include "speculative/verify.h"
#include "tokenizer/stream_detokenizer.h"

namespace wb::scheduler {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
// Prompts up to this many bytes are tokenized even when too long, so the
// refusal can say how many tokens they have (cheap: about 10 ms).
constexpr size_t kExactCountBytes = 64 * 1024;

double deadline(double from_ms, int64_t timeout_ms) {
    return timeout_ms < 0 ? kNever : from_ms + static_cast<double>(timeout_ms);
}
}  // namespace

const char* to_string(FinishReason r) {
    switch (r) {
        case FinishReason::Stop:
            return "stop";
        case FinishReason::Length:
            return "length";
        case FinishReason::Context:
            return "context";
        case FinishReason::Timeout:
            return "timeout";
        case FinishReason::Cancelled:
            return "cancelled";
        case FinishReason::Rejected:
            return "rejected";
        case FinishReason::Error:
            return "error";
    }
    return "error";
}

const char* to_string(ErrorKind k) {
    switch (k) {
        case ErrorKind::None:
            return "none";
        case ErrorKind::PromptTooLong:
            return "prompt_too_long";
    }
    return "none";
}

const char* to_string(SpeculativeParams::Kind k) {
    switch (k) {
        case SpeculativeParams::Kind::None:
            return "none";
        case SpeculativeParams::Kind::Ngram:
            return "ngram";
        case SpeculativeParams::Kind::DraftModel:
            return "draft_model";
    }
    return "none";
}

const char* to_string(EventType t) {
    switch (t) {
        case EventType::Queued:
            return "queued";
        case EventType::Started:
            return "started";
        case EventType::FirstToken:
            return "first_token";
        case EventType::Token:
            return "token";
        case EventType::Finished:
            return "finished";
        case EventType::Preempted:
            return "preempted";
    }
    return "?";
}

/// A request between submit() and its Finished event. Everything that must
/// survive a preemption lives here, not in the slot.
struct Scheduler::Job {
    RequestId id = 0;
    Request req;
    std::vector<int32_t> prompt;  // [n_prompt] token ids
    metrics::RequestTimeline tl;
    double queue_deadline_ms = kNever;  // (first) admission must happen before this
    double total_deadline_ms = kNever;  // finish must happen before this

    // From the first admission on:
    bool admitted = false;
    uint64_t admitted_order = 0;  // first admission: older requests go first, also after preemption
    std::unique_ptr<sampling::Sampler> sampler;
    std::unique_ptr<tokenizer::StreamDetokenizer> detok;
    std::unique_ptr<StopStringMatcher> stops;
    std::vector<int32_t> output;  // [n_out] generated ids; the last one is fed next step
    std::vector<sampling::TokenLogprobs> logprobs;  // [n_out] when req.top_logprobs >= 0
    bool cancel = false;
    bool prefix_recorded = false;  // the prefix-cache figures went to the metrics
    int32_t n_cached = 0;          // prompt tokens taken from the prefix cache (first run)
    int32_t n_computed = 0;        // prompt tokens prefilled (first run)
    int32_t n_recomputed = 0;      // tokens prefilled again after preemptions
    int32_t preemptions = 0;
    // Speculative decoding (req.speculative.kind != None).
    std::unique_ptr<speculative::DraftLength> spec_k;
    SpeculativeStats spec;

    /// Tokens whose K/V the sequence needs before the next decode step:
    /// the prompt, plus every output token but the last (which is fed by
    /// the decode step itself). A fresh request's last prompt token gives
    /// the logits of its first output token.
    size_t target() const { return prompt.size() + (output.empty() ? 0 : output.size() - 1); }
    /// prompt ++ output[0 .. target - prompt): the sequence's tokens by position.
    std::vector<int32_t> tokens() const {
        std::vector<int32_t> t = prompt;
        t.insert(t.end(), output.begin(),
                 output.begin() + static_cast<long>(target() - prompt.size()));
        return t;
    }
};

/// One KV-cache sequence and the request running in it (job == nullptr: free).
struct Scheduler::Slot {
    int32_t seq = 0;
    std::unique_ptr<Job> job;
    size_t n_past = 0;        // positions in the cache (= next position)
    size_t batch_tokens = 0;  // tokens of this slot in the current ubatch
    // Speculation in the current step: the draft after the fed token, the
    // logits row of the fed token and of the first draft token.
    std::vector<int32_t> draft;
    size_t fed_row = 0, draft_row = 0;
    double draft_ms = 0;  // what proposing `draft` took

    bool busy() const { return job != nullptr; }
    bool prefilling() const { return busy() && n_past < job->target(); }
    bool decoding() const { return busy() && !prefilling(); }
};

Scheduler::Scheduler(model::Model& model, const tokenizer::Vocab& vocab, SchedulerParams params,
                     EventCallback on_event)
    : model_(model),
      vocab_(vocab),
      params_(params),
      on_event_(std::move(on_event)),
      epoch_(std::chrono::steady_clock::now()),
      metrics_(0.0) {
    const model::ContextParams& ctx = model_.context();
    if (params_.n_parallel > ctx.n_seq_max) {
        throw std::invalid_argument("scheduler: n_parallel " + std::to_string(params_.n_parallel) +
                                    " exceeds the model context's n_seq_max " +
                                    std::to_string(ctx.n_seq_max));
    }
    if (params_.prefill_chunk == 0) {
        throw std::invalid_argument("scheduler: prefill_chunk must be >= 1");
    }
    if (params_.step_tokens < std::max<uint32_t>(params_.n_parallel, 1)) {
        throw std::invalid_argument("scheduler: step_tokens " +
                                    std::to_string(params_.step_tokens) +
                                    " must be >= n_parallel " + std::to_string(params_.n_parallel) +
                                    " (each running request needs its decode token every step)");
    }
    n_ctx_ = std::min(ctx.n_ctx, model_.kv_cells().size());
    limits_.max_queue = params_.max_queue;
    slots_.resize(params_.n_parallel);
    for (uint32_t i = 0; i < params_.n_parallel; ++i) slots_[i].seq = static_cast<int32_t>(i);
    // The longest input text one token can stand for (its piece, control
    // tokens' text included): a prompt of B bytes has at least
    // B / max_piece_bytes_ tokens, whatever the tokenizer does.
    for (int32_t id = 0; id < vocab_.n_tokens(); ++id)
        max_piece_bytes_ = std::max(max_piece_bytes_, vocab_.token_to_piece(id, true).size());
    const model::KvCells& kv = model_.kv_cells();
    metrics_.set_gauges(0, 0, kv.size() - kv.n_free(), kv.size(),
                        kv.n_cached_blocks() * kv.block_size());
}

Scheduler::~Scheduler() {
    stop();
}

double Scheduler::now_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch_)
        .count();
}

void Scheduler::start() {
    std::lock_guard lock(mu_);
    if (started_) return;
    started_ = true;
    thread_ = std::thread([this] { run(); });
}

void Scheduler::stop() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
        if (!started_) {
            // The engine thread still has to deliver the Finished events of
            // whatever was queued; it sees stop_ at once and exits.
            started_ = true;
            thread_ = std::thread([this] { run(); });
        }
    }
    cv_.notify_all();
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool Scheduler::wait_idle(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return idle_cv_.wait_for(lock, timeout, [&] { return outstanding_ == 0; });
}

bool Scheduler::cancel(RequestId id) {
    {
        std::lock_guard lock(mu_);
        if (!live_.contains(id)) return false;
        cancels_.insert(id);
    }
    cv_.notify_all();
    return true;
}

SubmitResult Scheduler::refuse_locked(RequestId id, const Request& r, FinishReason reason,
                                      std::string message, ErrorKind kind) {
    Event e;
    e.type = EventType::Finished;
    e.id = id;
    e.label = r.label;
    e.time_ms = now_ms();
    e.reason = reason;
    e.error_kind = kind;
    e.message = message;
    e.prompt_tokens = r.prompt_tokens;
    e.timeline.submitted_ms = e.time_ms;
    e.timeline.finished_ms = e.time_ms;
    e.metrics = metrics::compute_request_metrics(e.timeline);
    // Counted like any other finish (finish_reasons, requests_finished), so
    // a run's totals add up to what was submitted.
    metrics_.record_finished(e.time_ms, e.metrics, to_string(reason));
    pending_.push_back(std::move(e));
    ++outstanding_;
    return SubmitResult{id, false, reason, std::move(message), false};
}

SubmitResult Scheduler::submit(Request request) {
    // Validation and tokenization need no lock (the vocab is immutable).
    std::string invalid;
    ErrorKind invalid_kind = ErrorKind::None;
    std::vector<int32_t> prompt = request.prompt_tokens;
    const int32_t n_vocab = static_cast<int32_t>(model_.hparams().n_vocab);
    if (request.max_tokens <= 0) {
        invalid = "max_tokens must be >= 1, got " + std::to_string(request.max_tokens);
    } else if (request.speculative.kind != SpeculativeParams::Kind::None &&
               request.speculative.k == 0) {
        invalid = "speculative decoding needs k >= 1";
    } else if (request.speculative.kind == SpeculativeParams::Kind::DraftModel && !draft_model_) {
        invalid = "speculative decoding with a draft model, but no draft model is loaded";
    } else if (request.speculative.kind == SpeculativeParams::Kind::Ngram &&
               (request.speculative.ngram_min == 0 ||
                request.speculative.ngram_min > request.speculative.ngram_max)) {
        invalid = "speculative n-gram sizes need 1 <= ngram_min <= ngram_max";
    } else if (request.top_logprobs < -1 || request.top_logprobs > sampling::kMaxTopLogprobs) {
        invalid = "top_logprobs must be in -1.." + std::to_string(sampling::kMaxTopLogprobs) +
                  ", got " + std::to_string(request.top_logprobs);
    } else if (prompt.empty() && request.prompt.empty()) {
        invalid = "empty prompt";
    } else {
        const uint64_t min_tokens =
            (request.prompt.size() + max_piece_bytes_ - 1) / max_piece_bytes_;
        if (prompt.empty() && params_.n_parallel > 0 && request.prompt.size() > kExactCountBytes &&
            min_tokens > n_ctx_) {
            // Refused before tokenizing: a 10 MB prompt took 614 MB and 11 s
            // to tokenize only to be refused as too long afterwards. (A
            // shorter one is tokenized, for the exact count in the message.)
            invalid = "prompt is " + std::to_string(request.prompt.size()) +
                      " bytes, so at least " + std::to_string(min_tokens) +
                      " tokens (no token of this vocabulary stands for more than " +
                      std::to_string(max_piece_bytes_) +
                      " bytes): longer than the context (n_ctx " + std::to_string(n_ctx_) +
                      " tokens): drop earlier turns or raise the context size";
            invalid_kind = ErrorKind::PromptTooLong;
        } else if (prompt.empty()) {
            try {
                prompt = vocab_.tokenize(request.prompt, /*add_special=*/true);
            } catch (const std::exception& e) {
                invalid = std::string("prompt cannot be tokenized: ") + e.what();
            }
        }
        for (size_t i = 0; invalid.empty() && i < prompt.size(); ++i) {
            if (prompt[i] < 0 || prompt[i] >= n_vocab) {
                invalid = "prompt token " + std::to_string(prompt[i]) + " at index " +
                          std::to_string(i) + " is outside the vocabulary (n_vocab " +
                          std::to_string(n_vocab) + ")";
            }
        }
        if (invalid.empty() && params_.n_parallel == 0) {
            invalid = "n_parallel is 0: the scheduler has no slot to run a request in";
        } else if (invalid.empty() && prompt.size() > n_ctx_) {
            invalid = "prompt is " + std::to_string(prompt.size()) +
                      " tokens, longer than the context (n_ctx " + std::to_string(n_ctx_) +
                      " tokens): drop earlier turns or raise the context size";
            invalid_kind = ErrorKind::PromptTooLong;
        }
    }

    SubmitResult result;
    {
        std::lock_guard lock(mu_);
        const RequestId id = next_id_++;
        request.prompt_tokens = prompt;
        if (stop_) {
            // The engine thread may be gone: no event, the result says it all.
            return SubmitResult{id, false, FinishReason::Error, "scheduler stopped", true};
        } else if (!invalid.empty()) {
            result = refuse_locked(id, request, FinishReason::Error, invalid, invalid_kind);
        } else if (waiting_.size() >= limits_.max_queue) {
            result = refuse_locked(id, request, FinishReason::Rejected,
                                   "queue full (" + std::to_string(waiting_.size()) +
                                       " requests waiting, max_queue " +
                                       std::to_string(limits_.max_queue) + ")");
        } else {
            auto job = std::make_unique<Job>();
            job->id = id;
            job->prompt = std::move(prompt);
            job->tl.submitted_ms = now_ms();
            job->tl.prompt_tokens = static_cast<int32_t>(job->prompt.size());
            job->queue_deadline_ms = deadline(job->tl.submitted_ms, request.queue_timeout_ms);
            job->total_deadline_ms = deadline(job->tl.submitted_ms, request.timeout_ms);
            job->req = std::move(request);
            Event e;
            e.type = EventType::Queued;
            e.id = id;
            e.label = job->req.label;
            e.time_ms = job->tl.submitted_ms;
            pending_.push_back(std::move(e));
            waiting_.push_back(std::move(job));
            live_.insert(id);
            ++outstanding_;
            result = SubmitResult{id, true, FinishReason::Stop, {}, false};
        }
    }
    cv_.notify_all();
    return result;
}

void Scheduler::set_admission(AdmissionLimits limits) {
    {
        std::lock_guard lock(mu_);
        limits_ = std::move(limits);
    }
    cv_.notify_all();  // a raised limit may admit a waiting request now
}

AdmissionLimits Scheduler::admission() const {
    std::lock_guard lock(mu_);
    return limits_;
}

long Scheduler::next_admissible_locked() const {
    if (waiting_.empty()) return -1;
    uint32_t running = 0;
    std::map<std::string, uint32_t> by_client;
    for (const Slot& s : slots_) {
        if (!s.busy()) continue;
        ++running;
        ++by_client[s.job->req.client];
    }
    if (running >= slots_.size()) return -1;
    if (limits_.max_running != 0 && running >= limits_.max_running) return -1;
    // Arrival order, skipping requests whose client is at its limit (they
    // keep their place; another client's request may go first).
    for (size_t i = 0; i < waiting_.size(); ++i) {
        const std::string& client = waiting_[i]->req.client;
        const uint32_t limit = limits_.client_limit(client);
        if (limit == 0) return static_cast<long>(i);
        auto it = by_client.find(client);
        if (it == by_client.end() || it->second < limit) return static_cast<long>(i);
    }
    return -1;
}

SubmitResult Scheduler::reject(Request request, FinishReason reason, std::string message) {
    SubmitResult result;
    {
        std::lock_guard lock(mu_);
        const RequestId id = next_id_++;
        if (stop_) return SubmitResult{id, false, FinishReason::Error, "scheduler stopped", true};
        result = refuse_locked(id, request, reason, std::move(message));
    }
    cv_.notify_all();
    return result;
}

Event Scheduler::finish_job(Job& job, FinishReason reason, std::string message, double t) {
    job.tl.finished_ms = t;
    job.tl.generated_tokens = static_cast<int32_t>(job.output.size());
    Event e;
    e.type = EventType::Finished;
    e.id = job.id;
    e.label = job.req.label;
    e.time_ms = t;
    e.reason = reason;
    e.message = std::move(message);
    e.prompt_tokens = job.prompt;
    if (job.stops) {
        // Text still held back (an incomplete character, a possible
        // stop-string start) goes out with the Finished event.
        if (!job.stops->stopped()) {
            e.piece = job.stops->push(job.detok->flush());
            e.piece += job.stops->flush();
        }
        e.output = job.stops->text();
    }
    e.output_tokens = job.output;
    e.output_logprobs = job.logprobs;
    e.prompt_tokens_processed = job.n_computed;
    e.prompt_tokens_cached = job.n_cached;
    e.preemptions = job.preemptions;
    e.recomputed_tokens = job.n_recomputed;
    e.timeline = job.tl;
    e.metrics = metrics::compute_request_metrics(job.tl);
    if (job.spec_k) e.speculative = job.spec;
    metrics_.record_finished(t, e.metrics, to_string(reason));
    return e;
}

uint32_t Scheduler::blocks_reserved() const {
    const model::KvCells& kv = model_.kv_cells();
    uint32_t n = 0;
    for (const Slot& s : slots_) {
        if (!s.busy()) continue;
        n += kv.blocks_needed(s.seq, static_cast<uint32_t>(s.job->target() - s.n_past + 1));
    }
    return n;
}

bool Scheduler::try_admit(std::unique_ptr<Job>& job, Slot& slot, uint32_t reserved, bool alone,
                          double now, std::vector<Event>& ev) {
    model::KvCells& kv = model_.kv_cells();
    Job& j = *job;
    uint32_t reused = 0;
    if (params_.prefix_cache) {
        const std::vector<int32_t> toks = j.tokens();
        // A fresh request computes at least its last prompt token (its logits
        // give the first output token); a resumed one may find all of it.
        const auto limit = static_cast<uint32_t>(j.output.empty() ? toks.size() - 1 : toks.size());
        reused = kv.seq_reuse_cached(slot.seq, toks, limit);
    }
    // Its remaining prefill and its next token must fit beside what the
    // running requests still need; alone it always goes (a prompt of at
    // most n_ctx tokens fits the empty pool).
    const auto rest = static_cast<uint32_t>(j.target() - reused + 1);
    if (!alone && kv.blocks_needed(slot.seq, rest) + reserved > kv.n_free_blocks()) {
        if (reused > 0) model_.seq_rm(slot.seq);
        return false;
    }
    if (!j.admitted) {
        j.admitted = true;
        j.tl.admitted_ms = now;
        metrics_.record_admitted(now, now - j.tl.submitted_ms);
        j.admitted_order = admissions_++;
        j.sampler = std::make_unique<sampling::Sampler>(j.req.sampling);
        if (j.req.speculative.kind != SpeculativeParams::Kind::None) {
            j.spec_k = std::make_unique<speculative::DraftLength>(j.req.speculative.k,
                                                                  j.req.speculative.adaptive);
            j.spec.drafter = j.req.speculative.kind == SpeculativeParams::Kind::DraftModel
                                 ? draft_model_->name()
                                 : "ngram";
        }
        // The prompt counts for the repetition penalty, as in llama.cpp's server.
        for (int32_t t : j.prompt) j.sampler->accept(t);
        j.detok = std::make_unique<tokenizer::StreamDetokenizer>(vocab_);
        j.stops = std::make_unique<StopStringMatcher>(j.req.stop);
    }
    if (j.preemptions == 0) j.n_cached += static_cast<int32_t>(reused);
    slot.n_past = reused;
    slot.batch_tokens = 0;
    Event e;
    e.type = EventType::Started;
    e.id = j.id;
    e.label = j.req.label;
    e.time_ms = now;
    e.slot = slot.seq;
    e.cached_tokens = static_cast<int32_t>(reused);
    ev.push_back(std::move(e));
    slot.job = std::move(job);
    return true;
}

void Scheduler::extend_prefix(Slot& slot) {
    model::KvCells& kv = model_.kv_cells();
    Job& j = *slot.job;
    if (!params_.prefix_cache || !slot.prefilling() || slot.n_past % kv.block_size() != 0) return;
    const std::vector<int32_t> toks = j.tokens();
    const auto limit = static_cast<uint32_t>(j.output.empty() ? toks.size() - 1 : toks.size());
    const uint32_t got = kv.seq_reuse_cached(slot.seq, toks, limit);
    slot.n_past += got;
    if (j.preemptions == 0) j.n_cached += static_cast<int32_t>(got);
}

void Scheduler::preempt(Slot& slot, double t, std::vector<Event>& ev) {
    Job& j = *slot.job;
    ++j.preemptions;
    Event e;
    e.type = EventType::Preempted;
    e.id = j.id;
    e.label = j.req.label;
    e.time_ms = t;
    e.slot = slot.seq;
    e.message = "KV pool full: an older request needed its blocks; it waits and recomputes";
    ev.push_back(std::move(e));
    metrics_.record_preempted(t);
    model_.seq_rm(slot.seq);
    // The draft model's sequence goes too: it would hold blocks of the
    // draft's pool while the request waits, and the request may come back
    // in another slot (it is fed its history again then).
    if (draft_model_ && j.req.speculative.kind == SpeculativeParams::Kind::DraftModel) {
        draft_model_->release(slot.seq);
    }
    j.queue_deadline_ms = kNever;  // the queue-wait limit is for the first admission
    preempted_.push_back(std::move(slot.job));
    slot.n_past = 0;
    slot.batch_tokens = 0;
}

void Scheduler::finish_slot(Slot& slot, FinishReason reason, std::string message, double t,
                            std::vector<Event>& ev) {
    ev.push_back(finish_job(*slot.job, reason, std::move(message), t));
    // A request that ends inside a verified draft holds K/V of tokens after
    // its end: drop them first, so the tail block cached by seq_rm is the
    // one plain decoding would cache.
    model::KvCells& kv = model_.kv_cells();
    if (static_cast<size_t>(kv.next_pos(slot.seq)) > slot.n_past) {
        kv.seq_truncate(slot.seq, static_cast<uint32_t>(slot.n_past));
    }
    if (draft_model_ && slot.job->req.speculative.kind == SpeculativeParams::Kind::DraftModel) {
        draft_model_->release(slot.seq);
    }
    model_.seq_rm(slot.seq);
    slot.job.reset();
    slot.n_past = 0;
    slot.batch_tokens = 0;
}

void Scheduler::on_token(Slot& slot, int32_t token, std::optional<sampling::TokenLogprobs> lp,
                         double t, std::vector<Event>& ev) {
    Job& job = *slot.job;
    if (!job.prefix_recorded) {
        // The first prefill is done: what the prefix cache saved is final.
        job.prefix_recorded = true;
        metrics_.record_prefix_cache(t, static_cast<uint32_t>(job.prompt.size()),
                                     static_cast<uint32_t>(job.n_cached));
    }
    if (!job.req.ignore_eos && vocab_.is_eog(token)) {
        finish_slot(slot, FinishReason::Stop, "end of generation token " + std::to_string(token), t,
                    ev);
        return;
    }
    job.output.push_back(token);
    const size_t index = job.output.size() - 1;
    if (index == 0) {
        metrics_.record_first_token(t, t - job.tl.submitted_ms);
        Event f;
        f.type = EventType::FirstToken;
        f.id = job.id;
        f.label = job.req.label;
        f.time_ms = t;
        f.token = token;
        f.index = 0;
        ev.push_back(std::move(f));
    } else {
        metrics_.record_inter_token(t, t - job.tl.token_ms.back());
    }
    job.tl.token_ms.push_back(t);

    Event e;
    e.type = EventType::Token;
    e.id = job.id;
    e.label = job.req.label;
    e.time_ms = t;
    e.token = token;
    e.index = static_cast<int32_t>(index);
    e.piece = job.stops->push(job.detok->push(token));
    if (lp) {
        job.logprobs.push_back(*lp);
        e.logprobs = std::move(lp);
    }
    ev.push_back(std::move(e));

    if (job.stops->stopped()) {
        finish_slot(slot, FinishReason::Stop, "stop string", t, ev);
    } else if (static_cast<int32_t>(job.output.size()) >= job.req.max_tokens) {
        finish_slot(slot, FinishReason::Length, "max_tokens reached", t, ev);
    } else if (slot.n_past >= n_ctx_) {
        finish_slot(slot, FinishReason::Context,
                    "the sequence reached the context size (n_ctx " + std::to_string(n_ctx_) +
                        " tokens, prompt and output)",
                    t, ev);
    }
}

void Scheduler::step(std::vector<Event>& ev) {
    model::KvCells& kv = model_.kv_cells();
    const uint32_t bs = kv.block_size();
    // Busy slots, oldest (first) admission first: they get tokens and
    // blocks first, and preemption takes the youngest.
    std::vector<Slot*> order;
    for (Slot& s : slots_) {
        if (s.busy()) order.push_back(&s);
    }
    std::sort(order.begin(), order.end(), [](const Slot* a, const Slot* b) {
        return a->job->admitted_order < b->job->admitted_order;
    });
    for (Slot* s : order) extend_prefix(*s);

    // Drafts first: the decode rows of every decoding request, and the
    // drafts of those that speculate, come before prefill chunks in the
    // step's token budget (prefill takes what is left). The drafter runs
    // here, once per speculating request, one after the other.
    uint32_t n_decoding = 0;
    for (const Slot* s : order) n_decoding += s->decoding() ? 1 : 0;
    uint32_t draft_budget = params_.step_tokens - std::min(params_.step_tokens, n_decoding);
    uint32_t n_drafted = 0;
    for (Slot* s : order) {
        s->draft.clear();
        if (!s->decoding() || !s->job->spec_k) continue;
        s->draft = propose_draft(*s, draft_budget, n_decoding + n_drafted, ev);
        if (!s->busy()) continue;  // the drafter failed and ended it
        draft_budget -= static_cast<uint32_t>(s->draft.size());
        n_drafted += static_cast<uint32_t>(s->draft.size());
    }

    // Plan each slot's tokens: a decode token, or a prefill chunk within the
    // step's budget (the decode tokens of younger slots keep their place);
    // blocks for them, preempting the youngest when the pool is short.
    const double t_plan = now_ms();
    uint32_t budget = params_.step_tokens - n_drafted;
    uint32_t decodes_left = 0;
    for (const Slot* s : order) decodes_left += s->decoding() ? 1 : 0;
    uint32_t planned_blocks = 0;
    std::unordered_set<uint64_t> in_flight;  // hashes of full blocks this ubatch computes
    std::vector<Slot*> planned;              // slots with tokens in this ubatch, oldest first
    for (size_t i = 0; i < order.size(); ++i) {
        Slot* s = order[i];
        if (!s->busy()) continue;  // preempted for an older one
        s->batch_tokens = 0;
        const bool decode = s->decoding();
        size_t want = 1;
        std::vector<int32_t> toks;  // the sequence's tokens, when a prefill needs them
        if (decode) {
            --decodes_left;
        } else {
            want = std::min<size_t>(
                {s->job->target() - s->n_past, params_.prefill_chunk, budget - decodes_left});
            if (want == 0) continue;
            toks = s->job->tokens();
            // Another request computes this chunk's first block in this very
            // ubatch: take it from the cache next step instead.
            if (params_.prefix_cache && s->n_past % bs == 0 && toks.size() >= s->n_past + bs &&
                !in_flight.empty()) {
                const uint64_t h = model::KvBlockPool::hash_block(
                    kv.seq_prefix_hash(s->seq),
                    std::span<const int32_t>(toks.data() + s->n_past, bs));
                if (in_flight.contains(h)) continue;
            }
        }
        uint32_t need = kv.blocks_needed(s->seq, static_cast<uint32_t>(want));
        bool gone = false;
        for (;;) {
            const uint32_t free_now = kv.n_free_blocks();
            const uint32_t avail = free_now > planned_blocks ? free_now - planned_blocks : 0;
            if (need <= avail) break;
            Slot* victim = nullptr;  // the youngest busy slot after this one
            for (size_t k = order.size(); k-- > i + 1;) {
                if (order[k]->busy()) {
                    victim = order[k];
                    break;
                }
            }
            if (victim) {
                preempt(*victim, t_plan, ev);
                continue;
            }
            // This slot is the youngest left: a prefill chunk shrinks to the
            // room there is; else it waits for the older ones, or, alone,
            // it has filled the whole pool.
            const size_t room = kv.seq_blocks(s->seq).size() * bs - s->n_past + size_t{avail} * bs;
            if (!decode && room > 0) {
                want = std::min(want, room);
                need = kv.blocks_needed(s->seq, static_cast<uint32_t>(want));
                continue;
            }
            if (!planned.empty()) {
                preempt(*s, t_plan, ev);
            } else {
                finish_slot(*s, FinishReason::Context,
                            "the KV pool is full: this request alone holds all " +
                                std::to_string(kv.size()) + " cells (n_ctx " +
                                std::to_string(model_.context().n_ctx) + ")",
                            t_plan, ev);
            }
            gone = true;
            break;
        }
        if (gone) continue;
        planned_blocks += need;
        s->batch_tokens = want;
        budget -= static_cast<uint32_t>(want);
        planned.push_back(s);
        if (!decode && params_.prefix_cache) {
            // The full blocks this chunk completes, by their chain hash.
            uint64_t h = kv.seq_prefix_hash(s->seq);
            for (size_t b0 = s->n_past / bs * bs; b0 + bs <= s->n_past + want; b0 += bs) {
                h = model::KvBlockPool::hash_block(h,
                                                   std::span<const int32_t>(toks.data() + b0, bs));
                in_flight.insert(h);
            }
        }
    }

    // Drafts go LAST in the ubatch, after every token plain decoding would
    // compute: those take their new blocks first, in the same order as
    // without speculation. A draft may only use blocks still in the free set
    // then (no cached block evicted), so that seq_truncate leaves no trace.
    uint32_t free_left =
        kv.pool().n_free() > planned_blocks ? kv.pool().n_free() - planned_blocks : 0;
    for (Slot* s : planned) {
        if (s->draft.empty()) continue;
        const uint32_t fed = kv.blocks_needed(s->seq, 1);
        size_t d = s->draft.size();
        while (d > 0 && kv.blocks_needed(s->seq, static_cast<uint32_t>(1 + d)) - fed > free_left)
            --d;
        s->draft.resize(d);
        free_left -= kv.blocks_needed(s->seq, static_cast<uint32_t>(1 + d)) - fed;
    }

    // The ubatch: decode tokens first, then prefill chunks, oldest first,
    // then the drafts.
    batch_.clear();
    std::vector<Slot*> rows;       // [n_outputs] which slot each logits row belongs to
    std::vector<char> decode_row;  // [n_outputs] the row is a decode pass's (not a prefill's)
    uint32_t n_prefill = 0;
    for (Slot* s : planned) {
        if (!s->decoding()) continue;
        Job& j = *s->job;
        s->fed_row = rows.size();
        batch_.add(j.output.back(), static_cast<int32_t>(s->n_past), s->seq, true);
        rows.push_back(s);
        decode_row.push_back(1);
        if (!j.spec_k) continue;
        ++j.spec.target_passes;
        ++j.spec.decode_rows;
        if (planned.size() > 1) ++j.spec.shared_passes;
    }
    for (Slot* s : planned) {
        if (s->decoding()) continue;
        const Job& j = *s->job;
        for (size_t k = 0; k < s->batch_tokens; ++k) {
            const size_t p = s->n_past + k;
            const int32_t tok = p < j.prompt.size() ? j.prompt[p] : j.output[p - j.prompt.size()];
            const bool last = j.output.empty() && p + 1 == j.prompt.size();
            batch_.add(tok, static_cast<int32_t>(p), s->seq, last);
            if (last) {
                rows.push_back(s);
                decode_row.push_back(0);
            }
        }
        n_prefill += static_cast<uint32_t>(s->batch_tokens);
    }
    for (Slot* s : planned) {
        if (s->draft.empty()) continue;
        s->draft_row = rows.size();
        for (size_t i = 0; i < s->draft.size(); ++i) {
            batch_.add(s->draft[i], static_cast<int32_t>(s->n_past + 1 + i), s->seq, true);
            rows.push_back(s);
            decode_row.push_back(1);
        }
        s->batch_tokens += s->draft.size();
        s->job->spec.decode_rows += static_cast<int32_t>(s->draft.size());
    }
    if (batch_.size() == 0) return;

    const double t0 = now_ms();
    try {
        model_.decode(batch_, logits_);
    } catch (const std::exception& e) {
        // The cache is unchanged (Model::decode's contract); the requests in
        // this ubatch cannot go on, the others are untouched.
        const double t = now_ms();
        for (Slot* s : planned) {
            finish_slot(*s, FinishReason::Error, std::string("decode failed: ") + e.what(), t, ev);
        }
        return;
    }
    const double t = now_ms();
    pass_costs_.record(static_cast<uint32_t>(batch_.size()), t - t0);

    // The ubatch is in the cache now.
    for (Slot* s : planned) {
        Job& j = *s->job;
        if (s->prefilling()) {
            if (j.preemptions == 0) {
                j.n_computed += static_cast<int32_t>(s->batch_tokens);
            } else {
                j.n_recomputed += static_cast<int32_t>(s->batch_tokens);
            }
        }
        s->n_past += s->batch_tokens;
    }
    const size_t n_vocab = model_.hparams().n_vocab;
    uint32_t n_sampled = 0;  // output tokens emitted (a verify pass's kept ones, not its rows)
    for (size_t r = 0; r < rows.size(); ++r) {
        Slot& s = *rows[r];
        if (!s.draft.empty()) {
            if (r != s.fed_row) continue;  // a draft row: verified with the fed token's row
            // The fed token's row and the draft's rows, in order, contiguous.
            const size_t d = s.draft.size();
            spec_rows_.resize((d + 1) * n_vocab);
            std::copy_n(logits_.begin() + static_cast<long>(r * n_vocab), n_vocab,
                        spec_rows_.begin());
            std::copy_n(logits_.begin() + static_cast<long>(s.draft_row * n_vocab), d * n_vocab,
                        spec_rows_.begin() + static_cast<long>(n_vocab));
            n_sampled += verify_draft(s, spec_rows_, s.draft, t - t0, t, ev);
            continue;
        }
        std::span<const float> row(logits_.data() + r * n_vocab, n_vocab);
        int32_t token = -1;
        std::optional<sampling::TokenLogprobs> lp;
        try {
            token = s.job->sampler->sample(row);  // also records it for the penalty
            // The raw row, before the sampler's bias and penalties: the
            // model's own distribution (only when asked: O(n_vocab)).
            if (s.job->req.top_logprobs >= 0)
                lp = sampling::token_logprobs(row, token, s.job->req.top_logprobs);
        } catch (const std::exception& e) {
            // NaN / inf logits (a broken model): this request cannot go on;
            // the message names the step, the others in the ubatch continue.
            const size_t index = s.job->output.size();
            finish_slot(
                s, FinishReason::Error,
                "sampling output token " + std::to_string(index) +
                    (index == 0 ? " (from the prefill of " + std::to_string(s.job->prompt.size()) +
                                      " prompt tokens)"
                                : " (decode step " + std::to_string(index) + ")") +
                    ": " + e.what(),
                t, ev);
            continue;
        }
        if (decode_row[r] && s.job->spec_k) ++s.job->spec.decode_tokens;
        ++n_sampled;
        on_token(s, token, std::move(lp), t, ev);
    }
    for (Slot* s : planned) s->draft.clear();
    // A pass after a step that left no request running (or after the engine
    // slept) starts a busy stretch: the gap before it is idle time. Decode
    // tokens are the tokens emitted, not the rows computed: a verify pass's
    // k + 1 rows give 1 to k + 1 tokens (SpeculativeStats has both).
    // Busy time: the device's own (timestamp queries) where the model
    // reports it, at most the call's wall time; else the engine thread's
    // time in decode() (the CPU backends).
    const double device_ms = model_.last_device_ms();
    const double busy_ms = device_ms >= 0 ? std::min(device_ms, t - t0) : t - t0;
    // Telemetry: the pass's batch size and the KV pool after it, in blocks.
    const model::KvCells& kv_after = model_.kv_cells();
    const uint32_t block = std::max<uint32_t>(1, kv_after.block_size());
    metrics_.record_step(t, busy_ms, n_prefill, n_sampled, !busy_after_step_,
                         static_cast<uint32_t>(planned.size()),
                         (kv_after.size() - kv_after.n_free()) / block, kv_after.size() / block);
    busy_after_step_ =
        std::any_of(slots_.begin(), slots_.end(), [](const Slot& sl) { return sl.busy(); });
}

void Scheduler::set_draft_model(std::shared_ptr<speculative::Drafter> drafter) {
    draft_model_ = std::move(drafter);
}

std::vector<int32_t> Scheduler::propose_draft(Slot& slot, uint32_t budget, uint32_t n_base,
                                              std::vector<Event>& ev) {
    Job& j = *slot.job;
    slot.draft_ms = 0;
    const model::KvCells& kv = model_.kv_cells();
    // Positions the verify pass may add: the fed token plus the draft, all
    // in the sequence's last block or free blocks (no cached block evicted).
    const uint32_t room = kv.seq_room_without_eviction(slot.seq);
    size_t k = j.spec_k->next(n_base, pass_costs_);
    k = std::min<size_t>(k, room > 0 ? room - 1 : 0);
    k = std::min<size_t>(k, n_ctx_ > slot.n_past + 1 ? n_ctx_ - slot.n_past - 1 : 0);
    k = std::min<size_t>(k, static_cast<size_t>(j.req.max_tokens) - j.output.size() - 1);
    k = std::min<size_t>(k, budget);
    if (k == 0) return {};
    std::vector<int32_t> history = j.prompt;
    history.insert(history.end(), j.output.begin(), j.output.end());
    const double t0 = now_ms();
    std::vector<int32_t> draft;
    try {
        if (j.req.speculative.kind == SpeculativeParams::Kind::DraftModel) {
            draft = draft_model_->propose(slot.seq, history, static_cast<uint32_t>(k));
        } else {
            speculative::NgramDrafter ngram(j.req.speculative.ngram_min,
                                            j.req.speculative.ngram_max);
            draft = ngram.propose(slot.seq, history, static_cast<uint32_t>(k));
        }
    } catch (const std::exception& e) {
        finish_slot(slot, FinishReason::Error, std::string("draft failed: ") + e.what(), now_ms(),
                    ev);
        return {};
    }
    slot.draft_ms = now_ms() - t0;
    j.spec.draft_ms += slot.draft_ms;
    if (draft.size() > k) draft.resize(k);
    const uint32_t n_vocab = model_.hparams().n_vocab;
    for (size_t i = 0; i < draft.size(); ++i) {
        if (draft[i] < 0 || static_cast<uint32_t>(draft[i]) >= n_vocab) {
            draft.resize(i);  // a drafter outside the vocabulary: keep what is valid
            break;
        }
    }
    return draft;
}

size_t Scheduler::verify_draft(Slot& slot, std::span<const float> rows,
                               const std::vector<int32_t>& draft, double pass_ms, double t,
                               std::vector<Event>& ev) {
    Job& j = *slot.job;
    const size_t n_vocab = model_.hparams().n_vocab;
    const size_t base = slot.n_past - draft.size();  // positions once the fed token is in
    speculative::Verdict v;
    try {
        v = speculative::verify(*j.sampler, rows, static_cast<uint32_t>(n_vocab), draft);
    } catch (const std::exception& e) {
        slot.n_past = base;
        finish_slot(slot, FinishReason::Error,
                    "sampling output token " + std::to_string(j.output.size()) +
                        " (speculative decode step): " + e.what(),
                    t, ev);
        return 0;
    }
    ++j.spec.verify_passes;
    j.spec.verify_ms += pass_ms;
    j.spec.drafted += static_cast<int32_t>(draft.size());
    j.spec.accepted += static_cast<int32_t>(v.n_accepted);
    j.spec_k->update(static_cast<uint32_t>(draft.size()), v.n_accepted, slot.draft_ms);
    // The rejected tail goes; the pool is as if it had never been computed.
    model_.kv_cells().seq_truncate(slot.seq, static_cast<uint32_t>(base + v.n_accepted));
    for (size_t i = 0; i < v.tokens.size(); ++i) {
        // As plain decoding: when token i is emitted, the cache holds the
        // tokens before it (so a request ending here leaves that much).
        slot.n_past = base + i;
        std::optional<sampling::TokenLogprobs> lp;
        if (j.req.top_logprobs >= 0) {
            lp = sampling::token_logprobs(rows.subspan(i * n_vocab, n_vocab), v.tokens[i],
                                          j.req.top_logprobs);
        }
        ++j.spec.decode_tokens;
        on_token(slot, v.tokens[i], std::move(lp), t, ev);
        if (!slot.busy()) return i + 1;  // ended: later tokens are discarded
    }
    return v.tokens.size();
}

void Scheduler::deliver(std::vector<Event>& ev) {
    for (Event& e : ev) {
        const bool finished = e.type == EventType::Finished;
        const RequestId id = e.id;
        if (on_event_) on_event_(e);
        if (finished) {
            {
                std::lock_guard lock(mu_);
                live_.erase(id);
                cancels_.erase(id);
                --outstanding_;
            }
            idle_cv_.notify_all();
        }
    }
    ev.clear();
}

void Scheduler::run() {
    std::vector<Event> ev;
    for (;;) {
        bool stopping = false;
        int32_t queued = 0;
        {
            std::unique_lock lock(mu_);
            // Preempted requests go back to the head of the queue, in the
            // order of their first admission, ahead of never-admitted ones.
            for (std::unique_ptr<Job>& j : preempted_) {
                auto at = std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) {
                    return !w->admitted || w->admitted_order > j->admitted_order;
                });
                waiting_.insert(at, std::move(j));
            }
            preempted_.clear();
            // Sleep while there is nothing to do; wake for submissions,
            // cancels, stop, or the next queue deadline.
            for (;;) {
                if (stop_ || !pending_.empty() || !cancels_.empty()) break;
                const bool running = std::any_of(slots_.begin(), slots_.end(),
                                                 [](const Slot& s) { return s.busy(); });
                if (running || next_admissible_locked() >= 0) break;
                double next = kNever;
                for (const auto& j : waiting_) {
                    next = std::min({next, j->queue_deadline_ms, j->total_deadline_ms});
                }
                const double now = now_ms();
                if (next <= now) break;
                busy_after_step_ = false;  // the engine sleeps: what follows is idle time
                if (next == kNever) {
                    cv_.wait(lock);
                } else {
                    cv_.wait_for(lock, std::chrono::duration<double, std::milli>(next - now));
                }
            }
            const double now = now_ms();
            stopping = stop_;
            for (Event& e : pending_) ev.push_back(std::move(e));
            pending_.clear();

            // Cancels of queued requests end here; running ones are marked.
            for (RequestId id : cancels_) {
                auto it = std::find_if(waiting_.begin(), waiting_.end(),
                                       [&](const auto& j) { return j->id == id; });
                if (it != waiting_.end()) {
                    ev.push_back(
                        finish_job(**it, FinishReason::Cancelled, "cancelled in the queue", now));
                    waiting_.erase(it);
                    continue;
                }
                for (Slot& s : slots_) {
                    if (s.busy() && s.job->id == id) s.job->cancel = true;
                }
            }
            cancels_.clear();

            // Queue timeouts, then admission in arrival order.
            for (auto it = waiting_.begin(); it != waiting_.end();) {
                Job& j = **it;
                const bool total = now >= j.total_deadline_ms;
                if (stopping || total || now >= j.queue_deadline_ms) {
                    ev.push_back(finish_job(
                        j, stopping ? FinishReason::Cancelled : FinishReason::Timeout,
                        stopping ? "scheduler stopped"
                        : total  ? "total timeout of " + std::to_string(j.req.timeout_ms) +
                                      " ms passed in the queue"
                                : "queue-wait timeout of " +
                                      std::to_string(j.req.queue_timeout_ms) + " ms passed",
                        now));
                    it = waiting_.erase(it);
                } else {
                    ++it;
                }
            }
            // Cancelled, timed-out and stopped running requests free their
            // slots before admission, so the next request takes the slot in
            // this same step.
            for (Slot& s : slots_) {
                if (!s.busy()) continue;
                if (stopping) {
                    finish_slot(s, FinishReason::Cancelled, "scheduler stopped", now, ev);
                } else if (s.job->cancel) {
                    finish_slot(
                        s, FinishReason::Cancelled,
                        s.prefilling() ? "cancelled during prefill" : "cancelled during decode",
                        now, ev);
                } else if (now >= s.job->total_deadline_ms) {
                    finish_slot(s, FinishReason::Timeout,
                                "total timeout of " + std::to_string(s.job->req.timeout_ms) +
                                    " ms passed while running",
                                now, ev);
                }
            }
            // Admission in arrival order, within the limits (max_running,
            // per-client concurrency; a request whose client is at its limit
            // keeps its place while a later one of another client goes in)
            // and with room in the pool: the first admissible request that
            // does not fit waits, and so do the ones behind it.
            bool any_running =
                std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.busy(); });
            for (Slot& s : slots_) {
                if (s.busy()) continue;
                const long next = next_admissible_locked();
                if (next < 0) break;
                const auto at = waiting_.begin() + next;
                if (!try_admit(*at, s, blocks_reserved(), !any_running, now, ev)) break;
                waiting_.erase(at);
                any_running = true;
            }
            queued = static_cast<int32_t>(waiting_.size());
        }
        if (!stopping) step(ev);

        int32_t running = 0;
        for (const Slot& s : slots_) running += s.busy() ? 1 : 0;
        const model::KvCells& kv = model_.kv_cells();
        metrics_.set_gauges(queued + static_cast<int32_t>(preempted_.size()), running,
                            kv.size() - kv.n_free(), kv.size(),
                            kv.n_cached_blocks() * kv.block_size());
        deliver(ev);
        if (stopping) {
            std::lock_guard lock(mu_);
            // submit() refuses after stop_, but events it made are pending.
            if (pending_.empty()) break;
        }
    }
}

}  // namespace wb::scheduler
