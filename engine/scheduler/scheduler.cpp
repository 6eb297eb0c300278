#include "scheduler/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "sampling/sampler.h"
#include "scheduler/stop_strings.h"
#include "tokenizer/stream_detokenizer.h"

namespace wb::scheduler {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();

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
    }
    return "?";
}

/// A request between submit() and its Finished event.
struct Scheduler::Job {
    RequestId id = 0;
    Request req;
    std::vector<int32_t> prompt;  // [n_prompt] token ids
    metrics::RequestTimeline tl;
    double queue_deadline_ms = kNever;  // admission must happen before this
    double total_deadline_ms = kNever;  // finish must happen before this
};

/// One KV-cache sequence and the request running in it (job == nullptr: free).
struct Scheduler::Slot {
    int32_t seq = 0;
    std::unique_ptr<Job> job;
    uint64_t admitted_order = 0;  // admission counter: older requests prefill first
    size_t n_prompt_done = 0;     // prompt tokens already in the cache
    int32_t n_past = 0;           // cells this sequence uses (= next position)
    int32_t next_token = -1;      // sampled, to be fed at n_past next step (-1: none)
    size_t batch_tokens = 0;      // tokens of this slot in the current ubatch
    bool cancel = false;
    std::unique_ptr<sampling::Sampler> sampler;
    std::unique_ptr<tokenizer::StreamDetokenizer> detok;
    std::unique_ptr<StopStringMatcher> stops;
    std::vector<int32_t> output;  // [n_out] generated ids

    bool busy() const { return job != nullptr; }
    bool prefilling() const { return busy() && n_prompt_done < job->prompt.size(); }
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
    if (params_.n_parallel > 0) {
        n_ctx_slot_ = ctx.n_ctx / params_.n_parallel;
        if (n_ctx_slot_ == 0) {
            throw std::invalid_argument("scheduler: n_ctx " + std::to_string(ctx.n_ctx) +
                                        " is smaller than n_parallel " +
                                        std::to_string(params_.n_parallel));
        }
    }
    slots_.resize(params_.n_parallel);
    for (uint32_t i = 0; i < params_.n_parallel; ++i) slots_[i].seq = static_cast<int32_t>(i);
    metrics_.set_gauges(0, 0, ctx.n_ctx - model_.n_free_cells(), ctx.n_ctx);
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
                                      std::string message) {
    Event e;
    e.type = EventType::Finished;
    e.id = id;
    e.label = r.label;
    e.time_ms = now_ms();
    e.reason = reason;
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
    return SubmitResult{id, false, reason, std::move(message)};
}

SubmitResult Scheduler::submit(Request request) {
    // Validation and tokenization need no lock (the vocab is immutable).
    std::string invalid;
    std::vector<int32_t> prompt = request.prompt_tokens;
    const int32_t n_vocab = static_cast<int32_t>(model_.hparams().n_vocab);
    if (request.max_tokens <= 0) {
        invalid = "max_tokens must be >= 1, got " + std::to_string(request.max_tokens);
    } else if (prompt.empty() && request.prompt.empty()) {
        invalid = "empty prompt";
    } else {
        if (prompt.empty()) {
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
        } else if (invalid.empty() && prompt.size() > n_ctx_slot_) {
            invalid = "prompt is " + std::to_string(prompt.size()) +
                      " tokens, longer than the context of a slot (" + std::to_string(n_ctx_slot_) +
                      " = n_ctx " + std::to_string(model_.context().n_ctx) + " / n_parallel " +
                      std::to_string(params_.n_parallel) + ")";
        }
    }

    SubmitResult result;
    {
        std::lock_guard lock(mu_);
        const RequestId id = next_id_++;
        request.prompt_tokens = prompt;
        if (stop_) {
            // The engine thread may be gone: no event, the result says it all.
            return SubmitResult{id, false, FinishReason::Error, "scheduler stopped"};
        } else if (!invalid.empty()) {
            result = refuse_locked(id, request, FinishReason::Error, invalid);
        } else if (waiting_.size() >= params_.max_queue) {
            result = refuse_locked(id, request, FinishReason::Rejected,
                                   "queue full (" + std::to_string(waiting_.size()) +
                                       " requests waiting, max_queue " +
                                       std::to_string(params_.max_queue) + ")");
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
            result = SubmitResult{id, true, FinishReason::Stop, {}};
        }
    }
    cv_.notify_all();
    return result;
}

