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
#include "runlog/integrity.h"
#include "runlog/run_log.h"

namespace wb::gui {

/// The app's run-log writer.
class RunRecorder : public QObject {
    Q_OBJECT
  public:
    explicit RunRecorder(QObject* parent = nullptr);
    ~RunRecorder() override;

    /// Opens (or creates) the log at `path` strictly (RunLog::open): a file
    /// that cannot be used is never renamed, moved or written. Returns
    /// false with the reason in `notice` (naming the file, what is wrong
    /// and, for a damaged log, how many responses can still be read);
    /// problem() and inspection() then say which case it is, so the app can
    /// offer the choices (ui/run_log_dialog.h).
    bool open(const QString& path, QString* notice);
    /// Why the last open() failed.
    runlog::OpenProblem problem() const { return problem_; }
    /// For a damaged log: what inspect_log() found (readable responses ...).
    const std::optional<runlog::LogInspection>& inspection() const { return inspection_; }

    /// Uses the existing log at `path` read-only: History shows it, nothing
    /// is logged (beginRun returns 0). A healthy file (read-only on disk)
    /// is read in place; a damaged one through a private salvaged copy in
    /// the temp folder (every readable response; removed at exit), so the
    /// file itself is never opened for writing. False with the reason in
    /// `notice` when neither works.
    bool openReadOnly(const QString& path, QString* notice);
    bool isOpen() const { return static_cast<bool>(log_); }
    /// True after openReadOnly().
    bool isReadOnly() const { return log_ && log_->read_only(); }
    /// The database History reads (for a damaged log opened read-only, the
    /// private salvaged copy).
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
    runlog::OpenProblem problem_ = runlog::OpenProblem::CannotOpen;
    std::optional<runlog::LogInspection> inspection_;
    QString scratch_dir_;  // the private salvaged copy of a damaged log, removed at exit
    QThreadPool pool_;     // one thread: writes stay in submission order
    // Touched only on the pool thread.
    std::optional<qint64> model_version_id_;
    std::optional<qint64> environment_id_;
    std::atomic<qint64> logged_{0};
};

}  // namespace wb::gui
