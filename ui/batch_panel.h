#pragma once
// The Batch tab: load a prompt set (JSONL or one prompt per line; two
// sample sets ship in resources, one whose prompts share a long system
// prompt so the prefix cache's hit rate shows) with the one prompt-file
// parser, choose concurrency, max queue, a per-request timeout and a system
// prompt for every prompt, Run / Cancel. Unknown keys of a line are listed
// as warnings with their line numbers. The run
// is a core::BatchRunner on the loaded session (EngineBridge::runBatch),
// exactly as `workbench-cli batch` runs a set: same ids, seeds = the
// settings' seed + the prompt's index, stop strings, the same settings in
// the run log. Concurrency is the batch client's limit on the session (at
// most its slots), so it changes without a reload and the chat keeps its
// own slots. Malformed lines are listed with their line numbers before a
// run starts. A progress bar with done, failed,
// running, queued and an ETA; a sortable results table that fills as
// requests finish, with a detail view of one response.
// "Send to" (TargetPicker) runs the set against a remote OpenAI-compatible
// endpoint instead: the same prompts, ids, seeds (base + index), per-line
// max_tokens and stop strings, at most `concurrency` requests at once,
// timed on the client and logged with the endpoint's URL; the summary's
// table comes from those client-side times.

#include <QElapsedTimer>
#include <QHash>
#include <QWidget>
#include <functional>
#include <memory>

#include "cost/price.h"
#include "desktop/batch_summary.h"
#include "desktop/gen_settings.h"
#include "desktop/prompt_set.h"
#include "desktop/request_types.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace wb::core {
struct BatchEvent;
}
namespace wb::gui {
class BatchJob;
class EngineBridge;
class RemoteClient;
class RemoteRunStats;
class RunRecorder;
}  // namespace wb::gui

namespace wb::ui {

class PriceFields;
class TargetPicker;

class BatchResultsModel;

class BatchPanel : public QWidget {
    Q_OBJECT
  public:
    /// Counts of the current (or last) run.
    struct Progress {
        int total = 0, done = 0, failed = 0, running = 0, queued = 0;
        /// Prompt tokens of the finished requests that started, and how many
        /// of them came from the prefix cache (hit rate = cached / prompt).
        qint64 prompt_tokens = 0, cached_tokens = 0;
    };

    BatchPanel(gui::EngineBridge* bridge, gui::RunRecorder* recorder,
               std::function<gui::GenSettings()> settings, QWidget* parent = nullptr);
    ~BatchPanel() override;

    /// Reads and lists a prompt file. Returns false when it cannot be read
    /// or has no usable prompt.
    bool loadPromptFile(const QString& path);
    /// The bundled sample set (20 short story prompts).
    bool loadSampleSet();
    /// The bundled set whose 12 prompts share one long system prompt (in
    /// each line's "messages"): from the second wave of requests on, the
    /// prefix cache serves the shared part and the hit rate is above 0.
    bool loadSharedSystemSet();
    const gui::PromptSet& promptSet() const { return set_; }

    /// Asks for a prompt file (JSON Lines or one prompt per line) and loads it.
    void openPromptDialog();

    void setConcurrency(int n);
    void setMaxQueue(int n);
    void setTimeoutMs(int ms);
    /// The run's price: per hour of engine busy time (> 0), or per million
    /// input / output tokens; all 0 = no cost in the summary.
    void setPrice(double per_hour, double per_m_input, double per_m_output);
    /// The system prompt put before every prompt of a run ("" = none):
    /// core::BatchOptions::system_prompt, rendered with the model's chat
    /// template by the one rule (chat::choose_template).
    void setSystemPrompt(const QString& text);
    QString systemPrompt() const;
    int concurrency() const;  ///< scheduler slots for the next run
    int maxQueue() const;     ///< requests allowed to wait for a slot
    int timeoutMs() const;    ///< total time per request, 0 = none

