#include "desktop/run_recorder.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QStringList>
#include <QTemporaryDir>
#include <QtConcurrent>

#include "core/finished_request.h"
#include "core/response_log.h"
#include "load/client.h"
#include "load/load_log.h"
#include "runlog/retention.h"
#include "runlog/run_log.h"
#include "runlog/time_utc.h"

namespace wb::gui {

namespace {

// The settings panel's values as JSON, numbers as numbers (the seed too).
nlohmann::json to_json(const GenSettings& s) {
    nlohmann::json j = nlohmann::json::parse(
        QJsonDocument(s.toJson()).toJson(QJsonDocument::Compact).toStdString());
    j["seed"] = static_cast<uint64_t>(s.seed);
    // The policy the chat's requests run with (ChatView: a fresh seed per
    // reply unless the seed is fixed), as their rows' settings.seed_policy.
    j["seed_policy"] = s.fixed_seed ? "fixed" : "random";
    return j;
}

}  // namespace

/// The session's side of the recorder: forwards to it while it lives.
class RunRecorder::SessionSide : public core::RequestRecorder {
  public:
    explicit SessionSide(RunRecorder* owner) : owner_(owner) {}
    std::mutex mu;  // held while forwarding and while the owner swaps its logger or goes
    RunRecorder* owner_;

