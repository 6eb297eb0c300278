#include "ui/server_runner.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <algorithm>

#include "core/engine_session.h"
#include "desktop/model_info.h"
#include "runlog/run_log.h"

namespace wb::ui {

namespace {

// One slot's context: the model's training context, at most 2048 tokens
// (the CLI's serve sizes its pool the same way: every slot can hold one
// default-length request).
uint32_t per_slot_context(const std::string& path) {
    const int train = gui::ModelInfo::probe(QString::fromStdString(path)).n_ctx_train;
    return std::clamp<uint32_t>(train <= 0 ? 2048 : static_cast<uint32_t>(train), 64, 2048);
}

std::unique_ptr<core::EngineSession> open_session(const ServerLaunch& l, const std::string& path) {
    core::SessionOptions so;
    so.load.backend = l.backend.toStdString();
    so.load.device = l.device == "cpu" ? std::string() : l.device.toStdString();
    const uint32_t n_slots = std::max<uint32_t>(l.config.parallel, 1);
    so.load.context.n_seq_max = n_slots;
    so.load.context.n_ctx = per_slot_context(path) * n_slots;
    so.limits.max_queue = std::max<uint32_t>(l.config.max_queue, 1);
    return core::EngineSession::open(path, so);
}

}  // namespace

QString explainServeError(const QString& what, const QString& host, int port) {
    if (what.contains("cannot listen on"))
        return QObject::tr(
                   "Cannot listen on %1:%2: the port is in use by another program, or %1 is "
                   "not an address of this computer. Choose another port (0 picks a free one), "
                   "stop the program that holds it, or use 127.0.0.1.")
            .arg(host)
            .arg(port);
    if (what.contains("needs an API key"))
        return QObject::tr(
                   "%1 is reachable from other computers: set an API key (clients then send "
                   "'Authorization: Bearer KEY'), or bind 127.0.0.1.")
            .arg(host);
    return what;
}

ServerRunner::ServerRunner(QObject* parent) : QObject(parent) {}

ServerRunner::~ServerRunner() {
    stopAndWait();
}

bool ServerRunner::start(ServerLaunch launch) {
    {
        const std::lock_guard lock(mu_);
        if (running_) return false;
        running_ = true;
        stop_asked_ = false;
    }
    if (worker_.joinable()) worker_.join();  // the last one ended
    worker_ = std::thread([this, launch = std::move(launch)]() mutable { run(std::move(launch)); });
    return true;
}

void ServerRunner::stop() {
    const std::lock_guard lock(mu_);
    stop_asked_ = true;
    if (serving_) serving_->stop();
}

void ServerRunner::stopAndWait() {
    stop();
    if (worker_.joinable()) worker_.join();
}

bool ServerRunner::running() const {
    const std::lock_guard lock(mu_);
    return running_;
}

bool ServerRunner::listening() const {
    const std::lock_guard lock(mu_);
    return serving_ != nullptr;
}

std::vector<server::VersionSnapshot> ServerRunner::snapshot() const {
    const std::lock_guard lock(mu_);
    return serving_ ? serving_->snapshot() : std::vector<server::VersionSnapshot>{};
}

bool ServerRunner::decideByHand(rollout::Verdict verdict, QString* why) {
    const std::lock_guard lock(mu_);
    server::Canary* c = serving_ ? serving_->canary() : nullptr;
    if (!c) {
        if (why) *why = tr("no canary rollout is running");
        return false;
    }
    if (!c->decide_by_hand(verdict)) {
        if (why) *why = tr("the rollout already ended");
        return false;
    }
    return true;
}

void ServerRunner::run(ServerLaunch l) {
    QPointer<ServerRunner> self(this);
    auto post = [self](auto fn) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, fn] {
                if (self) fn(self.data());
            },
            Qt::QueuedConnection);
    };
    QStringList warnings;
    try {
        post([](ServerRunner* r) { emit r->loading(tr("Loading the model…")); });
        std::unique_ptr<core::EngineSession> stable = open_session(l, l.model_path.toStdString());
        std::unique_ptr<core::EngineSession> canary;
        if (!l.canary_path.isEmpty()) {
            post([](ServerRunner* r) { emit r->loading(tr("Loading the canary…")); });
            canary = open_session(l, l.canary_path.toStdString());
        }
        std::shared_ptr<runlog::RunLog> log;
        if (!l.db_path.isEmpty())
            log = std::make_shared<runlog::RunLog>(runlog::RunLog::open(l.db_path.toStdString()));
        l.config.on_decision = [post](const rollout::Decision& d) {
            const QString text = QString::fromStdString(
                d.to_json().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
            post([text](ServerRunner* r) { emit r->decided(text); });
        };
        {
            server::Serving serving(*stable, l.model_path.toStdString(), canary.get(),
                                    l.canary_path.toStdString(), l.config, log);
            // serving_ never outlives `serving`, whatever ends this block.
            struct Forget {
                ServerRunner* r;
                ~Forget() {
                    const std::lock_guard lock(r->mu_);
                    r->serving_ = nullptr;
                }
            } forget{this};
            serving.bind();
            {
                const std::lock_guard lock(mu_);
                if (!stop_asked_) serving_ = &serving;
            }
            const QString url = QString::fromStdString(serving.base_url());
            const qint64 run_id = serving.run_id();
            post([url, run_id](ServerRunner* r) { emit r->listeningAt(url, run_id); });
            if (listening()) serving.serve();
            {
                const std::lock_guard lock(mu_);
                serving_ = nullptr;
            }
            const server::ServeEnd end = serving.finish();
            for (const std::string& w : end.warnings) warnings << QString::fromStdString(w);
        }
        if (canary) canary->shutdown();
        stable->shutdown();
    } catch (const std::exception& e) {
        const QString why =
            explainServeError(QString::fromUtf8(e.what()),
                              QString::fromStdString(l.config.server.host), l.config.server.port);
        {
            const std::lock_guard lock(mu_);
            serving_ = nullptr;
            running_ = false;
        }
        post([why](ServerRunner* r) { emit r->failed(why); });
        return;
    }
    {
        const std::lock_guard lock(mu_);
        running_ = false;
    }
    post([warnings](ServerRunner* r) { emit r->stopped(warnings); });
}

}  // namespace wb::ui
