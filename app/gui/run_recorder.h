#pragma once
// Logs every chat and batch response of the app to the run log (app/runlog,
// SQLite). Writes happen on one worker thread, in order, so the GUI thread
// never waits on the database's fsync or on hashing a model file
// (ensure_model_version computes the file's SHA-256 the first time).

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <memory>
#include <optional>

#include "request_types.h"

namespace wb::runlog {
class RunLog;
struct DeviceInfo;
}  // namespace wb::runlog

namespace wb::gui {

/// The app's run-log writer.
class RunRecorder : public QObject {
    Q_OBJECT
  public:
    explicit RunRecorder(QObject* parent = nullptr);
    ~RunRecorder() override;

    /// Opens (or creates) the log at `path` with RunLog::open_or_recover: an
    /// unusable file is set aside and a fresh log created; `notice` then
    /// gets the message naming the kept file. Returns false (with the
    /// reason in `notice`) when no log can be opened; the app then runs
    /// without logging.
    bool open(const QString& path, QString* notice);
    bool isOpen() const { return static_cast<bool>(log_); }
    QString path() const;

    /// Default location: $XDG_DATA_HOME/inference-workbench/runlog.sqlite
    /// (else ~/.local/share/inference-workbench/runlog.sqlite).
    static QString defaultPath();

    /// Starts a run ("chat" or "batch") with the settings it starts with;
    /// returns its id, or 0 when the log is closed or the write fails.
    /// Runs on the calling thread (one small transaction).
    qint64 beginRun(const QString& kind, const QString& name, const GenSettings& settings);
    /// Marks a run ended (on the worker, after the responses queued before it).
    void endRun(qint64 run_id);

    /// The model and environment later responses are tagged with. Hashing
    /// happens on the worker. `backend` is "vulkan" or "cpu"; the device
    /// fields are empty for "cpu".
    void setModel(const QString& gguf_path, const QString& backend, const QString& device_name,
                  const QString& device_type, const QString& driver_name,
                  const QString& driver_version, const QString& api_version);

    /// Queues one finished response (ignored when r.run_id == 0).
    void log(const RequestResult& r);

    /// Responses written since open().
    qint64 loggedCount() const { return logged_.load(); }
    /// Blocks until every queued write is done (tests, shutdown).
    void waitForIdle();

  signals:
    /// A response row was committed (emitted from the worker thread; connect queued).
    void logged(const QString& request_id);
    /// A write failed; the app keeps going without that row.
    void failed(const QString& message);

  private:
    std::shared_ptr<runlog::RunLog> log_;
    QThreadPool pool_;  // one thread: writes stay in submission order
    // Touched only on the pool thread.
    std::optional<qint64> model_version_id_;
    std::optional<qint64> environment_id_;
    std::atomic<qint64> logged_{0};
};

}  // namespace wb::gui