    void request_started(const std::shared_ptr<const core::FinishedRequest>& s) override {
        std::lock_guard lock(mu);
        if (owner_) owner_->started(s);
    }
    void request_text(const std::shared_ptr<const core::FinishedRequest>& s,
                      const std::string& output, int64_t tokens, double now_ms) override {
        std::lock_guard lock(mu);
        if (owner_) owner_->text(s, output, tokens, now_ms);
    }
    void request_finished(const std::shared_ptr<const core::FinishedRequest>& f) override {
        std::lock_guard lock(mu);
        if (owner_) owner_->finished(f);
    }
};

RunRecorder::RunRecorder(QObject* parent)
    : QObject(parent), side_(std::make_shared<SessionSide>(this)) {
    pool_.setMaxThreadCount(1);
}

std::shared_ptr<core::RequestRecorder> RunRecorder::requestRecorder() {
    return side_;
}

RunRecorder::~RunRecorder() {
    {
        std::lock_guard lock(side_->mu);
        side_->owner_ = nullptr;
    }
    pool_.waitForDone();
    logger_.reset();
    log_.reset();
    if (!scratch_dir_.isEmpty()) QDir(scratch_dir_).removeRecursively();
}

QString RunRecorder::defaultPath() {
    QString base = qEnvironmentVariable("XDG_DATA_HOME");
    if (base.isEmpty()) base = QDir::homePath() + "/.local/share";
    return base + "/inference-workbench/runlog.sqlite";
}

bool RunRecorder::open(const QString& path, QString* notice) {
    std::lock_guard side(side_->mu);  // no session records while the log changes
    pool_.waitForDone();
    logger_.reset();
    log_.reset();
    inspection_.reset();
    try {
        // RunLog::open makes a missing folder itself, private (0700).
        log_ = std::make_shared<runlog::RunLog>(runlog::RunLog::open(path.toStdString()));
        logger_ = std::make_shared<core::ResponseLogger>(log_);
        if (notice) {
            // A folder made, or one open to other users: said on success too.
            QStringList lines;
            for (const runlog::OpenNotice& n : log_->open_notices())
                lines << (n.warning ? QObject::tr("Warning: %1") : QObject::tr("Note: %1"))
                             .arg(QString::fromStdString(n.text));
            *notice = lines.join('\n');
        }
        return true;
    } catch (const runlog::OpenError& e) {
        problem_ = e.problem();
        inspection_ = e.inspection();
        if (notice) *notice = QString::fromUtf8(e.what());
    } catch (const std::exception& e) {
        problem_ = runlog::OpenProblem::CannotOpen;
        if (notice) *notice = QString::fromUtf8(e.what());
    }
    return false;
}

bool RunRecorder::openReadOnly(const QString& path, QString* notice) {
    std::lock_guard side(side_->mu);  // no session records while the log changes
    pool_.waitForDone();
    logger_.reset();
    log_.reset();
    try {
        const std::string p = path.toStdString();
        const runlog::LogInspection insp =
            inspection_ && inspection_->path == p ? *inspection_ : runlog::inspect_log(p);
        inspection_ = insp;  // History says what a damaged log is missing
        if (insp.state == runlog::LogState::Damaged) {
            // Never open the damaged file itself: read what can be read
            // into a private copy and show that.
            QTemporaryDir dir(QDir::tempPath() + "/wb-runlog-readonly-XXXXXX");
            dir.setAutoRemove(false);
            if (!dir.isValid()) throw std::runtime_error("cannot make a temp folder");
            scratch_dir_ = dir.path();
            const std::string copy = dir.filePath("readable.sqlite").toStdString();
            runlog::salvage_log(p, copy);
            log_ = std::make_shared<runlog::RunLog>(runlog::RunLog::open_readonly(copy));
        } else {
            log_ = std::make_shared<runlog::RunLog>(runlog::RunLog::open_readonly(p));
        }
        if (notice) notice->clear();
        return true;
    } catch (const std::exception& e) {
        if (notice) *notice = QString::fromUtf8(e.what());
        return false;
    }
}

QString RunRecorder::path() const {
    return log_ ? QString::fromStdString(log_->path()) : QString();
}

qint64 RunRecorder::beginRun(const QString& kind, const QString& name,
                             const nlohmann::json& settings) {
    if (!logger_) return 0;
    try {
        return logger_->begin_run(kind.toStdString(), name.toStdString(), settings,
                                  no_text_.load());
    } catch (const std::exception& e) {
        emit failed(QString::fromUtf8(e.what()));
        return 0;
    }
}

qint64 RunRecorder::beginRun(const QString& kind, const QString& name,
                             const GenSettings& settings) {
    return beginRun(kind, name, to_json(settings));
}

void RunRecorder::purgeTextOlderThanDays(int days) {
    if (days < 1 || !log_ || log_->read_only()) return;
    auto log = log_;
    (void)QtConcurrent::run(&pool_, [this, log, days] {
        try {
            const runlog::PurgeResult r = runlog::purge_text_older_than(
                *log, runlog::now_utc_ms() - int64_t{days} * 86400000);
            emit purged(r.responses, r.bytes_before, r.bytes_after, days);
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
    });
}

void RunRecorder::logRemote(qint64 run_id, const QString& request_id, const std::string& url,
                            const std::string& model, const load::RequestSpec& spec,
                            const load::RequestResult& result, nlohmann::json row_settings) {
    if (!logger_ || run_id <= 0) return;
    // The row is built now (its times are "now"); the worker only writes it.
    auto rec = std::make_shared<runlog::ResponseRecord>(
        load::remote_record(spec, result, std::move(row_settings)));
    rec->run_id = run_id;
    rec->request_id = request_id.toStdString();
    auto log = log_;
    (void)QtConcurrent::run(&pool_, [this, log, rec, url, model, request_id] {
        try {
            load::log_remote_row(*log, *rec, url, model);
            ++logged_;
            emit logged(request_id);
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
    });
}

bool RunRecorder::write(std::function<int(core::ResponseLogger&, bool)> job) {
    if (!logger_ || !job) return false;
    auto logger = logger_;
    const bool no_text = no_text_.load();
    (void)QtConcurrent::run(&pool_, [this, logger, no_text, job = std::move(job)] {
        try {
            logged_ += job(*logger, no_text);
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
    });
    return true;
}

void RunRecorder::endRun(qint64 run_id) {
    if (!logger_ || run_id <= 0) return;
    auto logger = logger_;
    (void)QtConcurrent::run(&pool_, [this, logger, run_id] {
        try {
            logger->end_run(run_id);
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
    });
}

void RunRecorder::started(std::shared_ptr<const core::FinishedRequest> started) {
    if (!logger_ || !started || started->run_id <= 0) return;
    auto logger = logger_;
    (void)QtConcurrent::run(&pool_, [this, logger, started] {
        try {
            logger->start(*started);  // hashes the model file the first time
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
        if (const std::string err = logger->take_new_error(); !err.empty())
            emit failed(QString::fromStdString(err));
    });
}

void RunRecorder::text(std::shared_ptr<const core::FinishedRequest> started,
                       const std::string& output, int64_t tokens, double now_ms) {
    if (!logger_ || !started || started->run_id <= 0) return;
    auto logger = logger_;
    (void)QtConcurrent::run(&pool_, [logger, started, output, tokens, now_ms] {
        logger->text(*started, output, tokens, now_ms);  // never throws
    });
}

void RunRecorder::finished(std::shared_ptr<const core::FinishedRequest> result) {
    if (!logger_ || !result || result->run_id <= 0) return;
    auto logger = logger_;
    (void)QtConcurrent::run(&pool_, [this, logger, result] {
        try {
            const size_t before = logger->unlogged();
            logger->finish(*result);
            // Kept rows (a busy or full log) are retried with the next ones.
            if (logger->unlogged() <= before) {
                ++logged_;
                emit logged(QString::fromStdString(result->label));
            }
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
        if (const std::string err = logger->take_new_error(); !err.empty())
            emit failed(QString::fromStdString(err));
    });
}

void RunRecorder::modelLoaded(const core::EngineSession& session) {
    if (!logger_) return;
    auto logger = logger_;
    // The session's facts by value: the worker never holds the session.
    (void)QtConcurrent::run(
        &pool_, [this, logger, path = session.model_path(), device = session.device(),
                 id = session.session_id(), times = session.load_times(), facts = session.facts()] {
            try {
                logger->log_load(path, device, id, times, facts, "app", std::nullopt);
            } catch (const std::exception& e) {
                emit failed(QString::fromUtf8(e.what()));
            }
        });
}

void RunRecorder::waitForIdle() {
    pool_.waitForDone();
}

}  // namespace wb::gui
