#pragma once
// The Compare tab: two or more panes side by side, one per model
// (A = reference, B, C... variants), one prompt box for all of them. Run
// streams each model's greedy reply into its pane from its own worker
// thread (the UI thread never waits on the engine), then fills the figures
// table (wb::compare::run_compare on the same prompt and settings, on the
// very models the panes streamed with: each file is loaded once per
// comparison) and the per-token view that highlights where B's tokens
// differ from A's. The streamed replies are not timed (the models share
// the machine while they stream); each pane's speed is the table's:
// measured model by model after a warm-up (compare::speed_method).
// "Add endpoint…" adds a remote OpenAI-compatible endpoint saved under
// "Send to" (docs/remote.md) as a pane: its greedy reply (temperature 0,
// the same prompt through the completions API) streams beside the local
// ones and its text is compared with A's; it gives no logits, so the
// figures table and the test set are the local models' only.
// "Run test set…" scores perplexity / KL divergence on a text file and
// accuracy on a JSONL test set, with progress and Cancel. Every response of
// a finished comparison is written to the run log under one "compare" run.
// The work itself (loads, worker threads, run-log writes) is the desktop's
// gui::CompareService; this tab is its widgets.

#include <QPointer>
#include <QString>
#include <QWidget>
#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "cost/price.h"
#include "desktop/compare_service.h"
#include "desktop/remote_target.h"

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSplitter;
class QStackedWidget;

namespace wb::compare {
struct CompareReport;
}

namespace wb::ui {
class PriceFields;
}
namespace wb::gui {
class RunRecorder;
class SettingsStore;
}  // namespace wb::gui

namespace wb::ui::compare {

class ComparePane;
class ReportTable;
class TokenDiffView;

class CompareTab : public QWidget {
    Q_OBJECT
  public:
    /// `service` does the tab's work (the app's: EngineBridge::
    /// compareService()); null = a service of the tab's own.
    explicit CompareTab(gui::CompareService* service = nullptr, QWidget* parent = nullptr);
    /// Cancels running work and waits for the worker threads.
    ~CompareTab() override;

    /// Adds a pane for the GGUF at `path` (the first pane is A).
    ComparePane* addModel(const QString& path);
    /// Adds a pane for the remote endpoint `target` with `api_key` ("" =
    /// none; kept in memory only). A remote first pane is A: the others'
    /// text is compared with its text, the figures table with the first
    /// local model.
    ComparePane* addRemote(const gui::RemoteTarget& target, const QString& api_key);
    /// Where "Add endpoint…" finds the saved endpoints (may be null).
    void setStore(gui::SettingsStore* store) { store_ = store; }
    /// Removes `pane` (ignored while a run is going).
    void removeModel(ComparePane* pane);
    const std::vector<ComparePane*>& panes() const { return panes_; }

    /// Backend ("vulkan" or "cpu") and Vulkan device selector ("" = default)
    /// for the models this tab loads.
    void setBackend(const QString& backend, const QString& device = QString());
    /// How this tab loads models (CompareService::setModelLoader). Each
    /// comparison loads each file once: runPrompt() in the pane's stream
    /// (the figures reuse that model), runTestSet() in run_compare. Set it
    /// while no run is going.
    void setModelLoader(wb::compare::ModelLoadFn load);
    /// The app's run log the comparisons are written to, with its "do not
    /// store text" choice (null = no logging); it must outlive this tab.
    void setRecorder(gui::RunRecorder* recorder);
    /// The service doing this tab's work.
    gui::CompareService* service() const { return service_.data(); }
    /// Files "Run test set…" uses instead of asking with its dialog
    /// (EvalInputsDialog); an empty string = not part of the run.
    void setTestFiles(const QString& text_file, const QString& testset_file);
    /// Perplexity window in tokens (llama-perplexity -c); the default is the
    /// CLI's (compare::CompareOptions::ppl_ctx, 512). The dialog sets it too.
    void setPerplexityContext(int n_ctx) { pplCtx_ = n_ctx; }
    int perplexityContext() const { return pplCtx_; }

    /// Timed passes per model for the speed figures, after one untimed
    /// warm-up pass (the CLI's --repetitions; default
    /// compare::CompareOptions::repetitions), clamped to [1, 1000].
    void setRepetitions(int n) { repetitions_ = std::clamp(n, 1, 1000); }
    int repetitions() const { return repetitions_; }

    /// The price each model is priced at (PriceFields: per hour of engine
    /// time, or per million input / output tokens; all 0 = no cost). Each
    /// pane then shows what one pass of the prompt cost on its model
    /// (compare::model_cost, as `workbench-cli compare --price-*`).
    void setPrice(double per_hour, double per_m_input, double per_m_output);

