#pragma once
// Sends the Chat and Batch tabs' requests to a remote OpenAI-compatible
// endpoint (RemoteTarget) instead of the loaded model, and reports them in
// the same widget types as the engine bridge: tokenArrived per content
// chunk, then requestFinished with a RequestResult. Timing is the
// client's, from the response stream, as `workbench-cli load` measures it
// (load::send_request: TTFT send -> first content chunk, TPOT, e2e; ms);
// tokens come from the endpoint's usage block, else from the loaded model's
// tokenizer (setTokenCounter), else from counting chunks
// (RequestResult::tokens_source says which; all but "usage" are approximate). Each request with a
// run id is logged through the run recorder (RunRecorder::logRemote: the target URL and model id,
// never the key).

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>

#include "desktop/remote_target.h"
#include "desktop/request_types.h"
#include "load/client.h"

namespace wb::tokenizer {
class Vocab;
}

namespace wb::gui {

class RunRecorder;

/// Requests to remote targets, each on a worker thread; results on this
/// object's (the GUI) thread.
class RemoteClient : public QObject {
    Q_OBJECT
  public:
    /// `recorder` (may be null) logs requests that carry a run id.
    explicit RemoteClient(RunRecorder* recorder, QObject* parent = nullptr);
    /// Cancels every request and waits for their threads (at most one read
    /// timeout on a silent stream).
    ~RemoteClient() override;

    /// Sends `spec` to `target` with `api_key` ("" = none): its messages
    /// (or its plain prompt as one user message) with settings.max_tokens,
    /// temperature, top_p and the seed when fixed; ids of spec.id. Without a
    /// model id, the endpoint's first one from GET /v1/models is sent. Returns
    /// false with the reason in `error` when the base URL is not one
    /// (nothing is emitted then); every later failure (refused connection,
    /// HTTP 401, a broken stream) is a requestFinished with finish_reason
    /// "error" or "timeout" and the reason in `error`.
    bool submit(const RemoteTarget& target, const QString& api_key, const RequestSpec& spec,
                QString* error = nullptr);
    /// Stops request `id` (finish_reason "cancelled" once its thread sees it).
    void cancel(const QString& id);
    /// Stops every request.
    void cancelAll();
    /// Requests sent and not yet finished.
    int inFlight() const { return static_cast<int>(cancels_.size()); }
    /// Counts a reply's tokens when the endpoint sends no usage block (the
    /// loaded model's tokenizer: approximate unless it is the endpoint's
    /// model); empty = chunks are counted. Used by requests sent after it;
    /// called on their worker threads, so it must be thread-safe.
    void setTokenCounter(load::TokenCounter count) { count_ = std::move(count); }
    /// setTokenCounter with `vocab`'s tokenize() (the loaded model's
    /// tokenizer: immutable, so the worker threads may share it; the counts
    /// are approximate for another model's replies), or chunk counting
    /// when `vocab` is null.
    void countTokensWith(std::shared_ptr<const tokenizer::Vocab> vocab);
    /// Most requests sent at once (the rest wait in order); >= 1.
    void setMaxParallel(int n) { pool_.setMaxThreadCount(std::max(1, n)); }

  signals:
    /// One content chunk's text (token = -1: remote token ids are unknown).
    void tokenArrived(const QString& id, int token, const QString& piece);
    void requestFinished(const wb::gui::RequestResult& result);

  private:
    RunRecorder* recorder_;
    load::TokenCounter count_;
    QThreadPool pool_;
    std::map<QString, std::shared_ptr<std::atomic<bool>>> cancels_;  // by request id
};

}  // namespace wb::gui
