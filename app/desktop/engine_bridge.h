#pragma once
// The GUI's thin adapter to the one request path (app/core): it loads a
// model into a core::EngineSession in a QtConcurrent worker (progress,
// cancel) and delivers each request's events to the one receiver that
// submitted it, on this object's (the GUI) thread, never blocking on the
// engine. The session logs every request with a run id as it runs, through
// the run recorder (RunRecorder::requestRecorder: core::ResponseLogger, a
// row at start, its text, the finish in place), whichever surface submitted
// it and whether or not the GUI thread is busy.
//
// Chat requests (submit(RequestSpec)) report through the requestStarted /
// tokenArrived / requestFinished signals; other receivers use the
// per-request callbacks (submit(GenerationRequest, ...)) or a batch
// (runBatch). Batch concurrency is the batch client's limit on the session,
// so it changes without rebuilding the scheduler and never waits for the
// chat.

#include <QFutureWatcher>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/batch_runner.h"
#include "core/engine_session.h"
#include "desktop/gen_settings.h"
#include "desktop/model_info.h"
#include "desktop/request_types.h"
#include "desktop/user_error.h"
#include "loader/backend_choice.h"
#include "metrics/metrics_store.h"

namespace wb::tokenizer {
class Vocab;
}

namespace wb::gui {

/// One entry of the device picker.
struct DeviceEntry {
    QString selector;         ///< passed to the engine ("0", "1", ...); "cpu" for the CPU
    QString name;             ///< "llvmpipe (LLVM 15.0.6, 256 bits)" or "CPU" (backend_label)
    QString type;             ///< "discrete-gpu", "integrated-gpu", "cpu", ...
    qint64 memory_bytes = 0;  ///< largest device-local heap (bytes); 0 = unknown
    QString backend;          ///< "vulkan" or "cpu"
    QString driver;           ///< driver name ("llvmpipe", "NVIDIA"); "" for the CPU
    QString driver_version;   ///< decoded driver version
    QString api_version;      ///< Vulkan API version "1.3.255"
    unsigned threads = 0;     ///< the CPU entry: threads it runs with (physical cores)
    /// Set on the entry used when the user has chosen none (the default
    /// follows the hardware, model::choose_default_backend): why, e.g. "no
    /// GPU found: the only Vulkan device, llvmpipe ..., is a CPU device; the
    /// CPU backend is faster there". Empty on every other entry.
    QString default_reason;
};

/// The picker's entries from the Vulkan devices (`vulkan`, in enumeration
/// order, backend "vulkan") and the default choice `choice`: the CPU entry
/// (selector "cpu", name "CPU", threads = choice.threads) first when the
/// choice is "cpu", else last after the Vulkan ones. The chosen entry gets
/// default_reason = choice.reason: the CPU entry, or for "vulkan" the
/// Vulkan entry vk::choose_device picks by default (first discrete GPU,
/// else integrated, else virtual, else any non-CPU device, by
/// DeviceEntry::type as vk::DeviceInfo::type_name() spells it). Pure;
/// never throws.
QList<DeviceEntry> arrange_devices(const QList<DeviceEntry>& vulkan,
                                   const model::BackendChoice& choice);

/// What to load.
struct LoadRequest {
    QString path;
    QString backend = "vulkan";  ///< "vulkan" or "cpu"
    QString device;              ///< DeviceEntry::selector; empty = engine default
    int n_ctx = 2048;            ///< KV pool size in tokens, shared by the running requests
    int n_parallel = 4;          ///< most requests running at once (sequences in the pool)
    QString kv_type = "f16";     ///< KV cache type (model::kv_type_name)
    /// Draft model for speculative decoding (core::SessionOptions::
    /// draft_model): its path, empty = none. It must share the model's
    /// vocabulary, or the load fails naming the first differing token.
    QString draft_model;
};

/// Cold start of the loaded model: from "open" (loadModel) to the first
/// token of its first request, by phase, in ms (steady clock). Pipelines
/// are created on first use, inside the first prefill; the run log's
/// SHA-256 of the file runs beside the load on the recorder's thread.
struct ColdStart {
    double vocab_ms = 0;   ///< mapping the file and reading the vocabulary
    double map_ms = 0;     ///< the model's own mapping of the file
    double parse_ms = 0;   ///< metadata parse and tensor checks
    double device_ms = 0;  ///< Vulkan instance and device, pipeline-cache file (0 on CPU)
    double upload_ms = 0;  ///< weights to the device, KV pool (CPU: dequantize)
    double ready_ms = 0;   ///< open until the model is ready (scheduler started)
    /// open until ready, plus the first request's TTFT (the idle wait for that
    /// request is left out); -1 = none yet
    double first_token_ms = -1;
    double first_ttft_ms =
        -1;  ///< that request's TTFT (submit to first token, first prefill inside)
    qint64 pipeline_cache_bytes = 0;  ///< on-disk pipeline cache found at load (0: cold)
    /// Multi-line text for a tooltip: the phases above, "first token: not yet" until then.
    QString text() const;
};

class RunRecorder;
class CompareService;

/// A finished request in widget types (the one conversion; times in ms as
/// core::FinishedRequest defines them, -1 where not measured). `settings`
/// are the surface's; their max_tokens becomes the one the request ran with
/// (FinishedRequest::settings "max_tokens", e.g. a batch line's own).
RequestResult toResult(const core::FinishedRequest& f, const GenSettings& settings = {});

/// A batch run on the loaded session (EngineBridge::runBatch). Cancelling
/// or dropping it cancels the requests still queued or running.
class BatchJob {
  public:
    BatchJob(std::shared_ptr<core::EngineSession> session,
             std::unique_ptr<core::BatchRunner> runner)
        : session_(std::move(session)), runner_(std::move(runner)) {}
    /// Submits the first entries (once).
    void start() { runner_->start(); }
    /// Submits nothing more; every unfinished entry ends "cancelled".
    void cancel() { runner_->cancel(); }
    core::BatchRunner::Progress progress() const { return runner_->progress(); }
    /// Every entry has had its Finished event (on the engine side; the
    /// receiver gets it at the next delivery).
    bool done() const { return runner_->done(); }

