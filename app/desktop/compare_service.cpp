#include "desktop/compare_service.h"

#include <QMetaObject>
#include <QPointer>
#include <QtConcurrent/QtConcurrentRun>
#include <future>
#include <nlohmann/json.hpp>

#include "core/response_log.h"
#include "desktop/run_recorder.h"
#include "load/load_log.h"
#include "runlog/run_log.h"

namespace wb::gui {

using wb::compare::Cancelled;
using wb::compare::ModelLoadFn;
using wb::compare::StreamResult;

namespace {

// Writes the remote replies under `run_id` (load::log_remote_row: the
// endpoint's model version, this machine's environment). Throws what the run
// log throws.
template <class Replies>
void log_remote(runlog::RunLog& log, int64_t run_id, const Replies& replies) {
    for (const auto& r : replies) {
        const std::string url = r.target.base_url.toStdString();
        runlog::ResponseRecord rec = load::remote_record(r.spec, r.result,
                                                         {{"target", url},
                                                          {"model", r.model},
                                                          {"api", "completions"},
                                                          {"temperature", 0.0},
                                                          {"compare_label", r.label}});
        rec.run_id = run_id;
        rec.request_id = r.label + "/p0";
        load::log_remote_row(log, std::move(rec), url, r.model);
    }
}

}  // namespace

CompareService::CompareService(QObject* parent)
    : QObject(parent),
      loadFn_(&model::load_model),
      cancel_(std::make_shared<std::atomic<bool>>(false)) {
    load_.backend = "vulkan";
    pool_.setMaxThreadCount(8);
}

CompareService::~CompareService() {
    stopAndWait();
}

void CompareService::setBackend(const QString& backend, const QString& device) {
    load_.backend = backend.toStdString();
    load_.device = device.toStdString();
}

void CompareService::setModelLoader(ModelLoadFn load) {
    loadFn_ = load ? std::move(load) : ModelLoadFn(&model::load_model);
}

void CompareService::begin() {
    cancel_->store(true);  // the last run's workers stop at their next check
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    ++gen_;
    streamed_.clear();
    remote_.clear();
}

void CompareService::cancel() {
    cancel_->store(true);
}

void CompareService::stopAndWait() {
    cancel_->store(true);
    ++gen_;  // what is still queued for this thread is dropped
    pool_.waitForDone();
    streamed_.clear();
    remote_.clear();
}

void CompareService::post(quint64 gen, const QPointer<QObject>& context, std::function<void()> fn) {
    QMetaObject::invokeMethod(
        this,
        [this, gen, context, fn = std::move(fn)] {
            if (gen == gen_ && context) fn();
        },
        Qt::QueuedConnection);
}

void CompareService::streamLocal(int slot, const QString& path, const QString& prompt,
                                 uint32_t n_predict, QObject* context,
                                 std::function<void(int32_t, const QString&)> on_token,
                                 std::function<void(const StreamResult&)> on_done) {
    const QPointer<QObject> ctx(context);  // read on this thread only
    if (slot < 0) return;
    if (streamed_.size() <= size_t(slot)) streamed_.resize(size_t(slot) + 1);
    streamed_[size_t(slot)] = StreamedModel{path.toStdString(), nullptr, 0};
    const quint64 gen = gen_;
    const model::LoadOptions lo = load_;
    const ModelLoadFn load = loadFn_;
    const auto cancel = cancel_;
    (void)QtConcurrent::run(&pool_, [this, gen, slot, ctx, path = path.toStdString(),
                                     prompt = prompt.toStdString(), n_predict, lo, load, cancel,
                                     on_token = std::move(on_token), on_done = std::move(on_done)] {
        StreamResult res = wb::compare::stream_reply(
            path, prompt, n_predict, lo, load,
            [&](int32_t id, const std::string& piece) {
                post(gen, ctx,
                     [on_token, id, p = QString::fromStdString(piece)] { on_token(id, p); });
            },
            *cancel);
        // The model rides along to this thread and waits in streamed_ for
        // the figures; a stale run's model is freed with the event.
        auto shared = std::make_shared<StreamResult>(std::move(res));
        post(gen, this, [this, slot, ctx, shared, on_done] {
            if (size_t(slot) < streamed_.size() && streamed_[size_t(slot)]) {
                streamed_[size_t(slot)]->model = shared->model;
                streamed_[size_t(slot)]->load_ms = shared->load_ms;
            }
            shared->model.reset();  // the service holds it now
            if (ctx) on_done(*shared);
        });
    });
}

void CompareService::streamRemote(int slot, const RemoteTarget& target, const QString& api_key,
                                  const QString& label, const QString& prompt, uint32_t n_predict,
                                  QObject* context, std::function<void(const QString&)> on_piece,
                                  std::function<void(const load::RequestResult&)> on_done) {
    const QPointer<QObject> ctx(context);  // read on this thread only
    if (slot < 0) return;
    if (remote_.size() <= size_t(slot)) remote_.resize(size_t(slot) + 1);
    remote_[size_t(slot)].reset();
    // The raw prompt, as the local panes run it (BOS as the model asks),
    // not a chat template's rendering of it.
    load::Target t = to_load_target(target, api_key, load::Api::Completions, 120);
    load::RequestSpec s;
    s.prompt = prompt.toStdString();
    s.max_tokens = static_cast<int>(n_predict);
    s.temperature = 0.0;  // greedy, as the local models
    s.cancel = cancel_;
    const quint64 gen = gen_;
    s.on_content = [this, gen, ctx, on_piece = std::move(on_piece)](const std::string& piece) {
        post(gen, ctx, [on_piece, p = QString::fromStdString(piece)] { on_piece(p); });
    };
    (void)QtConcurrent::run(
        &pool_, [this, gen, slot, ctx, t, s, target, label = label.toStdString(),
                 on_done = std::move(on_done)]() mutable {
            if (t.model.empty()) t.model = load::first_model_id(t);
            load::RequestResult r = load::send_request(t, s, load::steady_now_ms(), {});
            s.on_content = nullptr;
            s.cancel.reset();
            auto reply = std::make_shared<RemoteReply>(
                RemoteReply{target, t.model, label, std::move(s), std::move(r)});
            post(gen, this, [this, slot, ctx, reply, on_done] {
                if (size_t(slot) < remote_.size()) remote_[size_t(slot)] = *reply;
                if (ctx) on_done(reply->result);
            });
        });
}

void CompareService::runFigures(const FiguresRequest& req, QObject* context,
                                std::function<void(const QString&)> on_progress,
                                std::function<void(const FiguresResult&)> on_done) {
    const QPointer<QObject> ctx(context);  // read on this thread only
    wb::compare::CompareOptions o;
    std::vector<StreamedModel> streamed;  // [n_models] lent by the replies of this run
    for (const int slot : req.model_slots) {
        if (slot < 0 || size_t(slot) >= streamed_.size() || !streamed_[size_t(slot)]) continue;
        streamed.push_back(std::move(*streamed_[size_t(slot)]));
        streamed_[size_t(slot)].reset();
        o.models.push_back(streamed.back().path);
    }
    if (req.model_slots.empty())
        for (const QString& p : req.paths) o.models.push_back(p.toStdString());
    std::vector<RemoteReply> remote;
    for (const int slot : req.remote_slots)
        if (slot >= 0 && size_t(slot) < remote_.size() && remote_[size_t(slot)])
            remote.push_back(*remote_[size_t(slot)]);
    for (const QString& p : req.prompts) o.prompts.push_back(p.toStdString());
    o.n_predict = req.n_predict;
    o.ppl_ctx = req.ppl_ctx;
    o.repetitions = req.repetitions;
    if (req.text) o.text_file = req.text->toStdString();
    if (req.testset) o.testset_file = req.testset->toStdString();
    const model::LoadOptions lo = load_;
    o.kv_type = lo.context.kv_type;  // the streamed models were loaded with it
    const ModelLoadFn load = loadFn_;
    const auto cancel = cancel_;
    const quint64 gen = gen_;
    RunRecorder* recorder = recorder_;
    const std::string name = req.name.toStdString();
    (void)QtConcurrent::run(&pool_, [this, o, lo, load, cancel, gen, ctx, name, recorder,
                                     labels = req.labels, price = req.price,
                                     streamed = std::move(streamed), remote = std::move(remote),
                                     on_progress, on_done]() mutable {
        auto res = std::make_shared<FiguresResult>();
        std::shared_ptr<wb::compare::CompareReport> rep;
        if (!o.models.empty()) {
            const wb::compare::CompareProgress progress = [&](const std::string& msg) {
                // Progress comes between prompts / chunks / items: the place to stop.
                if (cancel->load()) throw Cancelled{};
                post(gen, ctx, [on_progress, m = QString::fromStdString(msg)] { on_progress(m); });
            };
            try {
                if (streamed.empty()) {
                    const wb::compare::ModelLoader loader =
                        [&lo, &load](const std::string& path, const model::ContextParams& cp) {
                            model::LoadOptions l = lo;
                            l.context = cp;
                            return load(path, l);
                        };
                    rep = std::make_shared<wb::compare::CompareReport>(
                        wb::compare::run_compare(o, loader, progress));
                } else {
                    std::vector<wb::compare::LoadedModel> models;  // [n_models], borrowed
                    for (const StreamedModel& m : streamed)
                        models.push_back({m.model.get(), m.load_ms});
                    rep = std::make_shared<wb::compare::CompareReport>(
                        wb::compare::run_compare(o, models, progress));
                }
            } catch (const Cancelled&) {
                res->error = tr("cancelled");
            } catch (const std::exception& e) {
                res->error = QString::fromStdString(e.what());
            }
            streamed.clear();  // the models' memory goes back now, not when the task is deleted
            if (!rep) {
                post(gen, ctx, [on_done, res] { on_done(*res); });
                return;
            }
            if (labels.size() == rep->models.size()) {
                for (size_t i = 0; i < labels.size(); ++i) rep->models[i].label = labels[i];
                if (!labels.empty() && labels[0] != "A")
                    rep->notes.push_back(
                        "the figures are against " + labels[0] +
                        ", the first local model: A is a remote endpoint (no logits)");
            }
            res->report = rep;
        }
        // Logged on the recorder's writer, in order with the app's other
        // rows. This worker waits for it, so the result is handed back from
        // here, within this service's lifetime (stopAndWait waits for it).
        if (recorder && (rep || !remote.empty())) {
            auto written = std::make_shared<std::promise<void>>();
            std::future<void> done = written->get_future();
            const bool queued = recorder->write([rep, remote, lo, price, name, res, written](
                                                    core::ResponseLogger& logger, bool no_text) {
                int n = 0;
                try {
                    int64_t run_id = 0;
                    if (rep) {
                        run_id =
                            wb::compare::log_comparison(logger, name, *rep, lo, no_text, price);
                        n = static_cast<int>(wb::compare::responses_in(*rep));
                    } else {
                        run_id = logger.begin_run("compare", name,
                                                  nlohmann::json{{"remote_only", true}}, no_text);
                    }
                    if (!remote.empty()) {
                        log_remote(logger.log(), run_id, remote);
                        n += static_cast<int>(remote.size());
                    }
                    if (!rep) logger.end_run(run_id);
                    res->run_id = run_id;
                    res->logged = n;
                } catch (const std::exception& e) {
                    res->log_error = QString::fromStdString(e.what());
                } catch (...) {
                    res->log_error = tr("the run log's write failed");
                }
                written->set_value();
                return res->log_error.isEmpty() ? n : 0;
            });
            if (queued) done.wait();
        }
        post(gen, ctx, [on_done, res] { on_done(*res); });
    });
}

void CompareService::measureDrafts(std::vector<DraftJob> jobs, const QString& prompt,
                                   uint32_t n_predict, QObject* context,
                                   std::function<void(int, const StreamResult&)> on_result,
                                   std::function<void()> on_all_done) {
    const QPointer<QObject> ctx(context);  // read on this thread only
    if (jobs.empty()) return;
    const quint64 gen = gen_;
    const model::LoadOptions lo = load_;
    const ModelLoadFn load = loadFn_;
    const auto cancel = cancel_;
    (void)QtConcurrent::run(
        &pool_, [this, gen, ctx, jobs = std::move(jobs), prompt = prompt.toStdString(), n_predict,
                 lo, load, cancel, on_result, on_all_done] {
            for (const DraftJob& job : jobs) {
                auto res = std::make_shared<StreamResult>(wb::compare::stream_reply(
                    job.path.toStdString(), prompt, n_predict, lo, load, {}, *cancel, job.draft));
                res->model.reset();  // nothing reuses it
                post(gen, ctx, [on_result, slot = job.slot, res] { on_result(slot, *res); });
            }
            post(gen, ctx, on_all_done);
        });
}

}  // namespace wb::gui
