#include "desktop/engine_bridge.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QPromise>
#include <QtConcurrent>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "chat/chat_template.h"
#include "core/settings_json.h"
#include "desktop/compare_service.h"
#include "desktop/engine_memory.h"
#include "desktop/run_recorder.h"
#include "desktop/units_text.h"
#include "gguf/gguf.h"
#include "loader/devices.h"
#include "loader/load.h"

namespace wb::gui {

namespace {

// The exception a QtConcurrent worker threw: QUnhandledException carries
// it (Qt 6), anything else is already the original.
std::exception_ptr unwrap_worker_exception(std::exception_ptr p) {
    try {
        std::rethrow_exception(p);
    } catch (const QUnhandledException& u) {
        if (u.exception()) return u.exception();
    } catch (...) {
    }
    return p;
}

double or_unset(double v) {
    return std::isnan(v) ? -1.0 : v;
}

double or_unset(const std::optional<double>& v) {
    return v ? *v : -1.0;
}

}  // namespace

RequestResult toResult(const core::FinishedRequest& f, const GenSettings& settings) {
    RequestResult r;
    r.id = QString::fromStdString(f.label);
    r.label = r.id;
    r.run_id = f.run_id;
    r.prompt = QString::fromStdString(f.prompt);
    r.settings = settings;
    r.settings.seed = f.seed;
    // The limit the request ran with (a batch line's own max_tokens, else
    // the settings'): the session's record of the request.
    if (const auto m = f.settings.find("max_tokens");
        m != f.settings.end() && m->is_number_integer())
        r.settings.max_tokens = m->get<int>();
    r.output = QString::fromStdString(f.output);
    for (int32_t t : f.output_tokens) r.token_ids.append(t);
    r.finish_reason = QString::fromStdString(f.finish_reason);
    if (!f.completed()) r.error = QString::fromStdString(f.message);
    r.context_full = f.context_full();
    if (f.mode == core::PromptMode::Chat) {
        const std::string pf = core::prompt_format_json(f.mode, f.prompt_facts).dump();
        r.prompt_format = QJsonDocument::fromJson(QByteArray::fromStdString(pf)).object();
    }
    r.prompt_tokens = static_cast<int>(f.prompt_tokens.size());
    if (f.admitted()) r.prompt_cached_tokens = f.prompt_tokens_cached;
    r.preemptions = f.preemptions;
    r.n_ctx_train = static_cast<int>(f.n_ctx_train);
    r.past_n_ctx_train = f.past_n_ctx_train;
    r.generated_tokens = static_cast<int>(f.output_tokens.size());
    r.queue_wait_ms = f.queue_wait_ms().value_or(0.0);
    r.ttft_ms = or_unset(f.ttft_ms());
    r.tpot_ms = or_unset(f.tpot_ms());
    r.e2e_ms = f.e2e_ms().value_or(0.0);
    r.prefill_tps = f.prefill_tps().value_or(0.0);
    r.decode_tps = f.decode_tps().value_or(0.0);
    r.start_utc_ms = f.submitted_utc_ms;
    r.finish_utc_ms = f.finished_utc_ms().value_or(f.submitted_utc_ms);
    r.speculative = f.speculative;
    return r;
}

/// A batch run: the receiver, and when each running entry was submitted.
struct EngineBridge::Batch {
    QPointer<QObject> context;
    std::function<void(const core::BatchEvent&)> on_event;
    QHash<qsizetype, double> submitted_ms;  // entry index -> submit time (session clock)
    QHash<qsizetype, int64_t> tokens;       // entry index -> tokens so far
    size_t total = 0, finished = 0;
};

/// What the load worker hands over: the session and what the Chat tab and
/// the model bar need from the file and the load.
struct EngineBridge::Loaded {
    std::shared_ptr<core::EngineSession> session;
    std::optional<std::string> chat_template;  ///< tokenizer.chat_template, if present
    std::string chat_template_error;           ///< why it could not be read ("" if it could)
    ColdStart cold;
    std::chrono::steady_clock::time_point opened;  ///< when loadModel was called
};

struct EngineBridge::LoadJob {
    LoadRequest req;
    QFutureWatcher<std::shared_ptr<Loaded>> watcher;
};

EngineBridge::EngineBridge(QObject* parent) : QObject(parent), compare_(new CompareService(this)) {
    qRegisterMetaType<RequestResult>();
    qRegisterMetaType<LiveSnapshot>();
    qRegisterMetaType<UserError>();
    qRegisterMetaType<LoadRequest>();
    qRegisterMetaType<ModelInfo>();
}

EngineBridge::~EngineBridge() {
    cancelLoad();
    // Join the engine thread; its last events are dropped with the bridge.
    if (session_) session_->shutdown();
}

QList<DeviceEntry> arrange_devices(const QList<DeviceEntry>& vulkan,
                                   const model::BackendChoice& choice) {
    DeviceEntry cpu;
    cpu.selector = "cpu";
    cpu.name = backend_label("cpu", {});
    cpu.type = "cpu";
    cpu.backend = "cpu";
    cpu.threads = choice.threads;
    QList<DeviceEntry> out;
    if (choice.backend == "cpu") {
        cpu.default_reason = QString::fromStdString(choice.reason);
        out.append(cpu);
        out.append(vulkan);
        return out;
    }
    out = vulkan;
    // vk::choose_device's order among the devices that are not CPUs.
    int pick = -1;
    for (const char* type : {"discrete GPU", "integrated GPU", "virtual GPU"}) {
        for (int i = 0; i < out.size() && pick < 0; ++i)
            if (out[i].type == QLatin1String(type)) pick = i;
    }
    for (int i = 0; i < out.size() && pick < 0; ++i)
        if (out[i].type != QLatin1String("CPU")) pick = i;
    if (pick >= 0) out[pick].default_reason = QString::fromStdString(choice.reason);
    out.append(cpu);
    return out;
}

QList<DeviceEntry> EngineBridge::devices(QString* vulkan_error) {
    QList<DeviceEntry> out;
    std::vector<model::DeviceSummary> summaries;
    std::string error;
    try {
        for (const model::GpuDevice& d : model::list_gpu_devices()) {
            DeviceEntry e;
            e.selector = QString::number(d.index);
            e.name = QString::fromStdString(d.name);
            e.type = QString::fromStdString(d.type_name);
            e.memory_bytes = static_cast<qint64>(d.largest_device_local_heap());
            e.backend = "vulkan";
            e.driver = QString::fromStdString(d.driver_name);
            e.driver_version = QString::fromStdString(d.driver_version);
            e.api_version = QString::fromStdString(d.api_version);
            out.append(e);
            summaries.push_back({d.name, d.type_slug});
        }
        if (out.isEmpty() && vulkan_error) *vulkan_error = tr("no Vulkan device found");
    } catch (const std::exception& ex) {
        out.clear();
        summaries.clear();
        error = ex.what();
        if (vulkan_error) *vulkan_error = QString::fromUtf8(ex.what());
    }
    return arrange_devices(
        out, model::choose_default_backend(summaries, model::physical_core_count(), error));
}

void EngineBridge::loadModel(const LoadRequest& req) {
    cancelLoad();
    auto job = std::make_shared<LoadJob>();
    job->req = req;
    loading_ = job;
    setState(State::Loading);
    emit loadProgress(0.0, tr("Reading %1").arg(QFileInfo(req.path).fileName()));

    const auto opened = std::chrono::steady_clock::now();
    QFuture<std::shared_ptr<Loaded>> f =
        QtConcurrent::run([req, opened](QPromise<std::shared_ptr<Loaded>>& promise) {
            promise.setProgressRange(0, 100);
            auto loaded = std::make_shared<Loaded>();
            loaded->opened = opened;
            core::SessionOptions so;
            so.load.backend = req.backend.toStdString();
            so.load.device = req.device == "cpu" ? std::string() : req.device.toStdString();
            so.load.context.n_ctx = static_cast<uint32_t>(req.n_ctx);
            so.load.context.n_seq_max = static_cast<uint32_t>(std::max(req.n_parallel, 1));
            so.load.context.kv_type =
                model::parse_kv_type(req.kv_type.toStdString()).value_or(model::KvType::F16);
            so.draft_model = req.draft_model.toStdString();
            try {
                std::shared_ptr<core::EngineSession> s = core::EngineSession::open(
                    req.path.toStdString(), so, [&](double fraction, const std::string& step) {
                        promise.setProgressValueAndText(static_cast<int>(fraction * 100),
                                                        QString::fromStdString(step));
                        return !promise.isCanceled();
                    });
                if (promise.isCanceled()) return;
                loaded->session = std::move(s);
            } catch (const core::LoadCancelled&) {
                return;  // no result: the watcher reports a cancelled load
            }
            // The session timed its load by phase (the run log keeps the same figures).
            const core::SessionLoadTimes& lt = loaded->session->load_times();
            loaded->cold.vocab_ms = lt.vocab_ms;
            loaded->cold.map_ms = lt.model.map_ms;
            loaded->cold.parse_ms = lt.model.parse_ms;
            loaded->cold.device_ms = lt.model.device_ms;
            loaded->cold.upload_ms = lt.model.upload_ms;
            loaded->cold.pipeline_cache_bytes = static_cast<qint64>(lt.model.pipeline_cache_bytes);
            // The file's own template text, for the Chat tab's choices (the
            // session renders with the one the tab picks).
            try {
                const gguf::File file = gguf::File::open(req.path.toStdString());
                loaded->chat_template = file.get_string(chat::kChatTemplateKey);
            } catch (const gguf::Error& e) {
                loaded->chat_template_error = e.what();
            }
            promise.addResult(std::move(loaded));
            promise.setProgressValue(100);
        });
    job->watcher.setFuture(f);
    LoadJob* raw = job.get();
    connect(&job->watcher, &QFutureWatcherBase::progressValueChanged, this, [this, raw](int v) {
        if (loading_.get() == raw) emit loadProgress(v / 100.0, raw->watcher.progressText());
    });
    connect(&job->watcher, &QFutureWatcherBase::finished, this, [this, raw] {
        if (loading_.get() != raw) return;
        std::shared_ptr<LoadJob> done = std::move(loading_);
        const LoadRequest r = done->req;
        QFuture<std::shared_ptr<Loaded>> fut = done->watcher.future();
        std::shared_ptr<Loaded> s;
        ModelInfo info;
        try {
            fut.waitForFinished();  // rethrows the worker's exception
            if (fut.resultCount() == 0) {
                setState(session_ ? State::Idle : State::NoModel);
                emit loadCancelled();
                return;
            }
            s = fut.result();
            info = ModelInfo::probe(r.path);
            // The one rule (chat::choose_template): a refused template, or
            // none at all (plain text completion), comes with a note.
            info.template_note = QString::fromStdString(s->session->chat_template("model")->note);
        } catch (...) {
            // QtConcurrent wraps the worker's exceptions that do not derive
            // from QException in a QUnhandledException whose what() is only
            // "std::exception"; classify the engine's own (typed) exception.
            const std::exception_ptr original = unwrap_worker_exception(std::current_exception());
            setState(session_ ? State::Idle : State::NoModel);
            try {
                std::rethrow_exception(original);
            } catch (const std::exception& e) {
                emit modelLoadFailed(classify_error(e, r.path), r);
            } catch (...) {
                emit modelLoadFailed(
                    classify_error(std::runtime_error("unknown error while loading"), r.path), r);
            }
            return;
        }
        install(std::move(s), info, r);
    });
}

void EngineBridge::install(std::shared_ptr<Loaded> loaded, const ModelInfo& info,
                           const LoadRequest& r) {
    // The old session's requests end as cancelled; deliver those events first.
    if (session_) {
        session_->shutdown();
        drain();
    }
    session_ = std::move(loaded->session);
    chat_template_ = std::move(loaded->chat_template);
    chat_template_error_ = std::move(loaded->chat_template_error);
    info_ = info;
    info_.load_warnings.clear();
    for (const std::string& w : session_->vocab().load_warnings())
        info_.load_warnings << QString::fromStdString(w);
    loaded_req_ = r;
    const model::DeviceFacts& dev = session_->device();
    backend_name_ =
        backend_label(QString::fromStdString(dev.backend), QString::fromStdString(dev.name));
    loaded_at_ms_ = session_->now_ms();
    opened_ = loaded->opened;
    cold_ = loaded->cold;
    cold_.ready_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - opened_)
            .count();
    if (recorder_) {
        recorder_->modelLoaded(*session_);  // the cold start, with the model
        session_->set_recorder(recorder_->requestRecorder());
    }
    setState(State::Idle);
    emit modelLoaded(info_);
    emit coldStartChanged(cold_);
}