  private:
    // The session stays alive while the job does (a model loaded meanwhile
    // does not leave the runner pointing at a freed one); the runner goes first.
    std::shared_ptr<core::EngineSession> session_;
    std::unique_ptr<core::BatchRunner> runner_;
};

/// Bridge between widgets (GUI thread) and the engine (engine thread).
class EngineBridge : public QObject {
    Q_OBJECT
  public:
    enum class State { NoModel, Loading, Idle, Busy };
    Q_ENUM(State)

    /// One request's callbacks, run on the bridge's thread while the
    /// context object given to submit() lives.
    struct Callbacks {
        /// A slot took it; `started` is the request as admitted.
        std::function<void(quint64 id, const core::FinishedRequest& started)> started;
        /// One output token: its id and the text it completes ("" while a
        /// UTF-8 character or a possible stop string is incomplete).
        std::function<void(quint64 id, int token, const QString& piece)> token;
        /// Always last.
        std::function<void(const core::FinishedRequest& result)> finished;
    };

    explicit EngineBridge(QObject* parent = nullptr);
    ~EngineBridge() override;

    /// The device picker's entries: the Vulkan devices the engine sees and
    /// the CPU backend, arranged by arrange_devices() from
    /// model::choose_default_backend() (CPU first when no Vulkan device is
    /// a GPU; one entry carries default_reason). When Vulkan is unavailable
    /// `vulkan_error` gets the reason and only the CPU is listed. Never
    /// throws (but std::bad_alloc).
    static QList<DeviceEntry> devices(QString* vulkan_error = nullptr);

    /// Requests with a run id are logged through `recorder` (may be null):
    /// the loaded session and every later one records them there.
    void setRecorder(RunRecorder* recorder);
    /// The desktop's comparisons (the Compare tab's loads, threads and
    /// run-log writes), logged through the same recorder. Owned here.
    CompareService* compareService() const { return compare_; }

