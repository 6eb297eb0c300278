#pragma once
// The Server tab: serves a model over the OpenAI-compatible HTTP API
// (app/server, the code `workbench-cli serve` runs) with a canary rollout
// of a second version when asked. Shows the base URL to copy, the status
// (listening, or why not in words a person can act on), request counters,
// live charts per version (server_charts.h), the canary's controls and a
// timeline of every rollout decision with the figures that made it. Every
// request is logged to the app's run log under one run of kind "server",
// with the server's start, stop and each decision as run events.
//
// The API key is never saved (only the other choices are, by the tab's
// hooks in tabs.cpp); binding an address other than loopback needs one.

#include <QWidget>
#include <functional>
#include <memory>

#include "ui/server_runner.h"

class QCheckBox;
class QDoubleSpinBox;
class QElapsedTimer;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTimer;

namespace wb::gui {
class EngineBridge;
class RunRecorder;
}  // namespace wb::gui

namespace wb::ui {

class ServerCharts;

class ServerTab : public QWidget {
    Q_OBJECT
  public:
    /// `bridge` gives the loaded model's file and device, `recorder` the run
    /// log's path and the app's "do not log text" default (either may be
    /// null: no loaded model / no run log).
    ServerTab(gui::EngineBridge* bridge, gui::RunRecorder* recorder, QWidget* parent = nullptr);
    ~ServerTab() override;

    /// Starts serving with the fields' values; false with the reason in the
    /// status line (bad field, no model) when nothing was started. Loading
    /// and binding go on in the background: listeningAt() or the status.
    bool start();
    /// Stops serving (requests in flight are cancelled); returns at once.
    void stop();
    /// stop() and wait until the server and its sessions are gone.
    void stopAndWait();
    /// Loading, listening or stopping.
    bool isServing() const;
    /// Bound and answering.
    bool isListening() const;
    /// Promote / roll back the canary by hand; false (reason in the status
    /// line) without a running rollout.
    bool promote();
    bool rollBack();

    /// "http://127.0.0.1:PORT" while listening, else "".
    QString baseUrl() const { return url_; }
    /// The run-log run of this server (0: none yet or not logged).
    qint64 runId() const { return run_id_; }
    QString statusText() const;
    QString countersText() const;
    ServerCharts* charts() const { return charts_; }
    QTableWidget* timeline() const { return timeline_; }

    // The fields (settings, tests). Empty model path: the app's loaded model.
    QString modelPath() const;
    void setModelPath(const QString& p);
    QString host() const;
    void setHost(const QString& h);
    int port() const;
    void setPort(int p);
    int parallel() const;
    void setParallel(int n);
    int maxQueue() const;
    void setMaxQueue(int n);
    void setApiKey(const QString& key);  ///< never saved
    bool noText() const;
    void setNoText(bool on);
    bool canaryEnabled() const;
    void setCanaryEnabled(bool on);
    QString canaryPath() const;
    void setCanaryPath(const QString& p);
    QString canarySteps() const;  ///< "5,10,25,50,100" (percent)
    void setCanarySteps(const QString& s);
    double canaryStepSeconds() const;
    void setCanaryStepSeconds(double s);
    int canaryMaxFailures() const;
    void setCanaryMaxFailures(int n);
    double canaryShadow() const;
    void setCanaryShadow(double share);
    /// The rollout's bounds: min requests, min shadow pairs, TTFT and ITL
    /// p99 ratios, error-rate increase, token agreement, mean KLD.
    rollout::Limits canaryLimits() const;
    void setCanaryLimits(const rollout::Limits& l);

  signals:
    /// Bound and answering at `url`.
    void listeningAt(const QString& url);
    /// Serving ended (stopped, or failed to start).
    void serverStopped();
    /// A rollout decision was added to the timeline.
    void decisionAdded();

  private:
    void build();
    void setStatus(const QString& text, bool error);
    void sample();
    void addDecision(const QString& json);
    void updateButtons();
    QString browse(const QString& title);

    gui::EngineBridge* bridge_;
    gui::RunRecorder* recorder_;
    ServerRunner* runner_ = nullptr;
    ServerCharts* charts_ = nullptr;
    QTableWidget* timeline_ = nullptr;
    QTimer* sampler_ = nullptr;
    std::unique_ptr<QElapsedTimer> clock_;
    QString url_;
    qint64 run_id_ = 0;
    bool status_error_ = false;

    QLineEdit* model_ = nullptr;
    QLineEdit* host_ = nullptr;
    QSpinBox* port_ = nullptr;
    QSpinBox* parallel_ = nullptr;
    QSpinBox* maxQueue_ = nullptr;
    QLineEdit* apiKey_ = nullptr;
    QCheckBox* noText_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* stop_ = nullptr;
    QLineEdit* urlEdit_ = nullptr;
    QPushButton* copy_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* counters_ = nullptr;

    QGroupBox* canary_ = nullptr;
    QLineEdit* canaryModel_ = nullptr;
    QLineEdit* steps_ = nullptr;
    QDoubleSpinBox* stepS_ = nullptr;
    QSpinBox* maxFailures_ = nullptr;
    QDoubleSpinBox* shadow_ = nullptr;
    QSpinBox* minRequests_ = nullptr;
    QSpinBox* minShadow_ = nullptr;
    QDoubleSpinBox* ttftRatio_ = nullptr;
    QDoubleSpinBox* itlRatio_ = nullptr;
    QDoubleSpinBox* errorIncrease_ = nullptr;
    QDoubleSpinBox* minAgreement_ = nullptr;
    QDoubleSpinBox* maxKld_ = nullptr;
    QPushButton* promote_ = nullptr;
    QPushButton* rollBack_ = nullptr;
    QLabel* phase_ = nullptr;
};

}  // namespace wb::ui