Event Scheduler::finish_job(Job& job, FinishReason reason, std::string message, double t) {
    job.tl.finished_ms = t;
    Event e;
    e.type = EventType::Finished;
    e.id = job.id;
    e.label = job.req.label;
    e.time_ms = t;
    e.reason = reason;
    e.message = std::move(message);
    e.prompt_tokens = job.prompt;
    e.timeline = job.tl;
    e.metrics = metrics::compute_request_metrics(job.tl);
    metrics_.record_finished(t, e.metrics, to_string(reason));
    return e;
}

void Scheduler::admit_locked(std::unique_ptr<Job> job, Slot& slot, double now,
                             std::vector<Event>& ev) {
    job->tl.admitted_ms = now;
    metrics_.record_admitted(now, now - job->tl.submitted_ms);
    slot.admitted_order = admissions_++;
    slot.n_prompt_done = 0;
    slot.n_past = 0;
    slot.next_token = -1;
    slot.cancel = false;
    slot.output.clear();
    slot.sampler = std::make_unique<sampling::Sampler>(job->req.sampling);
    // The prompt counts for the repetition penalty, as in llama.cpp's server.
    for (int32_t t : job->prompt) slot.sampler->accept(t);
    slot.detok = std::make_unique<tokenizer::StreamDetokenizer>(vocab_);
    slot.stops = std::make_unique<StopStringMatcher>(job->req.stop);
    Event e;
    e.type = EventType::Started;
    e.id = job->id;
    e.label = job->req.label;
    e.time_ms = now;
    e.slot = slot.seq;
    ev.push_back(std::move(e));
    slot.job = std::move(job);
}

void Scheduler::finish_slot(Slot& slot, FinishReason reason, std::string message, double t,
                            std::vector<Event>& ev) {
    Job& job = *slot.job;
    // Text still held back (an incomplete character, a possible stop-string
    // start) goes out with the Finished event.
    std::string tail;
    if (!slot.stops->stopped()) {
        tail = slot.stops->push(slot.detok->flush());
        tail += slot.stops->flush();
    }
    job.tl.generated_tokens = static_cast<int32_t>(slot.output.size());
    Event e = finish_job(job, reason, std::move(message), t);
    e.piece = std::move(tail);
    e.output_tokens = slot.output;
    e.output = slot.stops->text();
    e.prompt_tokens_processed = static_cast<int32_t>(slot.n_prompt_done);
    ev.push_back(std::move(e));
    model_.seq_rm(slot.seq);
    slot.job.reset();
    slot.sampler.reset();
    slot.detok.reset();
    slot.stops.reset();
    slot.next_token = -1;
}

void Scheduler::on_token(Slot& slot, int32_t token, double t, std::vector<Event>& ev) {
    Job& job = *slot.job;
    if (!job.req.ignore_eos && vocab_.is_eog(token)) {
        finish_slot(slot, FinishReason::Stop, "end of generation token " + std::to_string(token), t,
                    ev);
        return;
    }
    slot.output.push_back(token);
    const size_t index = slot.output.size() - 1;
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
    e.piece = slot.stops->push(slot.detok->push(token));
    ev.push_back(std::move(e));

    if (slot.stops->stopped()) {
        finish_slot(slot, FinishReason::Stop, "stop string", t, ev);
    } else if (static_cast<int32_t>(slot.output.size()) >= job.req.max_tokens) {
        finish_slot(slot, FinishReason::Length, "max_tokens reached", t, ev);
    } else if (static_cast<uint32_t>(slot.n_past) >= n_ctx_slot_) {
        finish_slot(slot, FinishReason::Length,
                    "context of the slot is full (" + std::to_string(n_ctx_slot_) + " tokens)", t,
                    ev);
    } else {
        slot.next_token = token;
    }
}

