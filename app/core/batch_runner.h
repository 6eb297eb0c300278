#pragma once
// BatchRunner: runs a prompt set (core/prompt_file.h) through an
// EngineSession, the same way for the CLI's `batch` command and the GUI's
// Batch tab: the same request per entry (request_for: the entry's id as the
// label, its prompt or messages (rendered with the chat template the base
// request names, after the run's system prompt if any), its max_tokens and
// stop strings, the run's stop strings after them,
// the seed policy applied with the entry's index), at most `concurrency`
// running (the session's per-client limit for the batch's client), at most
// `max_queue` waiting for a slot at a time (the rest are submitted as
// requests start or finish, never refused for a full queue by this batch).
//
// Events reach `on_event` on the session's delivery thread (or, for a
// request refused after the session shut down or an entry cancelled before
// it was submitted, on the thread that submitted or cancelled it); the
// callback must not block. The session logs each entry's run-log row (a
// run id in `base` and a recorder on the session) before its event comes.
// Qt-free.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "core/engine_session.h"
#include "core/prompt_file.h"

namespace wb::core {

struct BatchOptions {
    /// Everything but the prompt: sampling, max_tokens (for entries without
    /// their own), stop strings (added after each entry's own), ignore_eos,
    /// timeouts, the seed (policy and value: BasePlusIndex gives entry i the
    /// seed value + i), client_id (default "batch") and run_id.
    GenerationRequest base;
    /// A system prompt for every entry ("" = none): an entry becomes the
    /// conversation {system, user: its prompt} (a "messages" entry gets it
    /// first unless it starts with a system message of its own), rendered
    /// by base.chat_template through chat::choose_template (plain text
    /// "SYSTEM\nPROMPT" for a model without a template).
    std::string system_prompt;
    /// Requests of this batch running at once (the session's limit for
    /// base.client_id; the session's slots cap it).
    uint32_t concurrency = 4;
    /// Requests of this batch waiting for a slot at once; the default
    /// submits the whole set at the start.
    uint32_t max_queue = std::numeric_limits<uint32_t>::max();

    BatchOptions() { base.client_id = "batch"; }
};

/// One event of one entry.
struct BatchEvent {
    enum class Type { Started, Token, Finished };
    Type type = Type::Started;
    size_t index = 0;      ///< the entry's position in the set
    double time_ms = 0.0;  ///< session clock (EngineSession::now_ms)
    /// Token: text that may be shown now (RequestEvent::piece; often "").
    std::string piece;
    /// Started: the request as admitted (RequestEvent::result); Finished:
    /// the result. Null for Token.
    std::shared_ptr<const FinishedRequest> result;
};

class BatchRunner {
  public:
    /// Counts of the run so far.
    struct Progress {
        size_t total = 0;      ///< entries
        size_t submitted = 0;  ///< handed to the session
        size_t running = 0;    ///< started, not finished
        size_t waiting = 0;    ///< submitted, not started, not finished
        size_t finished = 0;   ///< any reason
        size_t completed = 0;  ///< finished with stop or length
    };

    /// `session` must outlive the runner's requests (EngineSession::shutdown
    /// ends them all). Nothing is submitted before start().
    BatchRunner(EngineSession& session, std::vector<PromptEntry> entries, BatchOptions opts,
                std::function<void(const BatchEvent&)> on_event);
    /// Cancels what is still queued or running. Nothing more reaches
    /// on_event once the runner is gone.
    ~BatchRunner();
    BatchRunner(const BatchRunner&) = delete;
    BatchRunner& operator=(const BatchRunner&) = delete;

    /// The request of entry `index` (see the top of this file).
    static GenerationRequest request_for(const PromptEntry& entry, size_t index,
                                         const BatchOptions& opts);

    /// Sets the client's concurrency on the session and submits the first
    /// max_queue entries; later ones follow as slots free up. Once only.
    void start();
    /// Submits nothing more and cancels every submitted request that has
    /// not finished (finish reason "cancelled"). Entries never submitted get
    /// their Finished event (reason "cancelled", message "cancelled before
    /// it was submitted", settings as they would have run) on this thread,
    /// so every entry ends with exactly one Finished event.
    void cancel();
    Progress progress() const;
    /// Every entry has had its Finished event.
    bool done() const;
    const std::vector<PromptEntry>& entries() const;

  private:
    struct State;
    static void feed(const std::shared_ptr<State>& st);
    static void on_request_event(const std::shared_ptr<State>& st, size_t index,
                                 const RequestEvent& e);
    std::shared_ptr<State> st_;
};

}  // namespace wb::core
