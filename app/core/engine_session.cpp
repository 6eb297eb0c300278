#include "core/engine_session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "errors/errors.h"
#include "gguf/gguf.h"
#include "model/hparams.h"
#include "speculative/draft_model_drafter.h"

namespace wb::core {

namespace {

int64_t utc_now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

/// What a session holds; shared with the handles (weakly), so a handle's
/// cancel() after the session is gone does nothing.
struct detail::SessionCore {
    /// What the session knows of a request between submit and Finished.
    struct Pending {
        EventSink sink;
        std::string label, client_id;
        int64_t run_id = 0;
        PromptMode mode = PromptMode::Raw;
        std::vector<chat::Message> messages;
        std::string prompt;  // the text the model sees ("" for tokens)
        uint64_t seed = 0;
        SeedPolicy seed_policy = SeedPolicy::Fixed;
        PromptFacts prompt_facts;
        nlohmann::json settings;
        std::vector<int32_t> prompt_tokens;  // [n_prompt]
        double submitted_ms = NAN;           // the Queued event's time
        std::string cancel_message;          // cancel(id, why): the Cancelled finish's message
        bool refused = false;
        bool started = false;  // the first Started was seen (later ones are resumptions)
    };

    /// One event on its way to the recorder and its sink.
    struct Delivery {
        EventSink sink;
        int64_t run_id = 0;
        RequestEvent event;
    };

    uint64_t session_id = 0;  // FinishedRequest::session_id
    std::string path;
    tokenizer::Vocab vocab;
    std::unique_ptr<model::Model> model;
    EngineFacts facts;
    model::DeviceFacts device;
    uint32_t n_ctx_train = 0;    // model::HParams::n_ctx_train (0 = unknown)
    int64_t utc_at_zero_ms = 0;  // UTC ms of the scheduler clock's zero
    SessionLoadTimes load_times;

    // tokenizer.chat_template as read at open (nullopt: absent) and why it
    // could not be read ("" when it could): templates are chosen from these.
    std::optional<std::string> model_template;
    std::string template_read_error;

    mutable std::mutex mu;  // pending, hook, recorder, the delivery queue
    std::unordered_map<uint64_t, Pending> pending;
    EngineSession::FinishHook finish_hook;
    std::shared_ptr<RequestRecorder> recorder;

    // Events from the engine thread to the delivery thread (under mu).
    std::deque<Delivery> queue;
    bool delivering = false;              // the delivery thread is handing events out
    size_t finishing = 0;                 // Finished events queued or being delivered
    bool delivery_stop = false;           // the delivery thread ends once the queue is empty
    std::condition_variable delivery_cv;  // the queue or `delivering` changed
    std::thread delivery_thread;

    // Delivery thread only: each recorded request's started snapshot and text.
    struct Streaming {
        std::shared_ptr<const FinishedRequest> started;
        std::string text;
        int64_t tokens = 0;
    };
    std::unordered_map<uint64_t, Streaming> streaming;

    // Chat continuations: a finished chat request's prompt and reply as the
    // ids they ran as, with the text those ids spell (pieces with special
    // tokens). A later chat prompt that renders this text first (the next
    // turn of the conversation) starts with these ids instead of a fresh
    // tokenization of the history: a reply's generated ids are seldom the
    // ids its text tokenizes to, and any difference ends the prefix-cache
    // match there (llama.cpp's server keeps the generated tokens likewise).
    struct Continuation {
        std::string text;          // what `ids` spell, special tokens as text
        std::vector<int32_t> ids;  // [n_prompt + n_out]
    };
    static constexpr size_t kMaxContinuations = 64;
    mutable std::mutex continuations_mu;
    std::deque<Continuation> continuations;  // newest last

    /// Concatenated token_to_piece(id, special=true) of `ids`.
    std::string spell(const std::vector<int32_t>& ids) const {
        std::string s;
        for (int32_t id : ids) s += vocab.token_to_piece(id, /*special=*/true);
        return s;
    }

