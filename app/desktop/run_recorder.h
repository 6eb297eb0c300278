#pragma once
// Logs every response of the app to the run log (app/runlog, SQLite)
// through the one row builder, core::ResponseLogger: a row when a request
// starts, its text about once a second, the final fields in place (the
// same rows `workbench-cli` writes). Writes happen on one worker thread, in
// order, so the GUI thread never waits on the database's fsync or on
// hashing a model file (the first row of a model computes its SHA-256).
// Sessions hand it their requests themselves (requestRecorder(), set on the
// session by the engine bridge), on their delivery thread.

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "desktop/request_types.h"
#include "runlog/integrity.h"
#include "runlog/run_log.h"

namespace wb::core {
class EngineSession;
struct FinishedRequest;
class ResponseLogger;
class RequestRecorder;
}  // namespace wb::core

namespace wb::load {
struct RequestSpec;
struct RequestResult;
}  // namespace wb::load

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
    /// offer the choices (ui/run_log_dialog.h). On success `notice` holds
    /// RunLog::open_notices() ("Note: created the run log's folder ...",
    /// "Warning: ... open to other users ..."), one a line, or is empty.
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

    /// Starts a run ("chat", "batch" or "compare") with the settings it
    /// starts with; returns its id, or 0 when the log is closed or the
    /// write fails. Runs on the calling thread (one small transaction).
    qint64 beginRun(const QString& kind, const QString& name, const nlohmann::json& settings);
    /// The same with the settings panel's values as the run's settings
    /// (numbers as numbers).
    qint64 beginRun(const QString& kind, const QString& name, const GenSettings& settings);
    /// Marks a run ended (on the worker, after the responses queued before it).
    void endRun(qint64 run_id);

    /// "Do not store text": runs begun from now on log their responses
    /// without prompt and answer text (RunLog::begin_run's no_text).
    void setNoText(bool on) { no_text_ = on; }
    bool noText() const { return no_text_; }

    /// Removes the prompt and answer text of responses older than `days`
    /// days (runlog::purge_text_older_than: one transaction, then VACUUM),
    /// on the worker thread, in order with the writes. Emits purged() when
    /// done, failed() with the reason when not (a locked log: nothing
    /// changed). Nothing when days < 1 or the log is closed or read-only.
    void purgeTextOlderThanDays(int days);

    /// A request with a run id started (its Started event's snapshot): its
    /// row is written, saying "interrupted" until finished() overwrites it.
    void started(std::shared_ptr<const core::FinishedRequest> started);
    /// The text it streamed so far and its token count, at `now_ms` on the
    /// session clock; written at most about once a second.
    void text(std::shared_ptr<const core::FinishedRequest> started, const std::string& output,
              int64_t tokens, double now_ms);
    /// The request finished: its row gets every final field (or is written
    /// whole when it never started). Ignored when run_id is 0.
    void finished(std::shared_ptr<const core::FinishedRequest> result);

    /// A model was loaded (EngineSession::open): its cold start is written
    /// as a model_loads row of surface "app" (on the worker: the first load
    /// of a file hashes it); the first request of that session with a token
    /// completes it (finished()). Nothing when the log is closed or
    /// read-only; a failed write is reported by failed().
    void modelLoaded(const core::EngineSession& session);

    /// What a session records its requests through
    /// (EngineSession::set_recorder): started(), text() and finished() here,
    /// from the session's delivery thread. Stays valid (and records
    /// nothing) after this recorder is gone.
    std::shared_ptr<core::RequestRecorder> requestRecorder();

    /// One request to a remote OpenAI-compatible endpoint (a Chat or Batch
    /// target): its row (load::remote_record) under run `run_id`, with the
    /// endpoint's model version (load::remote_model_version of `url` and
    /// `model`: the target's URL, never its key) and this machine's
    /// environment, written on the worker in order with the other writes.
    /// `row_settings` must not hold a key. Emits logged(request_id), or
    /// failed() with the reason. Nothing when run_id is 0 or the log is
    /// closed or read-only.
    void logRemote(qint64 run_id, const QString& request_id, const std::string& url,
                   const std::string& model, const load::RequestSpec& spec,
                   const load::RequestResult& result, nlohmann::json row_settings);

    /// Runs `job` on the writer thread, in order with the other writes, with
    /// the one row builder (its RunLog is logger.log()) and the "do not
    /// store text" choice in force now (`no_text`); `job` returns how many
    /// responses it wrote (added to loggedCount()). For writes made of
    /// several rows whose caller wants their run id or error back (the
    /// Compare tab's comparisons); it reports them itself. What it throws
    /// anyway goes to failed(). Returns false, and `job` is not run, when
    /// the log is closed or read-only.
    bool write(std::function<int(core::ResponseLogger& logger, bool no_text)> job);

    /// Responses written since open().
    qint64 loggedCount() const { return logged_.load(); }
    /// Blocks until every queued write is done (tests, shutdown).
    void waitForIdle();

  signals:
    /// A response row was committed (emitted from the worker thread; connect queued).
    void logged(const QString& request_id);
    /// A write failed; the app keeps going without that row.
    void failed(const QString& message);
    /// purgeTextOlderThanDays() finished: `responses` lost their text, the
    /// file (with its -wal) went from `bytes_before` to `bytes_after`.
    void purged(qint64 responses, qint64 bytes_before, qint64 bytes_after, int days);

  private:
    class SessionSide;
    std::shared_ptr<SessionSide> side_;  // requestRecorder(); its lock also guards logger_ swaps
    std::shared_ptr<runlog::RunLog> log_;
    std::shared_ptr<core::ResponseLogger> logger_;  // null when read-only
    runlog::OpenProblem problem_ = runlog::OpenProblem::CannotOpen;
    std::optional<runlog::LogInspection> inspection_;
    QString scratch_dir_;  // the private salvaged copy of a damaged log, removed at exit
    QThreadPool pool_;     // one thread: writes stay in submission order
    std::atomic<qint64> logged_{0};
    std::atomic<bool> no_text_{false};
};

}  // namespace wb::gui