    /// Starts loading `req` in a worker thread; the current model stays
    /// usable until the new one is ready. Emits loadProgress, then
    /// modelLoaded or modelLoadFailed (or loadCancelled after cancelLoad()).
    void loadModel(const LoadRequest& req);
    /// Abandons the load in progress: the UI is free at once and the
    /// half-loaded model is freed when its worker returns (a load step that
    /// is running is not interrupted mid-way).
    void cancelLoad();
    bool isLoading() const { return loading_ != nullptr; }
    /// For closing the app: abandons a load, cancels every request, stops
    /// the session (joins the engine thread) and delivers the last events
    /// now, so every receiver and the run log see each request in flight
    /// finish ("cancelled") before the event loop ends. Later submits are
    /// refused.
    void shutdown();

    bool hasModel() const { return static_cast<bool>(session_); }
    const ModelInfo& modelInfo() const { return info_; }
    const LoadRequest& loadedRequest() const { return loaded_req_; }
    /// The loaded model's backend as shown (backend_label): "CPU" or the
    /// Vulkan device name.
    QString backendName() const { return backend_name_; }
    State state() const { return state_; }
    /// The loaded session (null without a model).
    std::shared_ptr<core::EngineSession> session() const { return session_; }
    /// The loaded model's vocabulary (it keeps the session it belongs to
    /// alive, so a holder may use it after another model loads); null
    /// without a model. Its tokenize() is const and may be called from the
    /// GUI thread while the engine runs.
    std::shared_ptr<const tokenizer::Vocab> vocab() const;
    /// The loaded model's tokenizer.chat_template; nullopt when the file
    /// has none (or no model is loaded). `read_error`, when given, gets why
    /// the key could not be read (e.g. not a string), else "".
    std::optional<std::string> chatTemplate(std::string* read_error = nullptr) const;
    /// The longest conversation one request may hold (prompt + reply), in
    /// tokens: the context, i.e. the KV pool's size (one request alone may
    /// use all of it); 0 without a model.
    int contextSize() const;
    /// The loaded model's cold start (zeros without a model).
    const ColdStart& coldStart() const { return cold_; }

    /// Submits `req` to the session; its events go to `cb` (this thread)
    /// while `context` lives. Returns the request's id, or 0 when no model
    /// is loaded (nothing is called then). A request the engine refuses
    /// finishes like any other (reason "error" or "rejected").
    quint64 submit(core::GenerationRequest req, QObject* context, Callbacks cb);
    /// The same for a request the loaded session prepared (one prepared by
    /// another session is rendered again).
    quint64 submit(core::PreparedRequest prepared, QObject* context, Callbacks cb);
    /// The chat's form: `spec` as a request of client "chat" (its settings'
    /// seed fixed, its id the label unless spec.label is set): spec.prepared
    /// when the loaded session made it, else its messages rendered by the
    /// session with the chat template spec.chat_template names, or its
    /// plain prompt; its events come as requestStarted,
    /// tokenArrived and requestFinished. Returns false (and emits nothing)
    /// when no model is loaded or the template name is unknown.
    bool submit(const RequestSpec& spec);
    /// Runs `entries` with `opts` (core::BatchRunner: the CLI's batch);
    /// each event reaches `on_event` on this thread while `context` lives.
    /// Null when no model is loaded.
    std::shared_ptr<BatchJob> runBatch(std::vector<core::PromptEntry> entries,
                                       core::BatchOptions opts, QObject* context,
                                       std::function<void(const core::BatchEvent&)> on_event);
    /// Cancels one request (finish reason "cancelled"; its slot is freed
    /// within one step). Unknown ids are ignored.
    void cancel(quint64 id);
    /// Cancels a request submitted as a RequestSpec, by its spec id.
    void cancel(const QString& spec_id);
    /// Cancels every request of the session.
    void cancelAll();
    /// Slots of the loaded session (0 without a model): requests that can
    /// run at once, whatever the admission limits.
    int schedulerSlots() const;
    /// Requests of the session submitted and not yet finished.
    int inFlight() const;

