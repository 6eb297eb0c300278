#pragma once
// The Server tab's engine side: opens the served model (and a canary) on
// its own sessions, runs app/server's Serving (the same code as
// `workbench-cli serve`) on a worker thread, and reports its life as
// signals on the GUI thread. The served sessions are the tab's own, opened
// from the file on the device the model bar chose, with the tab's slots and
// queue: the app's loaded model keeps serving Chat and Batch meanwhile.

#include <QObject>
#include <QString>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rollout/rollout.h"
#include "server/serving.h"

namespace wb::ui {

/// What to serve and how.
struct ServerLaunch {
    QString model_path;   ///< the stable version's GGUF file
    QString canary_path;  ///< the canary's GGUF file; empty: no rollout
    QString backend = "cpu";
    QString device;   ///< a Vulkan device selector; empty: the default
    QString db_path;  ///< the run log; empty: requests are not logged
    server::ServeConfig config;
};

/// Runs one server at a time; see the top of the file.
class ServerRunner : public QObject {
    Q_OBJECT
  public:
    explicit ServerRunner(QObject* parent = nullptr);
    /// Stops serving and waits for the worker (stopAndWait).
    ~ServerRunner() override;

    /// Starts loading and serving on a worker; false (and nothing started)
    /// while a server runs or stops. Progress arrives as signals.
    bool start(ServerLaunch launch);
    /// Asks the server to stop (new requests 503, requests in flight
    /// cancelled); stopped() follows. Returns at once.
    void stop();
    /// stop(), then waits for the worker to end (the window's close).
    void stopAndWait();
    /// Loading, listening or stopping.
    bool running() const;
    /// Listening (bound and answering).
    bool listening() const;

    /// Every served version's figures now (empty unless listening).
    std::vector<server::VersionSnapshot> snapshot() const;
    /// A person's promote (Verdict::Promote) or roll back
    /// (Verdict::Rollback); false with `why` when there is no rollout or
    /// it already ended.
    bool decideByHand(rollout::Verdict verdict, QString* why);

  signals:
    /// The model files are being opened.
    void loading(const QString& what);
    /// Bound and answering at `url`; `run_id` 0 when not logged.
    void listeningAt(const QString& url, qint64 run_id);
    /// A rollout decision (rollout::Decision::to_json() as compact JSON).
    void decided(const QString& decision_json);
    /// Could not start, with the reason a person can act on.
    void failed(const QString& reason);
    /// Serving ended; `warnings` one sentence each (responses not logged).
    void stopped(const QStringList& warnings);

  private:
    void run(ServerLaunch launch);

    std::thread worker_;
    mutable std::mutex mu_;
    server::Serving* serving_ = nullptr;  // while listening; guarded by mu_
    bool running_ = false;                // guarded by mu_
    bool stop_asked_ = false;             // guarded by mu_
};

/// The reason a person can act on for `what` (an exception's message from
/// loading or binding) when serving `launch`'s model at host:port.
QString explainServeError(const QString& what, const QString& host, int port);

}  // namespace wb::ui