    /// Starts a run. Returns false (with the reason in the status line) when
    /// no model is loaded (and no remote endpoint is chosen), a run is
    /// going, the set is empty, it has malformed lines and "Skip malformed
    /// lines" is off, or a remote endpoint is priced per hour (its busy time
    /// is not known here) or its key cannot be read.
    bool run();
    /// Cancels every request of the run (finish reason "cancelled").
    void cancel();
    bool isRunning() const { return running_; }
    Progress progress() const { return progress_; }
    BatchResultsModel* results() const { return results_; }
    QTableView* table() const { return table_; }
    /// The last finished run's summary (the CLI's table and finish
    /// reasons); shown under the progress bar once a run ends.
    const gui::BatchSummary& summary() const { return summary_; }
    /// The row detail of results() row `row` (source order) as HTML: the
    /// prompt, the output, timings and the max_tokens the request ran with,
    /// saying whether it is the line's own or the settings' default. "" for
    /// a row that does not exist.
    QString detailHtml(int row) const;
    /// The list of malformed lines and warnings shown under the file name.
    QListWidget* problemList() const { return errors_; }
    /// Where the prompts go: the loaded model or a remote endpoint.
    TargetPicker* targetPicker() const { return picker_; }
    /// The status line under the progress bar.
    QLabel* statusLabel() const { return status_; }
    /// The summary as shown (and copied).
    QString summaryText() const;
    /// Writes the summary to `path`: JSON when it ends in ".json", else
    /// CSV. Returns false with `error` set when it cannot be written.
    bool exportSummary(const QString& path, QString* error = nullptr) const;
    /// Puts summaryText() on the clipboard.
    void copySummary() const;

  signals:
    /// run() started a run (its requests are submitted).
    void runStarted();
    void runFinished(const wb::ui::BatchPanel::Progress& p);

  private:
    void showSummary();
    void exportSummaryDialog(const QString& format);
    void showSet();
    void onEvent(const core::BatchEvent& e);
    /// run() against the chosen remote endpoint.
    bool runRemote(const std::optional<cost::Price>& price);
    /// Resets the progress, table and summary for a run that starts now.
    void beginProgress(const std::optional<cost::Price>& price);
    /// Counts one finished request (the table, summary and progress).
    void countFinished(const gui::RequestResult& r);
    void onRemoteFinished(const gui::RequestResult& r);
    void endRunIfDone();
    void updateProgress();
    void showDetail(const QModelIndex& proxy_index);

    gui::EngineBridge* bridge_;
    gui::RunRecorder* recorder_;
    std::function<gui::GenSettings()> settings_;
    gui::PromptSet set_;

    bool running_ = false;
    std::shared_ptr<gui::BatchJob> job_;  // the run on the session
    bool remoteRun_ = false;              // the run goes to picker_'s endpoint
    // The remote run's client-side samples (ms since Run: clock_), for the summary.
    std::unique_ptr<gui::RemoteRunStats> remoteStats_;
    TargetPicker* picker_;
    gui::RemoteClient* remote_;
    gui::GenSettings run_settings_;  // the settings panel's values at Run
    qint64 run_id_ = 0;
    Progress progress_;
    QElapsedTimer clock_;

    QLabel* file_;
    QListWidget* errors_;
    QSpinBox* concurrency_;
    QSpinBox* maxQueue_;
    QSpinBox* timeout_;
    PriceFields* prices_;
    QCheckBox* skipInvalid_;
    QLineEdit* system_;
    QPushButton* run_;
    QPushButton* cancel_;
    QProgressBar* bar_;
    QLabel* status_;
    BatchResultsModel* results_;
    QSortFilterProxyModel* proxy_;
    QTableView* table_;
    QWidget* summaryBox_ = nullptr;
    QPlainTextEdit* summaryView_ = nullptr;
    gui::BatchSummary summary_;
    double runStartMs_ = 0;  // metrics clock at Run
    // Result id -> whether its line set its own max_tokens (row detail).
    QHash<QString, bool> ownMaxTokens_;
    // chat::choose_template's note for the run ("" when none or no
    // conversations), shown in the status line.
    QString templateNote_;
};

}  // namespace wb::ui

Q_DECLARE_METATYPE(wb::ui::BatchPanel::Progress)