    // Engine thread: keeps a finished chat request's ids for the next turn.
    void remember_continuation(const FinishedRequest& f) {
        if (f.mode != PromptMode::Chat || f.refused || f.output_tokens.empty() ||
            f.prompt_tokens.empty() || f.prompt.empty())
            return;
        Continuation k;
        k.ids = f.prompt_tokens;
        k.ids.insert(k.ids.end(), f.output_tokens.begin(), f.output_tokens.end());
        k.text = f.prompt + spell(f.output_tokens);
        std::lock_guard<std::mutex> lock(continuations_mu);
        continuations.push_back(std::move(k));
        while (continuations.size() > kMaxContinuations) continuations.pop_front();
    }

    /// The ids for chat prompt `text` (freshly tokenized as `fresh`) that
    /// continue the longest kept conversation whose text `text` starts
    /// with: its ids, then the rest of `text` tokenized on its own. Only
    /// when those ids spell exactly what `fresh` spells (else, or with no
    /// such conversation, nullopt: use `fresh`).
    std::optional<std::vector<int32_t>> continue_chat(const std::string& text,
                                                      const std::vector<int32_t>& fresh,
                                                      bool parse_special) const {
        Continuation best;
        {
            std::lock_guard<std::mutex> lock(continuations_mu);
            for (const Continuation& k : continuations) {
                if (k.text.size() > text.size() || k.text.size() <= best.text.size()) continue;
                if (text.compare(0, k.text.size(), k.text) == 0) best = k;
            }
        }
        if (best.ids.empty()) return std::nullopt;
        std::vector<int32_t> ids = std::move(best.ids);
        const std::vector<int32_t> tail = vocab.tokenize(
            std::string_view(text).substr(best.text.size()), /*add_special=*/false, parse_special);
        ids.insert(ids.end(), tail.begin(), tail.end());
        if (ids == fresh || spell(ids) != spell(fresh)) return std::nullopt;
        return ids;
    }

    // Parsed chat templates by name ("model" for "" too), parsed on first use.
    mutable std::mutex templates_mu;
    mutable std::map<std::string, std::shared_ptr<const chat::TemplateChoice>> templates;

    std::unique_ptr<model::Model> draft_model;    // SessionOptions::draft_model, or null
    std::unique_ptr<scheduler::Scheduler> sched;  // uses everything above; stopped first

    // A sequence of `n_tokens` goes past the training context (FinishedRequest::past_n_ctx_train).
    bool past_n_ctx_train(size_t n_tokens) const {
        return n_ctx_train > 0 && n_tokens > n_ctx_train;
    }

    // The request's own fields, the same in the Started snapshot and the
    // Finished result: copied from a request still running (const
    // Pending&), moved from one that has ended (Pending&&).
    template <class P>
    std::shared_ptr<FinishedRequest> describe(P&& p, uint64_t id) const {
        auto f = std::make_shared<FinishedRequest>();
        f->session_id = session_id;
        f->id = id;
        f->label = std::forward<P>(p).label;
        f->client_id = std::forward<P>(p).client_id;
        f->run_id = p.run_id;
        f->mode = p.mode;
        f->messages = std::forward<P>(p).messages;
        f->prompt = std::forward<P>(p).prompt;
        f->refused = p.refused;
        f->seed = p.seed;
        f->seed_policy = p.seed_policy;
        f->prompt_facts = std::forward<P>(p).prompt_facts;
        f->settings = std::forward<P>(p).settings;
        f->model_path = path;
        f->device = device;
        f->n_ctx_train = n_ctx_train;
        return f;
    }

