#pragma once
// The desktop's one door for comparisons (the Compare tab's work, no
// widgets): it loads the models, streams each model's greedy reply and each
// remote endpoint's reply on its own worker thread, computes the figures
// (wb::compare::run_compare) on the models the replies streamed with, runs
// the "target + draft" replies again for their speed, and writes every
// finished comparison to the app's run log through the RunRecorder (its
// one connection, its writer thread, its "do not store text" choice).
//
// Work is grouped in runs: begin() starts one (and cancels the last), and
// every callback of an older run is dropped, so a widget never filters
// results by run. Callbacks run on the service's thread (the GUI thread),
// and only while the `context` object given with them lives.

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QThreadPool>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare.h"
#include "compare/compare_jobs.h"
#include "cost/price.h"
#include "desktop/remote_target.h"
#include "load/client.h"

namespace wb::gui {

class RunRecorder;

/// The figures of one comparison (CompareService::runFigures).
struct FiguresRequest {
    QString name;         ///< the run-log run's name ("compare: Once upon…")
    QStringList prompts;  ///< prompts scored and timed (may be empty for a test set)
    /// Greedy tokens per prompt; perplexity window in tokens (llama-perplexity
    /// -c); timed passes per model after one warm-up. Defaults: the CLI's.
    uint32_t n_predict = wb::compare::CompareOptions{}.n_predict;
    uint32_t ppl_ctx = wb::compare::CompareOptions{}.ppl_ctx;
    uint32_t repetitions = wb::compare::CompareOptions{}.repetitions;
    std::optional<QString> text;     ///< perplexity / KLD text file; none = not part of the run
    std::optional<QString> testset;  ///< JSONL test set; none = not part of the run
    /// The local models, in pane order: streamed slots (streamLocal's
    /// `slot`, its model reused), or when this is empty the files of
    /// `paths`, loaded here.
    std::vector<int> model_slots;
    std::vector<QString> paths;        ///< used when `model_slots` is empty
    std::vector<std::string> labels;   ///< each local model's pane letter, [n_models]
    std::vector<int> remote_slots;     ///< remote replies (streamRemote) logged with the run
    std::optional<cost::Price> price;  ///< priced in the run's settings; none = no cost
};

/// How runFigures ended.
struct FiguresResult {
    /// The figures; null when the run failed or was cancelled.
    std::shared_ptr<const wb::compare::CompareReport> report;
    QString error;      ///< why there is no report ("cancelled", a load error)
    QString log_error;  ///< why the responses are not in the run log; "" = logged or no log
    qint64 run_id = 0;  ///< the run-log run; 0 = not logged
    int logged = 0;     ///< responses written under run_id
};

/// One "target + draft" pane to measure (measureDrafts).
struct DraftJob {
    int slot = 0;  ///< handed back with the result
    QString path;  ///< the target GGUF
    wb::compare::StreamDraft draft;
};

class CompareService : public QObject {
    Q_OBJECT
  public:
    explicit CompareService(QObject* parent = nullptr);
    /// Cancels the running work and waits for the worker threads.
    ~CompareService() override;

    /// Backend ("vulkan" or "cpu") and Vulkan device selector ("" =
    /// default) of the models loaded from now on.
    void setBackend(const QString& backend, const QString& device = QString());
    /// How models are loaded (default wb::model::load_model); called on
    /// worker threads, several at once, so it must be thread-safe. An empty
    /// function restores the default. Set it while no run is going.
    void setModelLoader(wb::compare::ModelLoadFn load);
    /// Where finished comparisons are logged (null = not logged); it must
    /// outlive this service.
    void setRecorder(RunRecorder* recorder) { recorder_ = recorder; }

    /// Starts a run: the last one is cancelled, its models and replies are
    /// released and its callbacks still queued are dropped.
    void begin();
    /// Stops the running work (within one token, one request or one
    /// perplexity chunk); its callbacks still come, with "cancelled".
    void cancel();
    /// cancel() was called in this run.
    bool cancelRequested() const { return cancel_->load(); }
    /// For closing the window: cancels and blocks until every worker thread
    /// has returned. Callbacks still queued are dropped.
    void stopAndWait();

    /// Streams the greedy reply of the GGUF at `path` to `prompt`
    /// (wb::compare::stream_reply: n_predict tokens, no stop token) into
    /// `on_token(id, piece)`, then `on_done(result)`; the model is kept
    /// under `slot` for runFigures until the next begin().
    void streamLocal(int slot, const QString& path, const QString& prompt, uint32_t n_predict,
                     QObject* context, std::function<void(int32_t, const QString&)> on_token,
                     std::function<void(const wb::compare::StreamResult&)> on_done);
    /// Streams `target`'s greedy reply (temperature 0, the completions API,
    /// the raw prompt as the local models run it; `api_key` "" = none) into
    /// `on_piece`, then `on_done(result)`; the reply is kept under `slot`
    /// (labelled `label`) to be logged with the run's figures.
    void streamRemote(int slot, const RemoteTarget& target, const QString& api_key,
                      const QString& label, const QString& prompt, uint32_t n_predict,
                      QObject* context, std::function<void(const QString&)> on_piece,
                      std::function<void(const load::RequestResult&)> on_done);

    /// Computes the figures of `req` on a worker (wb::compare::run_compare,
    /// on the streamed models of `req.model_slots`, or loading `req.paths`), sets
    /// the models' labels, logs the responses (and the remote replies of
    /// `req.remote_slots`) under one "compare" run, then calls `on_done`.
    /// With no local model, only the remote replies are logged (a run of its
    /// own, settings {"remote_only": true}) and `report` is null with an
    /// empty error. `on_progress` gets run_compare's messages ("prompt 1/3",
    /// "perplexity/KLD chunk 3/14"). The streamed models are released when
    /// the figures are done.
    void runFigures(const FiguresRequest& req, QObject* context,
                    std::function<void(const QString&)> on_progress,
                    std::function<void(const FiguresResult&)> on_done);

    /// Runs each job's reply to `prompt` again with its draft, one job at a
    /// time (so its decode speed is not mixed with other models' work),
    /// calling `on_result(slot, result)` after each and `on_all_done` after
    /// the last.
    void measureDrafts(std::vector<DraftJob> jobs, const QString& prompt, uint32_t n_predict,
                       QObject* context,
                       std::function<void(int, const wb::compare::StreamResult&)> on_result,
                       std::function<void()> on_all_done);

  private:
    /// A model a reply streamed with, lent to the figures of the same run.
    struct StreamedModel {
        std::string path;
        std::shared_ptr<model::Model> model;
        double load_ms = 0;
    };
    /// A remote reply, logged with the comparison.
    struct RemoteReply {
        RemoteTarget target;
        std::string model;  ///< the model id sent (the endpoint's first when none was given)
        std::string label;  ///< the pane's letter
        load::RequestSpec spec;
        load::RequestResult result;
    };
    /// Runs `fn` on this service's thread if the run `gen` is still current
    /// and `context` still lives.
    void post(quint64 gen, const QPointer<QObject>& context, std::function<void()> fn);

    model::LoadOptions load_;
    wb::compare::ModelLoadFn loadFn_;
    RunRecorder* recorder_ = nullptr;
    quint64 gen_ = 0;  // the current run (GUI thread)
    std::shared_ptr<std::atomic<bool>> cancel_;
    std::vector<std::optional<StreamedModel>> streamed_;  // [slot] this run's models (GUI thread)
    std::vector<std::optional<RemoteReply>> remote_;      // [slot] this run's remote replies
    QThreadPool pool_;                                    // last: destroyed (and waited for) first
};

}  // namespace wb::gui