void Scheduler::step(std::vector<Event>& ev) {
    // Busy slots, oldest admission first: decode tokens go in first, then
    // prefill chunks in admission order.
    std::vector<Slot*> order;
    for (Slot& s : slots_) {
        if (s.busy()) order.push_back(&s);
    }
    std::sort(order.begin(), order.end(),
              [](const Slot* a, const Slot* b) { return a->admitted_order < b->admitted_order; });

    batch_.clear();
    std::vector<Slot*> rows;  // [n_outputs] which slot each logits row belongs to
    uint32_t budget = params_.step_tokens;
    uint32_t n_prefill = 0;
    for (Slot* s : order) {
        s->batch_tokens = 0;
        if (s->prefilling() || s->next_token < 0) continue;
        batch_.add(s->next_token, s->n_past, s->seq, true);
        s->batch_tokens = 1;
        rows.push_back(s);
        --budget;
    }
    for (Slot* s : order) {
        if (budget == 0) break;
        if (!s->prefilling()) continue;
        const std::vector<int32_t>& prompt = s->job->prompt;
        const size_t remaining = prompt.size() - s->n_prompt_done;
        const size_t n = std::min<size_t>({remaining, params_.prefill_chunk, budget});
        for (size_t i = 0; i < n; ++i) {
            const size_t p = s->n_prompt_done + i;
            const bool last = p + 1 == prompt.size();
            batch_.add(prompt[p], static_cast<int32_t>(p), s->seq, last);
            if (last) rows.push_back(s);
        }
        s->batch_tokens = n;
        n_prefill += static_cast<uint32_t>(n);
        budget -= static_cast<uint32_t>(n);
    }
    if (batch_.size() == 0) return;

    const double t0 = now_ms();
    try {
        model_.decode(batch_, logits_);
    } catch (const std::exception& e) {
        // The cache is unchanged (Model::decode's contract); the requests in
        // this ubatch cannot go on, the others are untouched.
        const double t = now_ms();
        for (Slot* s : order) {
            if (s->batch_tokens > 0) {
                finish_slot(*s, FinishReason::Error, std::string("decode failed: ") + e.what(), t,
                            ev);
            }
        }
        return;
    }
    const double t = now_ms();
    // A pass after a step that left no request running (or after the engine
    // slept) starts a busy stretch: the gap before it is idle time.
    metrics_.record_step(t, t - t0, n_prefill, static_cast<uint32_t>(rows.size()),
                         !busy_after_step_);

    // The ubatch is in the cache now.
    for (Slot* s : order) {
        if (s->batch_tokens == 0) continue;
        s->n_past += static_cast<int32_t>(s->batch_tokens);
        if (s->prefilling()) s->n_prompt_done += s->batch_tokens;
    }
    const size_t n_vocab = model_.hparams().n_vocab;
    for (size_t r = 0; r < rows.size(); ++r) {
        Slot& s = *rows[r];
        std::span<const float> row(logits_.data() + r * n_vocab, n_vocab);
        const int32_t token = s.sampler->sample(row);  // also records it for the penalty
        on_token(s, token, t, ev);
    }
    busy_after_step_ =
        std::any_of(slots_.begin(), slots_.end(), [](const Slot& sl) { return sl.busy(); });
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
            // Sleep while there is nothing to do; wake for submissions,
            // cancels, stop, or the next queue deadline.
            for (;;) {
                if (stop_ || !pending_.empty() || !cancels_.empty()) break;
                const bool running = std::any_of(slots_.begin(), slots_.end(),
                                                 [](const Slot& s) { return s.busy(); });
                const bool free_slot = std::any_of(slots_.begin(), slots_.end(),
                                                   [](const Slot& s) { return !s.busy(); });
                if (running || (free_slot && !waiting_.empty())) break;
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
                    if (s.busy() && s.job->id == id) s.cancel = true;
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
                } else if (s.cancel) {
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
            for (Slot& s : slots_) {
                if (waiting_.empty()) break;
                if (s.busy()) continue;
                std::unique_ptr<Job> job = std::move(waiting_.front());
                waiting_.pop_front();
                admit_locked(std::move(job), s, now, ev);
            }
            queued = static_cast<int32_t>(waiting_.size());
        }
        if (!stopping) step(ev);

        int32_t running = 0;
        for (const Slot& s : slots_) running += s.busy() ? 1 : 0;
        const uint32_t n_ctx = model_.context().n_ctx;
        metrics_.set_gauges(queued, running, n_ctx - model_.n_free_cells(), n_ctx);
        deliver(ev);
        if (stopping) {
            std::lock_guard lock(mu_);
            // submit() refuses after stop_, but events it made are pending.
            if (pending_.empty()) break;
        }
    }
}

}  // namespace wb::scheduler