void EngineBridge::noteFirstToken(double time_ms, double submitted_ms) {
    if (!session_ || cold_.first_token_ms >= 0) return;
    // Open to ready plus the first request's TTFT: the time the model sat
    // ready while the user typed is not part of the cold start (as the run
    // log's model_loads.first_token_ms).
    cold_.first_ttft_ms = time_ms - submitted_ms;
    cold_.first_token_ms = cold_.ready_ms + cold_.first_ttft_ms;
    emit coldStartChanged(cold_);
}

std::shared_ptr<const tokenizer::Vocab> EngineBridge::vocab() const {
    if (!session_) return nullptr;
    // Shares ownership of the session, so the vocabulary lives as long as its holder.
    return std::shared_ptr<const tokenizer::Vocab>(session_, &session_->vocab());
}

std::optional<std::string> EngineBridge::chatTemplate(std::string* read_error) const {
    if (read_error) *read_error = session_ ? chat_template_error_ : std::string();
    return session_ ? chat_template_ : std::nullopt;
}

int EngineBridge::contextSize() const {
    return session_ ? static_cast<int>(session_->facts().n_ctx) : 0;
}

QString ColdStart::text() const {
    auto ms = [](double v) { return QString::number(v, 'f', 1) + " ms"; };
    QString s = QObject::tr("Cold start (open to first token):\n");
    s += QObject::tr("  vocabulary %1 · file map %2 · metadata parse %3\n")
             .arg(ms(vocab_ms), ms(map_ms), ms(parse_ms));
    s += QObject::tr("  device %1 · weight upload %2 · ready %3\n")
             .arg(ms(device_ms), ms(upload_ms), ms(ready_ms));
    s += pipeline_cache_bytes > 0
             ? QObject::tr("  pipeline cache: warm (%1 KiB on disk)\n")
                   .arg(pipeline_cache_bytes / 1024)
             : QObject::tr("  pipeline cache: cold (pipelines compiled on first use)\n");
    if (first_token_ms < 0)
        s += QObject::tr("  first token: not yet (send a message)");
    else
        s += QObject::tr(
                 "  first token %1 after open (first request's TTFT %2, pipelines "
                 "created inside it)")
                 .arg(ms(first_token_ms), ms(first_ttft_ms));
    return s;
}

