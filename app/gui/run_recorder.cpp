#include "run_recorder.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtConcurrent>

#include "runlog/environment.h"
#include "runlog/run_log.h"

namespace wb::gui {

namespace {

nlohmann::json to_json(const GenSettings& s) {
    return nlohmann::json::parse(
        QJsonDocument(s.toJson()).toJson(QJsonDocument::Compact).toStdString());
}

std::optional<double> measured(double v) {
    if (v < 0) return std::nullopt;
    return v;
}

}  // namespace

RunRecorder::RunRecorder(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
}

RunRecorder::~RunRecorder() {
    pool_.waitForDone();
    log_.reset();
    if (!scratch_dir_.isEmpty()) QDir(scratch_dir_).removeRecursively();
}

QString RunRecorder::defaultPath() {
    QString base = qEnvironmentVariable("XDG_DATA_HOME");
    if (base.isEmpty()) base = QDir::homePath() + "/.local/share";
    return base + "/inference-workbench/runlog.sqlite";
}

bool RunRecorder::open(const QString& path, QString* notice) {
    log_.reset();
    inspection_.reset();
    try {
        QDir().mkpath(QFileInfo(path).absolutePath());
        log_ = std::make_shared<runlog::RunLog>(runlog::RunLog::open(path.toStdString()));
        if (notice) notice->clear();
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
                             const GenSettings& settings) {
    if (!log_ || log_->read_only()) return 0;
    runlog::RunKind k = runlog::RunKind::Chat;
    if (kind == "batch")
        k = runlog::RunKind::Batch;
    else if (kind == "compare")
        k = runlog::RunKind::Compare;
    try {
        return log_->begin_run(k, name.toStdString(), to_json(settings));
    } catch (const std::exception& e) {
        emit failed(QString::fromUtf8(e.what()));
        return 0;
    }
}

void RunRecorder::endRun(qint64 run_id) {
    if (!log_ || run_id <= 0) return;
    auto log = log_;
    (void)QtConcurrent::run(&pool_, [this, log, run_id] {
        try {
            log->end_run(run_id);
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
    });
}

void RunRecorder::setModel(const QString& gguf_path, const QString& backend,
                           const QString& device_name, const QString& device_type,
                           const QString& driver_name, const QString& driver_version,
                           const QString& api_version) {
    if (!log_ || log_->read_only()) return;
    auto log = log_;
    runlog::DeviceInfo dev;
    if (backend == "vulkan") {
        dev.name = device_name.toStdString();
        dev.type = device_type.toStdString();
        dev.driver_name = driver_name.toStdString();
        dev.driver_version = driver_version.toStdString();
        dev.api_version = api_version.toStdString();
    }
    const std::string path = gguf_path.toStdString();
    const std::string be = backend == "vulkan" ? "vulkan" : "cpu";
    (void)QtConcurrent::run(&pool_, [this, log, dev, path, be] {
        try {
            model_version_id_ = log->ensure_model_version(path);
            environment_id_ = log->ensure_environment(runlog::collect_environment(be, dev));
        } catch (const std::exception& e) {
            model_version_id_.reset();
            environment_id_.reset();
            emit failed(QString::fromUtf8(e.what()));
        }
    });
}

void RunRecorder::log(const RequestResult& r) {
    if (!log_ || r.run_id <= 0) return;
    auto log = log_;
    (void)QtConcurrent::run(&pool_, [this, log, r] {
        if (!model_version_id_ || !environment_id_) {
            emit failed(tr("response %1 not logged: the model version is not known").arg(r.id));
            return;
        }
        runlog::ResponseRecord rec;
        rec.run_id = r.run_id;
        rec.model_version_id = *model_version_id_;
        rec.environment_id = *environment_id_;
        rec.request_id = (r.label.isEmpty() ? r.id : r.label).toStdString();
        rec.settings = to_json(r.settings);
        rec.settings["prompt_mode"] = "raw";
        // A chat prompt says how it became token ids (template, BOS, ...).
        if (!r.prompt_format.isEmpty()) {
            const nlohmann::json f = nlohmann::json::parse(
                QJsonDocument(r.prompt_format).toJson(QJsonDocument::Compact).toStdString());
            for (const auto& [key, value] : f.items()) rec.settings[key] = value;
        }
        rec.prompt = r.prompt.toStdString();
        rec.prompt_tokens = r.prompt_tokens;
        rec.output = r.output.toStdString();
        rec.output_tokens = r.generated_tokens;
        rec.finish_reason = r.finish_reason.toStdString();
        rec.error = r.error.toStdString();
        rec.queue_wait_ms = measured(r.queue_wait_ms);
        rec.ttft_ms = measured(r.ttft_ms);
        rec.tpot_ms = measured(r.tpot_ms);
        rec.e2e_ms = measured(r.e2e_ms);
        if (r.generated_tokens > 0) {
            rec.prefill_tps = measured(r.prefill_tps);
            rec.decode_tps = measured(r.decode_tps);
        }
        if (r.prompt_cached_tokens >= 0) {
            rec.prompt_cached_tokens = r.prompt_cached_tokens;
            rec.preemptions = r.preemptions;
        }
        rec.started_ms = r.start_utc_ms;
        if (r.finish_utc_ms > 0) rec.finished_ms = r.finish_utc_ms;
        try {
            log->log_response(rec);
            ++logged_;
            emit logged(r.id);
        } catch (const std::exception& e) {
            emit failed(QString::fromUtf8(e.what()));
        }
    });
}

void RunRecorder::waitForIdle() {
    pool_.waitForDone();
}

}  // namespace wb::gui
