#include "core/batch_runner.h"

#include <chrono>
#include <mutex>

namespace wb::core {

struct BatchRunner::State {
    EngineSession& session;
    const std::vector<PromptEntry> entries;
    const BatchOptions opts;
    const std::function<void(const BatchEvent&)> on_event;

    mutable std::mutex mu;
    size_t next = 0;  // next entry to submit
    Progress progress;
    std::vector<RequestHandle> handles;  // [entries] once submitted
    std::vector<uint8_t> started;        // [entries]
    std::vector<uint8_t> finished;       // [entries]
    bool cancelled = false;
    bool feeding = false;     // a thread is in feed()'s loop
    bool feed_again = false;  // another thread asked while it was

    State(EngineSession& s, std::vector<PromptEntry> e, BatchOptions o,
          std::function<void(const BatchEvent&)> cb)
        : session(s), entries(std::move(e)), opts(std::move(o)), on_event(std::move(cb)) {
        progress.total = entries.size();
        handles.resize(entries.size());
        started.assign(entries.size(), 0);
        finished.assign(entries.size(), 0);
    }
};

void BatchRunner::on_request_event(const std::shared_ptr<State>& st, size_t index,
                                   const RequestEvent& e) {
    BatchEvent be;
    be.index = index;
    be.time_ms = e.time_ms;
    be.result = e.result;
    switch (e.type) {
        case RequestEvent::Type::Queued:
            return;
        case RequestEvent::Type::Token:
            be.type = BatchEvent::Type::Token;
            be.piece = e.piece;
            if (st->on_event) st->on_event(be);
            return;
        case RequestEvent::Type::Preempted:
        case RequestEvent::Type::Resumed: {
            // Back in the queue and out again: the progress counts follow.
            std::lock_guard lock(st->mu);
            Progress& p = st->progress;
            if (e.type == RequestEvent::Type::Preempted) {
                --p.running;
                ++p.waiting;
            } else {
                ++p.running;
                --p.waiting;
            }
            return;
        }
        case RequestEvent::Type::Started:
        case RequestEvent::Type::Finished:
            break;
    }
    {
        std::lock_guard lock(st->mu);
        Progress& p = st->progress;
        if (e.type == RequestEvent::Type::Started) {
            st->started[index] = 1;
            --p.waiting;
            ++p.running;
            be.type = BatchEvent::Type::Started;
        } else {
            if (st->started[index])
                --p.running;
            else
                --p.waiting;
            st->finished[index] = 1;
            ++p.finished;
            if (e.result && e.result->completed()) ++p.completed;
            be.type = BatchEvent::Type::Finished;
            be.piece = e.piece;
        }
    }
    if (st->on_event) st->on_event(be);
    feed(st);
}

// Submits entries while the batch may have more waiting. Re-entrant and
// thread-safe: a call made while another thread (or this one, from a sink)
// is in the loop makes that loop look again instead of running its own.
void BatchRunner::feed(const std::shared_ptr<State>& st) {
    {
        std::lock_guard lock(st->mu);
        if (st->feeding) {
            st->feed_again = true;
            return;
        }
        st->feeding = true;
    }
    for (;;) {
        size_t index = 0;
        GenerationRequest req;
        {
            std::lock_guard lock(st->mu);
            Progress& p = st->progress;
            if (st->cancelled || st->next >= st->entries.size() ||
                p.waiting >= st->opts.max_queue) {
                if (st->feed_again) {  // something changed meanwhile: look again
                    st->feed_again = false;
                    continue;
                }
                st->feeding = false;
                return;
            }
            index = st->next++;
            ++p.submitted;
            ++p.waiting;
            req = request_for(st->entries[index], index, st->opts);
        }
        std::weak_ptr<State> weak = st;
        RequestHandle h = st->session.submit(std::move(req), [weak, index](const RequestEvent& e) {
            if (auto s = weak.lock()) on_request_event(s, index, e);
        });
        std::lock_guard lock(st->mu);
        st->handles[index] = h;
        if (st->cancelled && !st->finished[index]) h.cancel();
    }
}

BatchRunner::BatchRunner(EngineSession& session, std::vector<PromptEntry> entries,
                         BatchOptions opts, std::function<void(const BatchEvent&)> on_event)
    : st_(std::make_shared<State>(session, std::move(entries), std::move(opts),
                                  std::move(on_event))) {}

BatchRunner::~BatchRunner() {
    // Cancels without reporting the never-submitted entries: the receiver
    // may be going away with the runner. The sinks hold the state weakly, so
    // events of submitted requests stop reaching on_event once an event
    // already being delivered returns.
    std::vector<RequestHandle> live;
    {
        std::lock_guard lock(st_->mu);
        st_->cancelled = true;
        for (size_t i = 0; i < st_->handles.size(); ++i)
            if (i < st_->next && !st_->finished[i]) live.push_back(st_->handles[i]);
        st_->next = st_->entries.size();
    }
    for (const RequestHandle& h : live) h.cancel();
}

GenerationRequest BatchRunner::request_for(const PromptEntry& entry, size_t index,
                                           const BatchOptions& opts) {
    GenerationRequest r = opts.base;
    r.messages.clear();
    r.prompt_tokens.clear();
    r.prompt = entry.prompt;
    r.messages = entry.messages;
    if (!opts.system_prompt.empty()) {
        if (r.messages.empty()) r.messages = {{"user", entry.prompt}};
        if (r.messages.front().role != "system")
            r.messages.insert(r.messages.begin(), {"system", opts.system_prompt});
    }
    if (!r.messages.empty()) r.prompt.clear();  // rendered by the chat template
    r.label = entry.id;
    if (entry.max_tokens) r.max_tokens = *entry.max_tokens;
    r.stop = entry.stop;
    r.stop.insert(r.stop.end(), opts.base.stop.begin(), opts.base.stop.end());
    r.seed.index = index;  // used by BasePlusIndex only
    return r;
}

void BatchRunner::start() {
    st_->session.set_client_limit(st_->opts.base.client_id, st_->opts.concurrency);
    feed(st_);
}

void BatchRunner::cancel() {
    std::vector<RequestHandle> live;
    size_t first_unsubmitted = 0;
    {
        std::lock_guard lock(st_->mu);
        if (st_->cancelled) return;
        st_->cancelled = true;
        for (size_t i = 0; i < st_->handles.size(); ++i)
            if (i < st_->next && !st_->finished[i]) live.push_back(st_->handles[i]);
        // Entries not submitted yet end here; feed() submits nothing more.
        first_unsubmitted = st_->next;
        st_->next = st_->entries.size();
    }
    for (const RequestHandle& h : live) h.cancel();
    for (size_t i = first_unsubmitted; i < st_->entries.size(); ++i) {
        // Recorded (its run-log row) by the session like every other request.
        std::shared_ptr<const FinishedRequest> f = st_->session.finish_unsubmitted(
            request_for(st_->entries[i], i, st_->opts), "cancelled before it was submitted");
        {
            std::lock_guard lock(st_->mu);
            st_->finished[i] = 1;
            ++st_->progress.finished;
        }
        BatchEvent be;
        be.type = BatchEvent::Type::Finished;
        be.index = i;
        be.time_ms = f->times.finished_ms;
        be.result = std::move(f);
        if (st_->on_event) st_->on_event(be);
    }
}

BatchRunner::Progress BatchRunner::progress() const {
    std::lock_guard lock(st_->mu);
    return st_->progress;
}

bool BatchRunner::done() const {
    std::lock_guard lock(st_->mu);
    return st_->progress.finished == st_->progress.total;
}

const std::vector<PromptEntry>& BatchRunner::entries() const {
    return st_->entries;
}

}  // namespace wb::core
