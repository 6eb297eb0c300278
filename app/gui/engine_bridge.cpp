#include "engine_bridge.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QPromise>
#include <QtConcurrent>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "chat/chat_template.h"
#include "engine_memory.h"
#include "gguf/gguf.h"
#include "model/load.h"
#include "scheduler/event_queue.h"
#include "scheduler/scheduler.h"
#include "tokenizer/vocab.h"
#include "vk/context.h"

namespace wb::gui {

namespace {

/// Slots the model's KV cache is built for; the scheduler may use fewer
/// (the batch panel's concurrency), so a new concurrency needs no reload.
constexpr uint32_t kMaxSlots = 64;

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

sampling::SamplingParams to_sampling(const GenSettings& s) {
    sampling::SamplingParams p;
    p.temperature = static_cast<float>(s.temperature);
    p.top_k = s.top_k;
    p.top_p = static_cast<float>(s.top_p);
    p.min_p = static_cast<float>(s.min_p);
    p.repeat_penalty = static_cast<float>(s.repeat_penalty);
    p.repeat_last_n = s.repeat_last_n;
    p.seed = s.seed;
    for (auto it = s.logit_bias.begin(); it != s.logit_bias.end(); ++it)
        p.logit_bias.emplace_back(it.key(), static_cast<float>(it.value()));
    return p;
}

}  // namespace

/// Everything that lives as long as one loaded model. Members are declared
/// so that the scheduler (which uses model, vocab and the event queue from
/// its engine thread) is destroyed first.
struct LoadedModel {
    scheduler::EventQueue events;
    std::function<void(const scheduler::Event&)> sink = events.sink();
    std::unique_ptr<model::Model> model;
    std::shared_ptr<tokenizer::Vocab> vocab;   ///< shared with the chat (its token meter)
    std::optional<std::string> chat_template;  ///< tokenizer.chat_template, if present
    std::string chat_template_error;           ///< why it could not be read ("" if it could)
    std::atomic<bool> drain_posted{false};
    QElapsedTimer since_load;
    std::unique_ptr<scheduler::Scheduler> sched;
    ColdStart cold;
    std::chrono::steady_clock::time_point opened;  ///< when loadModel was called
};

struct EngineBridge::Pending {
    RequestSpec spec;
    qint64 submit_utc_ms = 0;
    double sched_submit_ms = 0;  ///< Scheduler::now_ms() at submit
    scheduler::RequestId sid = 0;
};

struct EngineBridge::LoadJob {
    LoadRequest req;
    QFutureWatcher<std::shared_ptr<LoadedModel>> watcher;
};

EngineBridge::EngineBridge(QObject* parent) : QObject(parent) {
    qRegisterMetaType<RequestResult>();
    qRegisterMetaType<LiveSnapshot>();
    qRegisterMetaType<UserError>();
    qRegisterMetaType<LoadRequest>();
    qRegisterMetaType<ModelInfo>();
}

EngineBridge::~EngineBridge() {
    cancelLoad();
    // Join the engine thread before the members it reports to go away.
    if (model_ && model_->sched) model_->sched->stop();
}

QList<DeviceEntry> EngineBridge::devices(QString* vulkan_error) {
    QList<DeviceEntry> out;
    try {
        for (const vk::DeviceInfo& d : vk::list_devices()) {
            DeviceEntry e;
            e.selector = QString::number(d.index);
            e.name = QString::fromStdString(d.name);
            e.type = QString::fromStdString(d.type_name());
            for (const vk::HeapInfo& h : d.heaps)
                if (h.device_local)
                    e.memory_bytes = std::max<qint64>(e.memory_bytes, static_cast<qint64>(h.size));
            e.backend = "vulkan";
            e.driver = QString::fromStdString(d.driver_name);
            e.driver_version = QString::fromStdString(d.driver_version_string());
            e.api_version = QString::fromStdString(d.api_version_string());
            out.append(e);
        }
        if (out.isEmpty() && vulkan_error) *vulkan_error = tr("no Vulkan device found");
    } catch (const std::exception& ex) {
        if (vulkan_error) *vulkan_error = QString::fromUtf8(ex.what());
    }
    DeviceEntry cpu;
    cpu.selector = "cpu";
    cpu.name = tr("CPU (threaded, quantized kernels)");
    cpu.type = "cpu";
    cpu.backend = "cpu";
    out.append(cpu);
    return out;
}

void EngineBridge::loadModel(const LoadRequest& req) {
    cancelLoad();
    auto job = std::make_shared<LoadJob>();
    job->req = req;
    loading_ = job;
    setState(State::Loading);
    emit loadProgress(0.0, tr("Reading %1").arg(QFileInfo(req.path).fileName()));

    const auto opened = std::chrono::steady_clock::now();
    QFuture<std::shared_ptr<LoadedModel>> f =
        QtConcurrent::run([req, opened](QPromise<std::shared_ptr<LoadedModel>>& promise) {
            promise.setProgressRange(0, 100);
            auto lm = std::make_shared<LoadedModel>();
            lm->opened = opened;
            promise.setProgressValueAndText(5, QObject::tr("Reading the vocabulary"));
            {
                const auto t0 = std::chrono::steady_clock::now();
                const gguf::File file = gguf::File::open(req.path.toStdString());
                lm->vocab = std::make_shared<tokenizer::Vocab>(tokenizer::Vocab::from_gguf(file));
                try {
                    lm->chat_template = file.get_string(chat::kChatTemplateKey);
                } catch (const gguf::Error& e) {
                    lm->chat_template_error = e.what();
                }
                lm->cold.vocab_ms =
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
            }
            if (promise.isCanceled()) return;
            promise.setProgressValueAndText(
                20, req.backend == "cpu" ? QObject::tr("Mapping weights (CPU)")
                                         : QObject::tr("Uploading weights to the device"));
            model::LoadOptions opts;
            opts.backend = req.backend.toStdString();
            opts.device = req.device == "cpu" ? std::string() : req.device.toStdString();
            opts.context.n_ctx = static_cast<uint32_t>(req.n_ctx);
            opts.context.n_seq_max =
                std::max<uint32_t>(kMaxSlots, static_cast<uint32_t>(req.n_parallel));
            model::LoadTimings lt;
            lm->model = model::load_model_timed(req.path.toStdString(), opts, lt);
            lm->cold.map_ms = lt.map_ms;
            lm->cold.parse_ms = lt.parse_ms;
            lm->cold.device_ms = lt.device_ms;
            lm->cold.upload_ms = lt.upload_ms;
            lm->cold.pipeline_cache_bytes = static_cast<qint64>(lt.pipeline_cache_bytes);
            if (promise.isCanceled()) return;
            promise.setProgressValueAndText(90, QObject::tr("Starting the scheduler"));
            promise.addResult(lm);
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
        QFuture<std::shared_ptr<LoadedModel>> fut = done->watcher.future();
        std::shared_ptr<LoadedModel> lm;
        ModelInfo info;
        try {
            fut.waitForFinished();  // rethrows the worker's exception
            if (fut.resultCount() == 0) {
                setState(model_ ? State::Idle : State::NoModel);
                emit loadCancelled();
                return;
            }
            lm = fut.result();
            info = ModelInfo::probe(r.path);
        } catch (...) {
            // QtConcurrent wraps the worker's exceptions that do not derive
            // from QException (gguf::Error, std::runtime_error, ...) in a
            // QUnhandledException whose what() is only "std::exception";
            // classify the engine's own exception, which names the file
            // offset and field.
            const std::exception_ptr original = unwrap_worker_exception(std::current_exception());
            setState(model_ ? State::Idle : State::NoModel);
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
        install(lm, info, r);
    });
}

void EngineBridge::install(std::shared_ptr<LoadedModel> lm, const ModelInfo& info,
                           const LoadRequest& r) {
    // The old model's requests end as cancelled; deliver those events first.
    if (model_) {
        model_->sched->stop();
        drain(model_);
    }
    model_ = std::move(lm);
    info_ = info;
    loaded_req_ = r;
    backend_name_ = QString::fromStdString(model_->model->backend_name());
    model_->since_load.start();
    startScheduler(static_cast<uint32_t>(r.n_parallel), 64);
    model_->cold.ready_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - model_->opened)
            .count();
    cold_ = model_->cold;
    setState(State::Idle);
    emit modelLoaded(info_);
    emit coldStartChanged(cold_);
}

void EngineBridge::startScheduler(uint32_t n_parallel, uint32_t max_queue) {
    LoadedModel* lm = model_.get();
    if (lm->sched) lm->sched->stop();
    lm->sched.reset();
    scheduler::SchedulerParams p;
    p.n_parallel = std::clamp<uint32_t>(n_parallel, 1, kMaxSlots);
    p.max_queue = std::max<uint32_t>(max_queue, 1);
    p.step_tokens = std::max<uint32_t>(p.step_tokens, p.n_parallel);
    std::weak_ptr<LoadedModel> weak = model_;
    lm->sched = std::make_unique<scheduler::Scheduler>(
        *lm->model, *lm->vocab, p, [this, lm, weak](const scheduler::Event& e) {
            // Engine thread: copy the event into the queue and make sure one
            // drain is posted to the GUI thread (coalesced, so a burst of
            // tokens costs one queued call).
            lm->sink(e);
            if (!lm->drain_posted.exchange(true)) {
                QMetaObject::invokeMethod(
                    this, [this, weak] { drain(weak.lock()); }, Qt::QueuedConnection);
            }
        });
    lm->sched->start();
}

bool EngineBridge::configureScheduler(int n_parallel, int max_queue) {
    if (!model_ || !pending_.isEmpty()) return false;
    const scheduler::SchedulerParams& p = model_->sched->params();
    if (p.n_parallel == static_cast<uint32_t>(n_parallel) &&
        p.max_queue == static_cast<uint32_t>(max_queue))
        return true;
    startScheduler(static_cast<uint32_t>(n_parallel), static_cast<uint32_t>(max_queue));
    return true;
}

int EngineBridge::schedulerSlots() const {
    return model_ ? static_cast<int>(model_->sched->params().n_parallel) : 0;
}

void EngineBridge::cancelLoad() {
    if (!loading_) return;
    std::shared_ptr<LoadJob> job = std::move(loading_);
    job->watcher.disconnect(this);
    job->watcher.future().cancel();
    setState(model_ ? State::Idle : State::NoModel);
    emit loadCancelled();
}

bool EngineBridge::submit(const RequestSpec& spec) {
    if (!model_) return false;
    scheduler::Request r;
    r.label = spec.id.toStdString();
    r.prompt = spec.prompt.toStdString();
    r.prompt_tokens = spec.prompt_tokens;
    r.max_tokens = spec.settings.max_tokens;
    r.sampling = to_sampling(spec.settings);
    r.queue_timeout_ms = spec.queue_timeout_ms > 0 ? spec.queue_timeout_ms : -1;
    r.timeout_ms = spec.total_timeout_ms > 0 ? spec.total_timeout_ms : -1;
    auto p = std::make_shared<Pending>();
    p->spec = spec;
    p->submit_utc_ms = QDateTime::currentMSecsSinceEpoch();
    p->sched_submit_ms = model_->sched->now_ms();
    // Events are handled on this thread after submit() returns (they are
    // posted), so registering the ticket afterwards cannot miss one.
    const scheduler::SubmitResult res = model_->sched->submit(std::move(r));
    p->sid = res.id;
    pending_.insert(res.id, p);
    ticket_by_id_.insert(spec.id, res.id);
    updateBusy();
    return true;
}

void EngineBridge::cancel(const QString& id) {
    if (!model_) return;
    auto it = ticket_by_id_.find(id);
    if (it != ticket_by_id_.end()) model_->sched->cancel(it.value());
}

void EngineBridge::cancelAll() {
    if (!model_) return;
    for (auto it = pending_.begin(); it != pending_.end(); ++it) model_->sched->cancel(it.key());
}

void EngineBridge::shutdown() {
    cancelLoad();
    if (!model_) return;
    if (model_->sched) model_->sched->stop();  // Finished(Cancelled) for every request
    drain(model_);
}

void EngineBridge::drain(const std::shared_ptr<LoadedModel>& lm) {
    if (!lm) return;
    lm->drain_posted.store(false);  // before pop: a later event posts again
    std::vector<scheduler::Event> evs;
    lm->events.pop(evs);
    for (const scheduler::Event& e : evs) {
        auto it = pending_.find(e.id);
        if (it == pending_.end()) continue;
        const std::shared_ptr<Pending> p = it.value();
        switch (e.type) {
            case scheduler::EventType::Started:
                emit requestStarted(p->spec.id);
                break;
            case scheduler::EventType::FirstToken:
                if (lm == model_ && cold_.first_token_ms < 0) {
                    // The first token of the model's first request: the end of its cold start.
                    // Now minus how long ago the engine made it (events wait in the queue).
                    const double late_ms = lm->sched->now_ms() - e.time_ms;
                    cold_.first_token_ms = std::chrono::duration<double, std::milli>(
                                               std::chrono::steady_clock::now() - lm->opened)
                                               .count() -
                                           late_ms;
                    cold_.first_ttft_ms = e.time_ms - p->sched_submit_ms;
                    lm->cold = cold_;
                    emit coldStartChanged(cold_);
                }
                break;
            case scheduler::EventType::Token:
                emit tokenArrived(p->spec.id, e.token, QString::fromStdString(e.piece));
                break;
            case scheduler::EventType::Finished: {
                pending_.erase(it);
                ticket_by_id_.remove(p->spec.id);
                emit requestFinished(toResult(*p, e));
                break;
            }
            default:
                break;
        }
    }
    updateBusy();
}

RequestResult EngineBridge::toResult(const Pending& p, const scheduler::Event& e) const {
    RequestResult r;
    r.id = p.spec.id;
    r.label = p.spec.label;
    r.run_id = p.spec.run_id;
    r.prompt = p.spec.prompt;
    r.prompt_format = p.spec.prompt_format;
    r.settings = p.spec.settings;
    r.output = QString::fromStdString(e.output);
    for (int32_t t : e.output_tokens) r.token_ids.append(t);
    r.finish_reason = QString::fromUtf8(scheduler::to_string(e.reason));
    if (e.reason != scheduler::FinishReason::Stop && e.reason != scheduler::FinishReason::Length)
        r.error = QString::fromStdString(e.message);
    r.prompt_tokens = static_cast<int>(e.prompt_tokens.size());
    if (!std::isnan(e.timeline.admitted_ms)) r.prompt_cached_tokens = e.prompt_tokens_cached;
    r.preemptions = e.preemptions;
    r.generated_tokens = static_cast<int>(e.output_tokens.size());
    const metrics::RequestMetrics& m = e.metrics;
    r.queue_wait_ms = or_unset(m.queue_wait_ms);
    r.ttft_ms = or_unset(m.ttft_ms);
    r.tpot_ms = or_unset(m.tpot_ms);
    r.e2e_ms = or_unset(m.e2e_ms);
    const metrics::RequestTimeline& t = e.timeline;
    if (!t.token_ms.empty() && !std::isnan(t.admitted_ms) && t.token_ms.front() > t.admitted_ms)
        r.prefill_tps = 1000.0 * r.prompt_tokens / (t.token_ms.front() - t.admitted_ms);
    if (t.token_ms.size() > 1 && t.token_ms.back() > t.token_ms.front())
        r.decode_tps = 1000.0 * static_cast<double>(t.token_ms.size() - 1) /
                       (t.token_ms.back() - t.token_ms.front());
    r.start_utc_ms = p.submit_utc_ms;
    r.finish_utc_ms = p.submit_utc_ms + static_cast<qint64>(std::llround(std::max(0.0, r.e2e_ms)));
    return r;
}

std::shared_ptr<const tokenizer::Vocab> EngineBridge::vocab() const {
    return model_ ? model_->vocab : nullptr;
}

std::optional<std::string> EngineBridge::chatTemplate(std::string* read_error) const {
    if (read_error) *read_error = model_ ? model_->chat_template_error : std::string();
    return model_ ? model_->chat_template : std::nullopt;
}

int EngineBridge::contextSize() const {
    return model_ && model_->sched ? static_cast<int>(model_->sched->max_sequence_tokens()) : 0;
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

LiveSnapshot EngineBridge::snapshot(double window_s) const {
    LiveSnapshot s;
    if (!model_ || !model_->sched) return s;
    const scheduler::Scheduler& sch = *model_->sched;
    const double now = sch.now_ms();
    s.t_s = static_cast<double>(model_->since_load.elapsed()) / 1000.0;
    // Percentiles over the chosen window; throughput over the last
    // kThroughputWindowS so the line follows what the engine does now.
    const double window_ms = window_s > 0 ? window_s * 1000.0 : now + 1.0;
    const metrics::MetricsSnapshot ms = sch.metrics().snapshot(now, window_ms);
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
    const double tps = sch.metrics()
                           .snapshot(now, LiveSnapshot::kThroughputWindowS * 1000.0)
                           .window.decode_tokens_per_active_s;
    s.decode_tps = std::isfinite(tps) ? tps : 0.0;
    s.queued = ms.queued;
    s.running = ms.running;
    s.kv_cells_used = static_cast<int>(ms.kv_cells_used);
    s.prefix_hit_rate = or_unset(w.prefix_hit_rate);
    s.memory = memory_of(*model_->model);
    s.busy = ms.queued + ms.running > 0;
    return s;
}

double EngineBridge::metricsNowMs() const {
    if (!model_ || !model_->sched) return 0;
    return model_->sched->now_ms();
}

metrics::WindowStats EngineBridge::spanStats(double since_ms) const {
    if (!model_ || !model_->sched) return {};
    const double now = model_->sched->now_ms();
    return model_->sched->metrics().snapshot(now, std::max(now - since_ms, 1e-3)).window;
}

void EngineBridge::setState(State s) {
    if (s == state_) return;
    state_ = s;
    emit stateChanged(s);
}

void EngineBridge::updateBusy() {
    if (state_ == State::Loading || !model_) return;
    setState(pending_.isEmpty() ? State::Idle : State::Busy);
}

}  // namespace wb::gui
