#pragma once
// The Load tab (docs/load.md): load-tests an OpenAI-compatible endpoint,
// our own server (the Server tab's URL while it serves) or a remote one,
// with the load core `workbench-cli load` runs (app/load), on a worker
// thread (load_runner.h). Fields: target, model, API-key variable,
// arrival (constant / Poisson / gamma with burstiness, or a closed loop of
// N), rate, requests or duration, max tokens, prompts (a file or synthetic
// lengths with a shared prefix), sweep steps, SLOs, run log on/off. Shows a
// progress bar per step in a table with the CLI's columns, the saturation
// and throughput charts (load_charts.h), the highest rate within the SLOs,
// and exports the CLI's JSON and CSV.
//
// The API key is read from the environment variable the field names when a
// test starts; neither the key nor its value is ever saved.

#include <QWidget>

#include "ui/load_runner.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSettings;
class QSpinBox;
class QTableWidget;

namespace wb::gui {
class RunRecorder;
}

namespace wb::ui {

class LoadCharts;

class LoadTab : public QWidget {
    Q_OBJECT
  public:
    /// Table columns: the CLI's table, then the step's progress bar.
    enum Column {
        ColStep,
        ColOffered,
        ColAchieved,
        ColDone,
        ColErrors,
        ColReqPerS,
        ColOutTokPerS,
        ColGoodput,
        ColTtftP50,
        ColTtftP99,
        ColItlP50,
        ColItlP99,
        ColTpotP50,
        ColE2eP50,
        ColE2eP99,
        ColQueueP50,  // queue wait as the target reports it ("-" when it does not)
        ColQueueP99,
        ColProgress,
        ColumnCount
    };

    /// `recorder` gives the run log's path (may be null or closed: not logged).
    explicit LoadTab(gui::RunRecorder* recorder, QWidget* parent = nullptr);
    ~LoadTab() override;

    /// Starts a test with the fields' values; false with the reason in the
    /// status line (bad field, unset key variable, unreadable prompt file)
    /// when nothing was started.
    bool start();
    /// Asks the running test to stop (requests in flight end first).
    void stop();
    /// stop() and wait for the worker (the window's close).
    void stopAndWait();
    bool isRunning() const;
    /// "step 2 of 5 (throughput), 12 of 20 requests" while running; "" idle.
    QString progressText() const;

    /// The URL a test would use: the field, else the Server tab's URL
    /// while it listens, else http://127.0.0.1:8080/v1.
    QString effectiveUrl() const;
    QString statusText() const;
    /// The best-rate label ("" when no step met the SLOs or none given).
    QString bestText() const;
    QTableWidget* table() const { return table_; }
    LoadCharts* charts() const { return charts_; }
    /// The last test's report (steps, best, SLOs, run id).
    load::Report report() const { return runner_->report(); }
    /// The second target's report of a comparison under load (tests).
    std::optional<load::Report> compareReport() const { return runner_->compareReport(); }
    /// The "Compare with" target (URL, its model; "" = none).
    void setCompareTarget(const QString& url, const QString& model = QString());

    /// Writes the last test as the CLI's --json / --csv would; false with
    /// the reason in the status line.
    bool exportJson(const QString& path);
    bool exportCsv(const QString& path);
    /// Writes the target's scheduler passes of the last test as CSV
    /// (load::telemetry_csv: a row per pass); false (status says why) when
    /// the file cannot be written or there are none.
    bool exportTelemetryCsv(const QString& path);
    /// The scheduler passes of the running or last test (tests).
    std::vector<load::TelemetryRow> runnerTelemetry() const;

    // Fields (tests; settings through saveSettings/restoreSettings).
    void setTargetUrl(const QString& url);
    void setModel(const QString& model);
    void setApiKeyEnv(const QString& var);
    /// "constant" | "poisson" | "gamma" | "concurrency".
    void setArrival(const QString& kind);
    void setRate(double rps);
    void setBurstiness(double b);
    void setConcurrency(int n);
    void setRequests(int n);
    void setDurationS(double s);  ///< 0 = none
    void setMaxTokens(int n);
    void setPromptFile(const QString& path);  ///< "" = synthetic
    void setSynthetic(double mean_tokens, double stddev_tokens, double shared_prefix_share);
    void setSweepSteps(int n);  ///< 0 = one step
    void setSweepConcurrency(int n);
    void setSlo(double ttft_p99_ms, double itl_p99_ms, double e2e_p99_ms);  ///< 0 = none
    void setLogEnabled(bool on);
    void setTimeoutS(double s);
    /// The target's price: per hour (> 0), or per million input / output
    /// tokens; all 0 = no cost figures.
    void setPrice(double per_hour, double per_m_input, double per_m_output);
    /// The cost line under the table ("" without a price).
    QString costText() const;

    /// Writes / reads every field but the key (the group is the tab's).
    void saveSettings(QSettings& s) const;
    void restoreSettings(const QSettings& s);

  signals:
    /// A test ended (ran, was stopped or failed; statusText() says which).
    void runFinished();

  protected:
    void showEvent(QShowEvent* e) override;

  private:
    void build();
    void setStatus(const QString& text, bool error);
    void updateFields();
    void onStepStarted(int index, const QString& label, qint64 total);
    void onRequestDone(int index, bool ok);
    void onStepDone(int index);
    void onFinished(const QString& error, bool stopped);
    void showResults();
    QString explain(const QString& url, const QString& reason) const;

    gui::RunRecorder* recorder_;
    LoadRunner* runner_;
    LoadCharts* charts_ = nullptr;
    QTableWidget* table_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* best_ = nullptr;
    QLabel* cost_ = nullptr;
    QString runUrl_;
    int steps_total_ = 0;
    int current_ = -1;
    qint64 current_total_ = 0;
    qint64 current_done_ = 0;
    QString current_label_;

    QLineEdit* url_ = nullptr;
    QLineEdit* model_ = nullptr;
    QLineEdit* keyEnv_ = nullptr;
    // Compare under load: a second target run after the first.
    QLineEdit* compareUrl_ = nullptr;
    QLineEdit* compareModel_ = nullptr;
    QLineEdit* compareKeyEnv_ = nullptr;
    QComboBox* arrival_ = nullptr;
    QDoubleSpinBox* rate_ = nullptr;
    QDoubleSpinBox* burstiness_ = nullptr;
    QSpinBox* concurrency_ = nullptr;
    QSpinBox* requests_ = nullptr;
    QDoubleSpinBox* duration_ = nullptr;
    QSpinBox* maxTokens_ = nullptr;
    QLineEdit* promptFile_ = nullptr;
    QDoubleSpinBox* promptMean_ = nullptr;
    QDoubleSpinBox* promptSd_ = nullptr;
    QDoubleSpinBox* prefixShare_ = nullptr;
    QSpinBox* sweep_ = nullptr;
    QSpinBox* sweepConc_ = nullptr;
    QDoubleSpinBox* sloTtft_ = nullptr;
    QDoubleSpinBox* sloItl_ = nullptr;
    QDoubleSpinBox* sloE2e_ = nullptr;
    QDoubleSpinBox* timeout_ = nullptr;
    QDoubleSpinBox* pricePerHour_ = nullptr;
    QDoubleSpinBox* priceIn_ = nullptr;
    QDoubleSpinBox* priceOut_ = nullptr;
    QCheckBox* log_ = nullptr;
    QPushButton* start_ = nullptr;
    QPushButton* stop_ = nullptr;
    QPushButton* exportJson_ = nullptr;
    QPushButton* exportCsv_ = nullptr;
    QPushButton* exportTelemetry_ = nullptr;
};

}  // namespace wb::ui