int EngineBridge::schedulerSlots() const {
    return session_ ? static_cast<int>(session_->facts().n_parallel) : 0;
}

int EngineBridge::inFlight() const {
    return session_ ? static_cast<int>(session_->in_flight()) : 0;
}

void EngineBridge::cancelLoad() {
    if (!loading_) return;
    std::shared_ptr<LoadJob> job = std::move(loading_);
    job->watcher.disconnect(this);
    job->watcher.future().cancel();
    setState(session_ ? State::Idle : State::NoModel);
    emit loadCancelled();
}

void EngineBridge::post(std::function<void()> work) {
    bool post_drain = false;
    {
        std::lock_guard lock(delivery_->mu);
        delivery_->work.push_back(std::move(work));
        post_drain = !delivery_->posted;
        delivery_->posted = true;
    }
    // One queued call per burst (a burst of tokens costs one).
    if (post_drain)
        QMetaObject::invokeMethod(
            this, [this] { drain(); }, Qt::QueuedConnection);
}

void EngineBridge::drain() {
    std::vector<std::function<void()>> work;
    {
        std::lock_guard lock(delivery_->mu);
        work.swap(delivery_->work);
        delivery_->posted = false;  // a later event posts again
    }
    for (auto& w : work) w();
    updateBusy();
}