    std::shared_ptr<FinishedRequest> finished(Pending&& p, const scheduler::Event& e) const {
        std::shared_ptr<FinishedRequest> f = describe(std::move(p), e.id);
        f->prompt_tokens = e.prompt_tokens;
        f->prompt_tokens_cached = e.prompt_tokens_cached;
        f->prompt_tokens_computed = e.prompt_tokens_processed;
        f->preemptions = e.preemptions;
        f->speculative = e.speculative;
        f->output_tokens = e.output_tokens;
        f->logprobs = e.output_logprobs;
        f->past_n_ctx_train = past_n_ctx_train(f->prompt_tokens.size() + f->output_tokens.size());
        f->output = e.output;
        f->finish_reason = scheduler::to_string(e.reason);
        f->message = e.reason == scheduler::FinishReason::Cancelled && !p.cancel_message.empty()
                         ? p.cancel_message
                         : e.message;
        f->error_kind = e.error_kind;
        const metrics::RequestTimeline& t = e.timeline;
        f->times.submitted_ms = t.submitted_ms;
        f->times.admitted_ms = t.admitted_ms;
        if (!t.token_ms.empty()) {
            f->times.first_token_ms = t.token_ms.front();
            f->times.last_token_ms = t.token_ms.back();
        }
        f->times.finished_ms = t.finished_ms;
        f->times.itl_ms = e.metrics.itl_ms;
        f->submitted_utc_ms = utc_at_zero_ms + static_cast<int64_t>(std::llround(t.submitted_ms));
        return f;
    }

    // The request as it is admitted (RequestEvent::result of Started): what
    // a run-log row written at that moment holds.
    std::shared_ptr<FinishedRequest> started(const Pending& p, const scheduler::Event& e) const {
        std::shared_ptr<FinishedRequest> f = describe(p, e.id);
        f->prompt_tokens = p.prompt_tokens;
        f->prompt_tokens_cached = e.cached_tokens;
        f->past_n_ctx_train = past_n_ctx_train(f->prompt_tokens.size());
        f->finish_reason = "interrupted";  // what the row says until the finish overwrites it
        f->times.submitted_ms = std::isnan(p.submitted_ms) ? e.time_ms : p.submitted_ms;
        f->times.admitted_ms = e.time_ms;
        f->submitted_utc_ms =
            utc_at_zero_ms + static_cast<int64_t>(std::llround(f->times.submitted_ms));
        return f;
    }

    // Engine thread: queues the event for the delivery thread (never waits on it).
    void dispatch(const scheduler::Event& e) {
        if (e.type == scheduler::EventType::FirstToken) return;  // a Token event follows
        Delivery d;
        RequestEvent& re = d.event;
        re.id = e.id;
        re.time_ms = e.time_ms;
        {
            std::lock_guard lock(mu);
            auto it = pending.find(e.id);
            if (it == pending.end()) return;
            Pending& p = it->second;
            d.sink = p.sink;
            d.run_id = p.run_id;
            switch (e.type) {
                case scheduler::EventType::Queued:
                    p.submitted_ms = e.time_ms;
                    re.type = RequestEvent::Type::Queued;
                    break;
                case scheduler::EventType::Started:
                    re.type = p.started ? RequestEvent::Type::Resumed : RequestEvent::Type::Started;
                    if (!p.started) re.result = started(p, e);
                    p.started = true;
                    break;
                case scheduler::EventType::Preempted:
                    re.type = RequestEvent::Type::Preempted;
                    break;
                case scheduler::EventType::Token:
                    re.type = RequestEvent::Type::Token;
                    re.token = e.token;
                    re.index = e.index;
                    re.piece = e.piece;
                    re.logprobs = e.logprobs;
                    break;
                case scheduler::EventType::Finished:
                    re.type = RequestEvent::Type::Finished;
                    re.piece = e.piece;
                    re.result = finished(std::move(p), e);
                    remember_continuation(*re.result);
                    pending.erase(it);
                    ++finishing;
                    break;
                case scheduler::EventType::FirstToken:
                    return;
            }
            queue.push_back(std::move(d));
        }
        delivery_cv.notify_all();
    }