    /// Live metrics for the charts: latency percentiles over the last
    /// `window_s` seconds (0 = since the model loaded), queue depth,
    /// running requests, decode tokens/s and engine memory. Cheap; call it
    /// from a GUI-thread timer (~10 Hz). Returns a zero snapshot when no
    /// model is loaded. With `events` (a cursor the caller keeps for the
    /// loaded model: a new one after each modelLoaded), the snapshot also
    /// carries the per-request samples recorded since the last call with it
    /// (LiveSnapshot::ttft_events, ...), each exactly once.
    LiveSnapshot snapshot(double window_s, metrics::EventCursor* events = nullptr) const;
    /// The session's metrics clock now (ms; 0 without a model): where a
    /// batch run starts, for spanStats().
    double metricsNowMs() const;
    /// The metrics store's statistics over (since_ms, now] on the metrics
    /// clock: the span `workbench-cli batch` prints for its run. A default
    /// (empty) WindowStats without a model.
    metrics::WindowStats spanStats(double since_ms) const;

  signals:
    void loadProgress(double fraction, const QString& step);
    void modelLoaded(const wb::gui::ModelInfo& info);
    void modelLoadFailed(const wb::gui::UserError& error, const wb::gui::LoadRequest& req);
    void loadCancelled();
    void requestStarted(const QString& id);
    /// One generated token: its id and the text it completes (may be ""
    /// while a multi-byte UTF-8 character is incomplete).
    void tokenArrived(const QString& id, int token, const QString& piece);
    void requestFinished(const wb::gui::RequestResult& result);
    void stateChanged(wb::gui::EngineBridge::State state);
    /// coldStart() changed: after a load, and at the first token of the
    /// first request.
    void coldStartChanged(const wb::gui::ColdStart& cold);

  private:
    /// Work the engine thread hands to this thread, run in order by drain().
    struct Delivery {
        std::mutex mu;
        std::vector<std::function<void()>> work;
        bool posted = false;
    };
    /// A request submitted through this bridge, between submit and Finished.
    struct Pending {
        QPointer<QObject> context;
        bool has_context = false;  // false: no receiver (the chat's signals are used)
        Callbacks cb;
        double submitted_ms = 0;  // session clock, from the Started snapshot (cold start)
    };
    struct Batch;
    struct LoadJob;
    struct Loaded;
    void setState(State s);
    void updateBusy();
    void install(std::shared_ptr<Loaded> loaded, const ModelInfo& info, const LoadRequest& r);
    /// A request's first token at `time_ms` (session clock), submitted at
    /// `submitted_ms`: the end of the cold start if it is the session's first.
    void noteFirstToken(double time_ms, double submitted_ms);
    /// Queues `work` for this thread (any thread; one drain posted at a time).
    void post(std::function<void()> work);
    /// Runs the work queued for this thread.
    void drain();
    void onRequestEvent(const core::RequestEvent& e);
    void onBatchEvent(quint64 batch, const core::BatchEvent& e);

    std::shared_ptr<core::EngineSession> session_;
    std::optional<std::string> chat_template_;  // tokenizer.chat_template of the loaded file
    std::string chat_template_error_;           // why it could not be read ("" if it could)
    ColdStart cold_;
    std::chrono::steady_clock::time_point opened_;  // when the loaded model's load began
    std::shared_ptr<Delivery> delivery_ = std::make_shared<Delivery>();
    ModelInfo info_;
    LoadRequest loaded_req_;
    QString backend_name_;
    State state_ = State::NoModel;
    RunRecorder* recorder_ = nullptr;
    CompareService* compare_;  // a child
    double loaded_at_ms_ = 0;  // session clock at install, for snapshot's t_s

    std::shared_ptr<LoadJob> loading_;
    QHash<quint64, Pending> pending_;
    QHash<QString, quint64> id_by_spec_;  // RequestSpec::id -> request id
    QHash<quint64, RequestSpec> specs_;   // request id -> its RequestSpec (chat)
    QHash<quint64, std::shared_ptr<Batch>> batches_;
    quint64 next_batch_ = 1;
};

}  // namespace wb::gui

Q_DECLARE_METATYPE(wb::gui::UserError)
Q_DECLARE_METATYPE(wb::gui::LoadRequest)
Q_DECLARE_METATYPE(wb::gui::ModelInfo)