quint64 EngineBridge::submit(core::GenerationRequest req, QObject* context, Callbacks cb) {
    if (!session_) return 0;
    return submit(session_->prepare(std::move(req)), context, std::move(cb));
}

quint64 EngineBridge::submit(core::PreparedRequest prepared, QObject* context, Callbacks cb) {
    if (!session_) return 0;
    Pending p;
    p.context = context;
    p.has_context = context != nullptr;
    p.cb = std::move(cb);
    // Events are handled on this thread after submit() returns (they are
    // posted), so registering the request afterwards cannot miss one.
    std::weak_ptr<Delivery> weak = delivery_;
    const core::RequestHandle h =
        session_->submit(std::move(prepared), [this, weak](const core::RequestEvent& e) {
            if (!weak.lock()) return;
            post([this, e] { onRequestEvent(e); });
        });
    pending_.insert(h.id(), std::move(p));
    updateBusy();
    return h.id();
}

bool EngineBridge::submit(const RequestSpec& spec) {
    if (!session_) return false;
    core::GenerationRequest req = spec.settings.request(spec.seed_policy);
    if (!spec.messages.empty()) {
        // The session renders the conversation (the same code as
        // `workbench-cli generate --chat`) with the template the tab picked.
        req.chat_template = spec.chat_template.toStdString();
        try {
            session_->chat_template(req.chat_template);  // parsed once per name, then cached
        } catch (const std::exception&) {
            return false;  // not a template name the session knows
        }
        req.messages = spec.messages;
    } else {
        req.prompt = spec.prompt.toStdString();
    }
    req.queue_timeout_ms = spec.queue_timeout_ms > 0 ? spec.queue_timeout_ms : -1;
    req.timeout_ms = spec.total_timeout_ms > 0 ? spec.total_timeout_ms : -1;
    req.client_id = "chat";
    req.speculative = spec.speculative;
    req.run_id = spec.run_id;
    req.label = (spec.label.isEmpty() ? spec.id : spec.label).toStdString();
    Callbacks cb;
    const QString sid = spec.id;
    cb.started = [this, sid](quint64, const core::FinishedRequest&) { emit requestStarted(sid); };
    cb.token = [this, sid](quint64, int token, const QString& piece) {
        emit tokenArrived(sid, token, piece);
    };
    cb.finished = [this, spec](const core::FinishedRequest& f) {
        RequestResult r = toResult(f, spec.settings);
        r.id = spec.id;
        r.label = spec.label;
        r.speculative_asked = spec.speculative;
        id_by_spec_.remove(spec.id);
        emit requestFinished(r);
    };
    core::PreparedRequest prepared;
    if (spec.prepared && spec.prepared->session_id() == session_->session_id()) {
        prepared = *spec.prepared;  // the rendering the preview showed, run as it is
        prepared.set_settings(req);
    } else {
        prepared = session_->prepare(std::move(req));
    }
    const quint64 id = submit(std::move(prepared), nullptr, std::move(cb));
    id_by_spec_.insert(spec.id, id);
    return id != 0;
}