    // Delivery thread: the recorder first (requests with a run id), then
    // the finish hook, then the request's sink.
    void deliver(const Delivery& d, RequestRecorder* rec, const EngineSession::FinishHook& hook) {
        const RequestEvent& e = d.event;
        const bool finished_event = e.type == RequestEvent::Type::Finished;
        if (rec && d.run_id != 0) {
            switch (e.type) {
                case RequestEvent::Type::Started:
                    if (e.result) {
                        streaming[e.id] = Streaming{e.result, {}, 0};
                        rec->request_started(e.result);
                    }
                    break;
                case RequestEvent::Type::Token:
                    if (auto it = streaming.find(e.id); it != streaming.end()) {
                        Streaming& s = it->second;
                        s.text += e.piece;
                        rec->request_text(s.started, s.text, ++s.tokens, e.time_ms);
                    }
                    break;
                case RequestEvent::Type::Finished:
                    if (e.result) rec->request_finished(e.result);
                    break;
                case RequestEvent::Type::Queued:
                case RequestEvent::Type::Preempted:
                case RequestEvent::Type::Resumed:
                    break;
            }
        }
        if (finished_event) {
            streaming.erase(e.id);
            if (hook && e.result) hook(e.result);
        }
        if (d.sink) d.sink(e);
    }

    void delivery_loop() {
        std::unique_lock lock(mu);
        for (;;) {
            delivery_cv.wait(lock, [&] { return !queue.empty() || delivery_stop; });
            if (queue.empty()) return;  // stopped, and everything delivered
            std::deque<Delivery> batch;
            batch.swap(queue);
            delivering = true;
            const std::shared_ptr<RequestRecorder> rec = recorder;
            const EngineSession::FinishHook hook = finish_hook;
            lock.unlock();
            size_t finished_events = 0;
            for (const Delivery& d : batch) {
                deliver(d, rec.get(), hook);
                if (d.event.type == RequestEvent::Type::Finished) ++finished_events;
            }
            batch.clear();  // sinks and results released outside the lock
            lock.lock();
            finishing -= finished_events;
            delivering = false;
            delivery_cv.notify_all();
        }
    }

