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

#include <QPointer>
#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <QWidget>
#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_jobs.h"
#include "cost/price.h"
#include "desktop/remote_target.h"
#include "load/client.h"
#include "loader/load.h"

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
class SettingsStore;
}

namespace wb::ui::compare {

class ComparePane;
class ReportTable;
class TokenDiffView;

class CompareTab : public QWidget {
    Q_OBJECT
  public:
    explicit CompareTab(QWidget* parent = nullptr);
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
    /// How this tab loads models (default wb::model::load_model). Called on
    /// worker threads, several at once, so it must be thread-safe. Each
    /// comparison loads each file once: runPrompt() in the pane's stream
    /// (the figures reuse that model), runTestSet() in run_compare. Set it
    /// while no run is going.
    /// An empty function restores the default.
    void setModelLoader(wb::compare::ModelLoadFn load);
    /// Run-log file the comparisons are written to; empty = no logging.
    void setRunLogPath(const QString& path) { runLogPath_ = path; }
    /// Asked as each comparison starts: true logs it as a no-text run (the
    /// Settings panel's "Do not store prompts and answers"). Unset = false.
    void setNoTextSource(std::function<bool()> no_text) { noText_ = std::move(no_text); }
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
    /// A model a pane streamed with, lent to the figures of the same run.
    struct StreamedModel {
        std::string path;
        std::shared_ptr<model::Model> model;
        double load_ms = 0;
    };
    /// A remote pane's reply, logged with the comparison.
    struct RemoteReply {
        gui::RemoteTarget target;
        std::string model;  ///< the model id sent (the endpoint's first when none was given)
        std::string label;  ///< the pane's letter
        load::RequestSpec spec;
        load::RequestResult result;
    };
    /// Panes that are local models, in order (the figures' models).
    std::vector<ComparePane*> localPanes() const;
    /// "Add endpoint…": a menu of the saved endpoints.
    void addEndpointMenu();
    /// Writes `remote` to the run log at `db` under compare run `run_id`, or
    /// under a new compare run named `name` when run_id is 0 (ended after
    /// them). Returns the run id. Throws what the run log throws.
    static int64_t logRemoteReplies(const std::string& db, int64_t run_id, const std::string& name,
                                    const std::vector<RemoteReply>& remote, bool no_text);
    /// Streams `pane`'s reply from its endpoint on a worker.
    void startRemoteReply(int index, quint64 gen, const QString& prompt, uint32_t n_predict);

    /// Letters A, B, … in order, and the status hint for that many models.
    void relabel();
    void setBusy(bool on);
    void onReplyDone(int pane, quint64 gen, const QString& error, bool cancelled);
    /// Computes the figures on a worker. With `streamed` (one per pane, in
    /// pane order) run_compare reuses those models; empty = it loads each
    /// file itself through loadFn_.
    void startComparison(const QString& name, const QStringList& prompts,
                         const std::optional<QString>& text, const std::optional<QString>& testset,
                         std::vector<StreamedModel> streamed, std::vector<RemoteReply> remote = {});
    void onProgress(const QString& msg);
    /// After a prompt run's figures: each "target + draft" pane's reply again
    /// with its draft, alone, then ComparePane::showDraftSpeed.
    void measureDrafts();
    void onReport(std::shared_ptr<wb::compare::CompareReport> r, const QString& log_error,
                  qint64 run_id, int n_logged);
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
    std::vector<std::optional<RemoteReply>> remoteReplies_;  // [n_panes] this run's remote replies
    QPushButton* runBtn_;
    QPushButton* testBtn_;
    QPushButton* cancelBtn_;
    QProgressBar* progress_;
    QLabel* status_;
    PriceFields* prices_;
    std::optional<cost::Price> price_;  // the running comparison's (none = no cost)
    ReportTable* table_;
    TokenDiffView* diff_;

    model::LoadOptions load_;
    QString runLogPath_;
    std::function<bool()> noText_;
    std::optional<QString> textFile_, testsetFile_;
    QString lastText_, lastTestset_;  // the dialog's last choice ("" = sample)
    bool lastChosen_ = false;
    int pplCtx_;
    int repetitions_;
    bool busy_ = false;
    quint64 gen_ = 0;  // run generation: results of an older run are dropped
    int pending_ = 0;  // panes still streaming
    bool anyError_ = false;
    std::vector<size_t> paneVocab_;   // [n_panes] vocabulary hash of each pane's model
    std::vector<QString> paneError_;  // [n_panes] why a pane gave no reply, "" = ok
    // [n_panes] the models of the running runPrompt(), kept from the stream
    // to the figures and released when the comparison ends.
    std::vector<StreamedModel> streamed_;
    QString streamedPrompt_;  // the prompt of the running runPrompt()
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::shared_ptr<wb::compare::CompareReport> report_;
    wb::compare::ModelLoadFn loadFn_;
    QThreadPool pool_;  // last: destroyed (and waited for) first
};

}  // namespace wb::ui::compare