void EngineBridge::onRequestEvent(const core::RequestEvent& e) {
    auto it = pending_.find(e.id);
    if (it == pending_.end()) return;
    Pending& p = it.value();
    const bool deliver = !p.has_context || p.context;
    switch (e.type) {
        case core::RequestEvent::Type::Queued:
        case core::RequestEvent::Type::Preempted:  // its tokens so far stay; it resumes later
        case core::RequestEvent::Type::Resumed:
            break;
        case core::RequestEvent::Type::Started:
            if (e.result) p.submitted_ms = e.result->times.submitted_ms;
            if (deliver && p.cb.started && e.result) p.cb.started(e.id, *e.result);
            break;
        case core::RequestEvent::Type::Token:
            if (e.index == 0) noteFirstToken(e.time_ms, p.submitted_ms);
            if (deliver && p.cb.token) p.cb.token(e.id, e.token, QString::fromStdString(e.piece));
            break;
        case core::RequestEvent::Type::Finished: {
            const Pending done = std::move(p);
            pending_.erase(it);
            if (deliver && done.cb.finished && e.result) done.cb.finished(*e.result);
            break;
        }
    }
}

std::shared_ptr<BatchJob> EngineBridge::runBatch(
    std::vector<core::PromptEntry> entries, core::BatchOptions opts, QObject* context,
    std::function<void(const core::BatchEvent&)> on_event) {
    if (!session_) return nullptr;
    const quint64 key = next_batch_++;
    auto b = std::make_shared<Batch>();
    b->context = context;
    b->on_event = std::move(on_event);
    b->total = entries.size();
    batches_.insert(key, b);
    std::weak_ptr<Delivery> weak = delivery_;
    auto runner =
        std::make_unique<core::BatchRunner>(*session_, std::move(entries), std::move(opts),
                                            [this, weak, key](const core::BatchEvent& e) {
                                                if (!weak.lock()) return;
                                                post([this, key, e] { onBatchEvent(key, e); });
                                            });
    auto job = std::make_shared<BatchJob>(session_, std::move(runner));
    job->start();
    updateBusy();
    return job;
}

void EngineBridge::onBatchEvent(quint64 key, const core::BatchEvent& e) {
    auto it = batches_.find(key);
    if (it == batches_.end()) return;
    const std::shared_ptr<Batch> b = it.value();
    const auto index = static_cast<qsizetype>(e.index);
    switch (e.type) {
        case core::BatchEvent::Type::Started:
            if (e.result) b->submitted_ms[index] = e.result->times.submitted_ms;
            break;
        case core::BatchEvent::Type::Token: {
            auto r = b->submitted_ms.find(index);
            if (r == b->submitted_ms.end()) break;
            if (++b->tokens[index] == 1) noteFirstToken(e.time_ms, r.value());
            break;
        }
        case core::BatchEvent::Type::Finished:
            b->submitted_ms.remove(index);
            b->tokens.remove(index);
            if (++b->finished >= b->total) batches_.erase(it);
            break;
    }
    if (b->context && b->on_event) b->on_event(e);
}