    // Any thread but the delivery thread: waits until every queued event is
    // delivered and, with `all`, no request is in flight. False at
    // `deadline` (nullopt: none), and at once on the delivery thread.
    bool wait_delivered(bool all, std::optional<std::chrono::steady_clock::time_point> deadline) {
        if (std::this_thread::get_id() == delivery_thread.get_id()) return false;
        std::unique_lock lock(mu);
        auto done = [&] { return queue.empty() && !delivering && (!all || pending.empty()); };
        if (!deadline) {
            delivery_cv.wait(lock, done);
            return true;
        }
        return delivery_cv.wait_until(lock, *deadline, done);
    }
};

namespace {

// Remembers `why` for the Cancelled finish of `id`, then cancels it.
bool cancel_in(detail::SessionCore& c, uint64_t id, const std::string& why) {
    if (!why.empty()) {
        std::lock_guard lock(c.mu);
        if (auto it = c.pending.find(id); it != c.pending.end()) it->second.cancel_message = why;
    }
    return c.sched->cancel(id);
}

}  // namespace

bool RequestHandle::cancel(const std::string& why) const {
    const std::shared_ptr<detail::SessionCore> c = core_.lock();
    return c && cancel_in(*c, id_, why);
}

std::unique_ptr<EngineSession> EngineSession::open(const std::string& path,
                                                   const SessionOptions& opts,
                                                   const LoadProgress& progress) {
    using clock = std::chrono::steady_clock;
    const clock::time_point opened = clock::now();
    auto ms_since = [](clock::time_point t) {
        return std::chrono::duration<double, std::milli>(clock::now() - t).count();
    };
    SessionLoadTimes times;
    times.opened_utc_ms = utc_now_ms();
    auto step = [&](double f, const char* what) {
        if (progress && !progress(f, what)) throw LoadCancelled();
    };
    step(0.05, "Reading the vocabulary");
    std::optional<tokenizer::Vocab> vocab;
    std::optional<std::string> model_template;
    std::string template_read_error;
    {
        const gguf::File file = gguf::File::open(path);
        vocab.emplace(tokenizer::Vocab::from_gguf(file));
        const model::HParams hp = model::HParams::from_gguf(file);
        if (vocab->n_tokens() != static_cast<int32_t>(hp.n_vocab)) {
            throw FormatError(path + ": tokenizer has " + std::to_string(vocab->n_tokens()) +
                              " tokens but token_embd has " + std::to_string(hp.n_vocab) + " rows");
        }
        try {
            model_template = file.get_string(chat::kChatTemplateKey);
        } catch (const gguf::Error& e) {
            template_read_error = e.what();  // chat_template() notes it and falls back
        }
    }
    times.vocab_ms = ms_since(opened);
    step(0.2, opts.load.backend == "cpu" ? "Loading weights (CPU reference)"
                                         : "Uploading weights to the device");
    const clock::time_point load_start = clock::now();
    std::unique_ptr<model::Model> m;
    if (opts.loader) {
        m = opts.loader(path, opts.load);
    } else {
        m = model::load_model_timed(path, opts.load, times.model);
        times.phases_known = true;
    }
    times.model_load_ms = ms_since(load_start);
    if (!m) throw std::runtime_error(path + ": the model loader returned no model");
    step(0.9, "Starting the scheduler");
    return std::unique_ptr<EngineSession>(
        new EngineSession(path, std::move(*vocab), std::move(model_template),
                          std::move(template_read_error), std::move(m), opts, times, opened));
}

EngineSession::EngineSession(std::string path, tokenizer::Vocab vocab,
                             std::optional<std::string> model_template,
                             std::string template_read_error, std::unique_ptr<model::Model> model,
                             const SessionOptions& opts, SessionLoadTimes times,
                             std::chrono::steady_clock::time_point opened)
    : core_(std::make_shared<detail::SessionCore>()) {
    static std::atomic<uint64_t> next_session_id{1};
    detail::SessionCore& c = *core_;
    c.session_id = next_session_id++;
    c.path = std::move(path);
    c.vocab = std::move(vocab);
    c.model = std::move(model);
    c.device = c.model->device_facts();
    c.n_ctx_train = c.model->hparams().n_ctx_train;
    c.model_template = std::move(model_template);
    c.template_read_error = std::move(template_read_error);

    scheduler::SchedulerParams p;
    p.n_parallel = c.model->context().n_seq_max;
    p.max_queue = opts.limits.max_queue;
    p.prefill_chunk = opts.prefill_chunk;
    p.step_tokens = std::max(opts.step_tokens, p.n_parallel);
    detail::SessionCore* raw = &c;
    c.sched = std::make_unique<scheduler::Scheduler>(
        *c.model, c.vocab, p, [raw](const scheduler::Event& e) { raw->dispatch(e); });
    c.sched->set_admission(opts.limits);
    if (!opts.draft_model.empty()) {
        // Same vocabulary or nothing: a draft token id must mean the same text.
        speculative::check_same_vocab(
            c.vocab, tokenizer::Vocab::from_gguf(gguf::File::open(opts.draft_model)));
        c.draft_model = model::load_model(opts.draft_model, opts.load);
        c.sched->set_draft_model(
            std::make_shared<speculative::DraftModelDrafter>(*c.draft_model, opts.draft_model));
    }
    c.utc_at_zero_ms = utc_now_ms() - static_cast<int64_t>(std::llround(c.sched->now_ms()));

    c.facts.n_ctx = c.model->context().n_ctx;
    c.facts.n_parallel = p.n_parallel;
    c.facts.kv_type = model::kv_type_name(c.model->context().kv_type);
    c.facts.backend = c.device.backend;
    c.facts.prefill_chunk = p.prefill_chunk;
    c.facts.step_tokens = p.step_tokens;
    c.facts.draft_model = opts.draft_model;
    c.sched->start();
    c.delivery_thread = std::thread([&c] { c.delivery_loop(); });
    times.ready_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - opened)
            .count();
    times.clock_zero_ms = times.ready_ms - c.sched->now_ms();
    c.load_times = times;
}

const SessionLoadTimes& EngineSession::load_times() const {
    return core_->load_times;
}

uint64_t EngineSession::session_id() const {
    return core_->session_id;
}

EngineSession::~EngineSession() {
    shutdown();
    detail::SessionCore& c = *core_;
    {
        std::lock_guard lock(c.mu);
        c.delivery_stop = true;
    }
    c.delivery_cv.notify_all();
    if (std::this_thread::get_id() == c.delivery_thread.get_id())
        c.delivery_thread.detach();  // a sink destroying its session: nothing is left to deliver
    else
        c.delivery_thread.join();
}

PreparedRequest EngineSession::prepare(GenerationRequest req) const {
    const detail::SessionCore& c = *core_;
    PreparedRequest p;
    p.session_id_ = c.session_id;
    p.n_ctx_train_ = c.n_ctx_train;
    p.prompt_facts_.add_bos = c.vocab.add_bos();
    p.prompt_facts_.pre_tokenizer = c.vocab.pre_family();
    p.problem_ = validate(req);
    const PromptMode mode = prompt_mode(req);
    if (p.problem_.empty()) {
        try {
            switch (mode) {
                case PromptMode::Chat: {
                    const std::shared_ptr<const chat::TemplateChoice> tmpl =
                        chat_template(req.chat_template);
                    p.template_note_ = tmpl->note;
                    chat::ChatPrompt cp =
                        chat::build_prompt(tmpl->tmpl, c.vocab, req.messages,
                                           /*add_generation_prompt=*/true, req.chat_vars);
                    // The next turn of a conversation this session ran
                    // continues its ids (SessionCore::continue_chat).
                    if (std::optional<std::vector<int32_t>> kept =
                            c.continue_chat(cp.text, cp.ids, cp.parse_special))
                        cp.ids = std::move(*kept);
                    p.prompt_ = std::move(cp.text);
                    p.prompt_tokens_ = std::move(cp.ids);
                    p.prompt_facts_.add_bos = cp.add_bos;
                    p.prompt_facts_.pre_tokenizer = cp.pre_tokenizer;
                    p.prompt_facts_.parse_special = cp.parse_special;
                    p.prompt_facts_.template_name = cp.template_name;
                    p.prompt_facts_.template_sha256 = cp.template_sha256;
                    if (p.prompt_tokens_.empty()) p.problem_ = "the chat prompt gives no tokens";
                    break;
                }
                case PromptMode::Raw:
                    p.prompt_ = req.prompt;
                    p.prompt_tokens_ = c.vocab.tokenize(req.prompt, /*add_special=*/true);
                    if (p.prompt_tokens_.empty()) p.problem_ = "the prompt gives no tokens";
                    break;
                case PromptMode::Tokens:
                    p.prompt_tokens_ = req.prompt_tokens;
                    break;
            }
        } catch (const std::exception& e) {
            // The template came from the model file: name it (a limit the
            // template hit reads "model:12: ..." on its own).
            p.problem_ = mode == PromptMode::Chat
                             ? "chat prompt cannot be rendered (" + c.path + "): " + e.what()
                             : std::string("prompt cannot be tokenized: ") + e.what();
        }
    }
    if (!p.problem_.empty()) p.prompt_tokens_.clear();
    p.request_ = std::move(req);
    return p;
}

std::string past_n_ctx_train_warning(size_t n_tokens, uint32_t n_ctx_train) {
    return std::to_string(n_tokens) + " tokens go past the model's training context (" +
           std::to_string(n_ctx_train) + " tokens); output past it is unreliable";
}

void PreparedRequest::set_settings(const GenerationRequest& from) {
    GenerationRequest r = from;
    r.messages = std::move(request_.messages);
    r.chat_vars = std::move(request_.chat_vars);
    r.chat_template = std::move(request_.chat_template);
    r.prompt = std::move(request_.prompt);
    r.prompt_tokens = std::move(request_.prompt_tokens);
    request_ = std::move(r);
    if (problem_.empty()) problem_ = validate(request_);
    if (!problem_.empty()) prompt_tokens_.clear();
}

RequestHandle EngineSession::submit(GenerationRequest req, EventSink sink) {
    // Rendering and tokenizing happen here, on the caller's thread, so the
    // engine thread and the dispatch lock never wait on a long prompt.
    return submit(prepare(std::move(req)), std::move(sink));
}

RequestHandle EngineSession::submit(PreparedRequest prepared, EventSink sink) {
    detail::SessionCore& c = *core_;
    if (prepared.session_id_ != c.session_id)
        prepared = prepare(std::move(prepared.request_));  // another session's vocabulary
    const GenerationRequest& req = prepared.request_;
    detail::SessionCore::Pending p;
    p.sink = std::move(sink);
    p.label = req.label;
    p.client_id = req.client_id;
    p.run_id = req.run_id;
    p.mode = prompt_mode(req);
    p.messages = req.messages;
    p.seed = resolve_seed(req.seed);
    p.seed_policy = req.seed.policy;
    p.prompt = prepared.prompt_;
    p.prompt_facts = prepared.prompt_facts_;

    scheduler::Request r;
    r.label = req.label;
    r.max_tokens = req.max_tokens;
    r.sampling = req.sampling;
    r.sampling.seed = p.seed;
    r.stop = req.stop;
    r.ignore_eos = req.ignore_eos;
    r.top_logprobs = req.top_logprobs;
    r.speculative = req.speculative;
    r.queue_timeout_ms = req.queue_timeout_ms;
    r.timeout_ms = req.timeout_ms;
    r.client = req.client_id;
    r.prompt_tokens = prepared.prompt_tokens_;
    const std::string& problem = prepared.problem_;
    p.settings = settings_json(req, p.seed, c.facts, p.prompt_facts);
    p.prompt_tokens = r.prompt_tokens;

    RequestHandle h;
    h.core_ = core_;
    h.seed_ = p.seed;
    scheduler::SubmitResult res;
    {
        // Held across the scheduler's submit so its first event cannot be
        // dispatched before the sink is registered.
        std::lock_guard lock(c.mu);
        res = problem.empty()
                  ? c.sched->submit(std::move(r))
                  : c.sched->reject(std::move(r), scheduler::FinishReason::Error, problem);
        p.refused = !res.accepted;
        if (!res.stopped) c.pending.emplace(res.id, p);
    }
    h.id_ = res.id;
    h.accepted_ = res.accepted;
    if (res.stopped) {
        // No engine thread to deliver it: the Finished event comes now.
        scheduler::Event e;
        e.type = scheduler::EventType::Finished;
        e.id = res.id;
        e.label = p.label;
        e.time_ms = now_ms();
        e.reason = scheduler::FinishReason::Error;
        e.message = "the session is shut down";
        e.timeline.submitted_ms = e.time_ms;
        e.timeline.finished_ms = e.time_ms;
        EventSink s = p.sink;
        RequestEvent re;
        re.type = RequestEvent::Type::Finished;
        re.id = res.id;
        re.time_ms = e.time_ms;
        const int64_t run_id = p.run_id;
        std::shared_ptr<FinishedRequest> fin = c.finished(std::move(p), e);
        EngineSession::FinishHook hook;
        std::shared_ptr<RequestRecorder> rec;
        {
            std::lock_guard lock(c.mu);
            hook = c.finish_hook;
            rec = c.recorder;
        }
        if (rec && run_id != 0) rec->request_finished(fin);
        if (hook) hook(fin);
        re.result = std::move(fin);
        if (s) s(re);
    }
    return h;
}

bool EngineSession::cancel(uint64_t id, const std::string& why) {
    return cancel_in(*core_, id, why);
}

void EngineSession::cancel_all() {
    std::vector<uint64_t> ids;
    {
        std::lock_guard lock(core_->mu);
        for (const auto& [id, p] : core_->pending) ids.push_back(id);
    }
    for (uint64_t id : ids) core_->sched->cancel(id);
}

void EngineSession::shutdown() {
    core_->sched->stop();  // every request's Finished (cancelled) is queued before it returns
    // ... and delivered before this returns (from a sink: after it returns).
    core_->wait_delivered(false, std::nullopt);
}

bool EngineSession::wait_idle(std::chrono::milliseconds timeout) {
    return core_->wait_delivered(true, std::chrono::steady_clock::now() + timeout);
}

size_t EngineSession::in_flight() const {
    std::lock_guard lock(core_->mu);
    return core_->pending.size() + core_->finishing;
}

void EngineSession::set_admission(const scheduler::AdmissionLimits& limits) {
    core_->sched->set_admission(limits);
}

scheduler::AdmissionLimits EngineSession::admission() const {
    return core_->sched->admission();
}

void EngineSession::set_client_limit(const std::string& client, uint32_t limit) {
    std::lock_guard lock(core_->mu);  // one read-modify-write at a time
    scheduler::AdmissionLimits l = core_->sched->admission();
    l.per_client[client] = limit;
    core_->sched->set_admission(l);
}

void EngineSession::set_finish_hook(FinishHook hook) {
    std::lock_guard lock(core_->mu);
    core_->finish_hook = std::move(hook);
}

void EngineSession::set_recorder(std::shared_ptr<RequestRecorder> recorder) {
    std::lock_guard lock(core_->mu);
    core_->recorder = std::move(recorder);
}

std::shared_ptr<const FinishedRequest> EngineSession::finish_unsubmitted(
    const GenerationRequest& r, const std::string& message) {
    detail::SessionCore& c = *core_;
    auto f = std::make_shared<FinishedRequest>();
    f->session_id = c.session_id;
    f->label = r.label;
    f->client_id = r.client_id;
    f->run_id = r.run_id;
    f->mode = prompt_mode(r);
    f->messages = r.messages;
    f->prompt = r.prompt;
    f->finish_reason = "cancelled";
    f->message = message;
    f->seed = resolve_seed(r.seed);
    f->seed_policy = r.seed.policy;
    f->prompt_facts.add_bos = c.vocab.add_bos();
    f->prompt_facts.pre_tokenizer = c.vocab.pre_family();
    f->settings = settings_json(r, f->seed, c.facts, f->prompt_facts);
    f->times.submitted_ms = f->times.finished_ms = now_ms();
    f->submitted_utc_ms = utc_now_ms();
    f->model_path = c.path;
    f->device = c.device;
    std::shared_ptr<RequestRecorder> rec;
    {
        std::lock_guard lock(c.mu);
        rec = c.recorder;
    }
    if (rec && f->run_id != 0) rec->request_finished(f);
    return f;
}

std::shared_ptr<const chat::TemplateChoice> EngineSession::chat_template(
    const std::string& name) const {
    const std::string key = name.empty() ? "model" : name;
    detail::SessionCore& c = *core_;
    {
        std::lock_guard lock(c.templates_mu);
        if (auto it = c.templates.find(key); it != c.templates.end()) return it->second;
    }
    // Parsed outside the lock (a large template takes a while); two threads
    // asking for the same new name parse it twice and keep the first.
    // The one rule (chat::choose_template) for every surface.
    chat::TemplateChoice chosen =
        chat::choose_template(c.model_template, c.template_read_error, c.vocab, key, c.path);
    auto choice = std::make_shared<const chat::TemplateChoice>(std::move(chosen));
    std::lock_guard lock(c.templates_mu);
    return c.templates.emplace(key, std::move(choice)).first->second;
}

const std::string& EngineSession::model_path() const {
    return core_->path;
}
model::Model& EngineSession::model() {
    return *core_->model;
}
const model::Model& EngineSession::model() const {
    return *core_->model;
}
const tokenizer::Vocab& EngineSession::vocab() const {
    return core_->vocab;
}
const EngineFacts& EngineSession::facts() const {
    return core_->facts;
}
const model::DeviceFacts& EngineSession::device() const {
    return core_->device;
}
const metrics::MetricsStore& EngineSession::metrics() const {
    return core_->sched->metrics();
}
void EngineSession::reset_metrics() {
    core_->sched->reset_metrics();
}

double EngineSession::now_ms() const {
    return core_->sched->now_ms();
}

}  // namespace wb::core
