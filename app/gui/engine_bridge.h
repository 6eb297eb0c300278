#pragma once
// The GUI's only door to the engine. Owns the loaded model and the
// continuous-batching scheduler (which runs the model on its own engine
// thread). Scheduler events arrive on the engine thread and are re-posted
// to this object's thread as queued signals, so widgets never block on the
// engine and never see engine-thread calls. Model loading runs in a
// QtConcurrent worker with progress and cancel.

#include <QFutureWatcher>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "gen_settings.h"
#include "metrics/metrics_store.h"
#include "model_info.h"
#include "request_types.h"
#include "user_error.h"

namespace wb::scheduler {
struct Event;
}
namespace wb::tokenizer {
class Vocab;
}

namespace wb::gui {

/// One entry of the device picker.
struct DeviceEntry {
    QString selector;         ///< passed to the engine ("0", "1", ...); "cpu" for the CPU reference
    QString name;             ///< "llvmpipe (LLVM 15.0.6, 256 bits)" or "CPU reference"
    QString type;             ///< "discrete-gpu", "integrated-gpu", "cpu", ...
    qint64 memory_bytes = 0;  ///< largest device-local heap (bytes); 0 = unknown
    QString backend;          ///< "vulkan" or "cpu"
    QString driver;           ///< driver name ("llvmpipe", "NVIDIA"); "" for the CPU
    QString driver_version;   ///< decoded driver version
    QString api_version;      ///< Vulkan API version "1.3.255"
};

/// What to load.
struct LoadRequest {
    QString path;
    QString backend = "vulkan";  ///< "vulkan" or "cpu"
    QString device;              ///< DeviceEntry::selector; empty = engine default
    int n_ctx = 2048;            ///< KV pool size in tokens, shared by the running requests
    int n_parallel = 4;          ///< most requests running at once
};

/// Cold start of the loaded model: from "open" (loadModel) to the first
/// token of its first request, by phase, in ms (steady clock). Pipelines
/// are created on first use, inside the first prefill; the run log's
/// SHA-256 of the file runs beside the load on the recorder's thread.
struct ColdStart {
    double vocab_ms = 0;         ///< mapping the file and reading the vocabulary
    double map_ms = 0;           ///< the model's own mapping of the file
    double parse_ms = 0;         ///< metadata parse and tensor checks
    double device_ms = 0;        ///< Vulkan instance and device, pipeline-cache file (0 on CPU)
    double upload_ms = 0;        ///< weights to the device, KV pool (CPU: dequantize)
    double ready_ms = 0;         ///< open until the model is ready (scheduler started)
    double first_token_ms = -1;  ///< open until the first token of the first request; -1 = none yet
    double first_ttft_ms =
        -1;  ///< that request's TTFT (submit to first token, first prefill inside)
    qint64 pipeline_cache_bytes = 0;  ///< on-disk pipeline cache found at load (0: cold)
    /// Multi-line text for a tooltip: the phases above, "first token: not yet" until then.
    QString text() const;
};

struct LoadedModel;  // model + vocab + scheduler, defined in engine_bridge.cpp

/// Bridge between widgets (GUI thread) and the engine (engine thread).
class EngineBridge : public QObject {
    Q_OBJECT
  public:
    enum class State { NoModel, Loading, Idle, Busy };
    Q_ENUM(State)

    explicit EngineBridge(QObject* parent = nullptr);
    ~EngineBridge() override;

    /// Vulkan devices the engine sees, then the CPU reference (always
    /// last). When Vulkan is unavailable `vulkan_error` gets the reason and
    /// only the CPU reference is listed. Never throws.
    static QList<DeviceEntry> devices(QString* vulkan_error = nullptr);

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
    /// the scheduler (joins the engine thread) and delivers the last events
    /// now, so requestFinished (finish reason "cancelled") reaches the batch
    /// panel and the run log for every request in flight before the event
    /// loop ends. Later submits are refused.
    void shutdown();

    bool hasModel() const { return static_cast<bool>(model_); }
    const ModelInfo& modelInfo() const { return info_; }
    const LoadRequest& loadedRequest() const { return loaded_req_; }
    /// "cpu" or the Vulkan device name of the loaded model.
    QString backendName() const { return backend_name_; }
    State state() const { return state_; }
    /// The loaded model's vocabulary (shared, so a holder keeps it valid
    /// after another model loads); null without a model. Its tokenize() is
    /// const and may be called from the GUI thread while the engine runs.
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

    /// Queues `spec` on the scheduler. Returns false (and emits nothing)
    /// when no model is loaded; a request the scheduler refuses (full
    /// queue, empty or too long prompt) finishes with reason "rejected" or
    /// "error" through requestFinished like any other.
    bool submit(const RequestSpec& spec);
    /// Cancels one request (finish reason "cancelled"; its slot is freed
    /// within one scheduler step). Unknown ids are ignored.
    void cancel(const QString& id);
    /// Cancels every request in the queue or running.
    void cancelAll();
    /// Restarts the scheduler with `n_parallel` slots (1..64) and a queue
    /// bound of `max_queue` (the batch panel's concurrency and max queue);
    /// the model stays loaded. Returns false when no model is loaded or
    /// requests are in flight.
    bool configureScheduler(int n_parallel, int max_queue);
    /// Slots of the running scheduler (0 without a model).
    int schedulerSlots() const;
    /// Requests submitted and not yet finished.
    int inFlight() const { return static_cast<int>(pending_.size()); }

    /// Live metrics for the charts: latency percentiles over the last
    /// `window_s` seconds (0 = since the model loaded), queue depth,
    /// running requests, decode tokens/s and engine memory. Cheap; call it
    /// from a GUI-thread timer (~10 Hz). Returns a zero snapshot when no
    /// model is loaded.
    LiveSnapshot snapshot(double window_s) const;
    /// The scheduler's metrics clock now (ms; 0 without a model): where a
    /// batch run starts, for spanStats().
    double metricsNowMs() const;
    /// The metrics store's statistics over (since_ms, now] on the metrics
    /// clock: the span `workbench-cli batch` prints for its run (its store
    /// holds that run only). A default (empty) WindowStats without a model.
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
    struct Pending;
    void setState(State s);
    void updateBusy();
    void install(std::shared_ptr<LoadedModel> lm, const ModelInfo& info, const LoadRequest& r);
    void startScheduler(uint32_t n_parallel, uint32_t max_queue);
    /// Moves the events the engine thread queued into signals (GUI thread).
    void drain(const std::shared_ptr<LoadedModel>& lm);
    RequestResult toResult(const Pending& p, const scheduler::Event& e) const;

    std::shared_ptr<LoadedModel> model_;
    ColdStart cold_;
    ModelInfo info_;
    LoadRequest loaded_req_;
    QString backend_name_;
    State state_ = State::NoModel;

    struct LoadJob;
    std::shared_ptr<LoadJob> loading_;
    QHash<quint64, std::shared_ptr<Pending>> pending_;
    QHash<QString, quint64> ticket_by_id_;
    quint64 next_ticket_ = 1;
};

}  // namespace wb::gui

Q_DECLARE_METATYPE(wb::gui::UserError)
Q_DECLARE_METATYPE(wb::gui::LoadRequest)
Q_DECLARE_METATYPE(wb::gui::ModelInfo)