    void setPrompt(const QString& prompt);
    /// Greedy tokens per model, clamped to [1, 4096].
    void setMaxTokens(int n);
    QString prompt() const;
    int maxTokens() const;
    /// A comparison or a test-set run is going.
    bool busy() const { return busy_; }
    /// For closing the window: cancels the running work and blocks until
    /// every worker thread has returned (within one token or one
    /// perplexity chunk). Results still queued for the GUI thread are then
    /// dropped; a comparison cut short writes no run-log rows.
    void stopAndWait();

    ReportTable* table() const { return table_; }
    TokenDiffView* tokenView() const { return diff_; }
    /// The last finished comparison; nullptr before the first.
    const wb::compare::CompareReport* report() const { return report_.get(); }
    /// Status line text (what is running, or the last error).
    QString statusText() const;

  public slots:
    /// Streams the prompt on every pane, then computes the figures.
    void runPrompt();
    /// Perplexity / KLD on the text and accuracy on the test set (files from
    /// setTestFiles(), else chosen in file dialogs).
    void runTestSet();
    /// Stops the running work (within one token or one perplexity chunk).
    void cancel();

  signals:
    /// Every pane's reply of a runPrompt() has arrived (or failed).
    void repliesFinished();
    /// The figures table was filled from a finished comparison.
    void reportReady();
    /// Every "target + draft" pane's speculative run after the figures ended
    /// (ComparePane::showDraftSpeed); emitted only when some pane has a draft.
    void draftSpeedsReady();
    /// A comparison ended without a report: `message` says why.
    void comparisonFailed(const QString& message);
    /// A comparison's responses were committed to the run log.
    void runLogged(qint64 run_id, int responses);

  private:
    /// Panes that are local models, in order (the figures' models).
    std::vector<ComparePane*> localPanes() const;
    /// "Add endpoint…": a menu of the saved endpoints.
    void addEndpointMenu();
    /// Streams pane `index`'s reply: its model, or its endpoint.
    void startReply(int index, const QString& prompt, uint32_t n_predict);

    /// Letters A, B, … in order, and the status hint for that many models.
    void relabel();
    void setBusy(bool on);
    void onReplyDone(const QString& error, bool cancelled);
    /// Computes the figures (CompareService::runFigures): with `streamed`
    /// on the models the panes streamed with (and the remote replies logged
    /// with them), else loading each local pane's file.
    void startComparison(const QString& name, const QStringList& prompts,
                         const std::optional<QString>& text, const std::optional<QString>& testset,
                         bool streamed);
    void onFigures(const gui::FiguresResult& r);
    void onProgress(const QString& msg);
    /// After a prompt run's figures: each "target + draft" pane's reply again
    /// with its draft, alone, then ComparePane::showDraftSpeed.
    void measureDrafts();
    void onReport(const gui::FiguresResult& r);
    void showStatus(const QString& s);

    std::vector<ComparePane*> panes_;
    QSplitter* paneSplit_;
    QStackedWidget* paneStack_ = nullptr;  // the empty state or the panes
    QLabel* empty_ = nullptr;              // "Choose models to compare…"
    QLineEdit* prompt_;
    QSpinBox* maxTokens_;
    QPushButton* addBtn_;
    QPushButton* addRemoteBtn_;
    gui::SettingsStore* store_ = nullptr;
    // [n_panes] this run's remote replies (none for a local pane)
    std::vector<std::optional<load::RequestResult>> remoteResults_;
    QPushButton* runBtn_;
    QPushButton* testBtn_;
    QPushButton* cancelBtn_;
    QProgressBar* progress_;
    QLabel* status_;
    PriceFields* prices_;
    std::optional<cost::Price> price_;  // the running comparison's (none = no cost)
    ReportTable* table_;
    TokenDiffView* diff_;

    std::optional<QString> textFile_, testsetFile_;
    QString lastText_, lastTestset_;  // the dialog's last choice ("" = sample)
    bool lastChosen_ = false;
    int pplCtx_;
    int repetitions_;
    bool busy_ = false;
    int pending_ = 0;  // panes still streaming
    bool anyError_ = false;
    std::vector<size_t> paneVocab_;   // [n_panes] vocabulary hash of each pane's model
    std::vector<QString> paneError_;  // [n_panes] why a pane gave no reply, "" = ok
    QString streamedPrompt_;          // the prompt of the running runPrompt()
    std::shared_ptr<const wb::compare::CompareReport> report_;
    // The loads, worker threads and run-log writes; the bridge's may go
    // before this tab when the window is torn down.
    QPointer<gui::CompareService> service_;
};

}  // namespace wb::ui::compare