void EngineBridge::setRecorder(RunRecorder* recorder) {
    recorder_ = recorder;
    compare_->setRecorder(recorder);
    if (session_) session_->set_recorder(recorder_ ? recorder_->requestRecorder() : nullptr);
}

void EngineBridge::cancel(quint64 id) {
    if (session_) session_->cancel(id);
}

void EngineBridge::cancel(const QString& spec_id) {
    auto it = id_by_spec_.find(spec_id);
    if (it != id_by_spec_.end()) cancel(it.value());
}

void EngineBridge::cancelAll() {
    if (session_) session_->cancel_all();
}

void EngineBridge::shutdown() {
    cancelLoad();
    if (!session_) return;
    session_->shutdown();  // Finished (cancelled) for every request
    drain();
}

LiveSnapshot EngineBridge::snapshot(double window_s, metrics::EventCursor* events) const {
    LiveSnapshot s;
    if (!session_) return s;
    const metrics::MetricsStore& store = session_->metrics();
    const double now = session_->now_ms();
    s.t_s = (now - loaded_at_ms_) / 1000.0;
    // Percentiles over the chosen window; throughput over the last
    // kThroughputWindowS so the line follows what the engine does now.
    const double window_ms = window_s > 0 ? window_s * 1000.0 : now + 1.0;
    const metrics::MetricsSnapshot ms = store.snapshot(now, window_ms);
    const metrics::WindowStats& w = window_s > 0 ? ms.window : ms.run;
    s.ttft_p50 = or_unset(w.ttft_ms.p50);
    s.ttft_p95 = or_unset(w.ttft_ms.p95);
    s.ttft_p99 = or_unset(w.ttft_ms.p99);
    s.e2e_p50 = or_unset(w.e2e_ms.p50);
    s.e2e_p95 = or_unset(w.e2e_ms.p95);
    s.e2e_p99 = or_unset(w.e2e_ms.p99);
    // Tokens over the time the engine was generating inside the last
    // kThroughputWindowS, so a reply shorter than that reads at its own
    // tokens/s rather than diluted by the idle time around it.
    const double tps = store.snapshot(now, LiveSnapshot::kThroughputWindowS * 1000.0)
                           .window.decode_tokens_per_active_s;
    s.decode_tps = std::isfinite(tps) ? tps : 0.0;
    s.queued = ms.queued;
    s.running = ms.running;
    s.kv_cells_used = static_cast<int>(ms.kv_cells_used);
    s.prefix_hit_rate = or_unset(w.prefix_hit_rate);
    s.memory = memory_of(session_->model());
    s.busy = ms.queued + ms.running > 0;
    if (events) {
        const metrics::EventSamples ev = store.events_since(*events);
        auto since_load = [&](double t_ms) { return (t_ms - loaded_at_ms_) / 1000.0; };
        for (const auto& e : ev.ttft) s.ttft_events.push_back({since_load(e.t_ms), e.value_ms});
        for (const auto& e : ev.e2e) s.e2e_events.push_back({since_load(e.t_ms), e.value_ms});
        for (const auto& e : ev.prefix)
            s.prefix_events.push_back({since_load(e.t_ms), static_cast<double>(e.prompt_tokens),
                                       static_cast<double>(e.cached)});
    }
    return s;
}

double EngineBridge::metricsNowMs() const {
    return session_ ? session_->now_ms() : 0.0;
}

metrics::WindowStats EngineBridge::spanStats(double since_ms) const {
    if (!session_) return {};
    const double now = session_->now_ms();
    return session_->metrics().snapshot(now, std::max(now - since_ms, 1e-3)).window;
}

void EngineBridge::setState(State s) {
    if (s == state_) return;
    state_ = s;
    emit stateChanged(s);
}

void EngineBridge::updateBusy() {
    if (state_ == State::Loading || !session_) return;
    setState(session_->in_flight() == 0 && pending_.isEmpty() && batches_.isEmpty() ? State::Idle
                                                                                    : State::Busy);
}

}  // namespace wb::gui
