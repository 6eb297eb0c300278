#pragma once
// The run-log row builder: the ONLY code that turns a request into a row of
// the run log's responses table (runlog::ResponseRows, which writes the
// rows, is used from here and nowhere else in the product). Every surface hands it a
// FinishedRequest (core/finished_request.h), so a row means the same
// whatever produced it:
//  - timing fields as FinishedRequest defines them (TTFT from submit, queue
//    wait and prefill apart, ttft = queue_wait + prefill);
//  - the finish reason the engine reported, with its detail as `error`
//    when the response did not complete;
//  - settings as settings_json() wrote them (numbers as numbers), plus
//    "past_n_ctx_train": true and "n_ctx_train" (tokens) when the sequence
//    went past the model's training context (FinishedRequest::past_n_ctx_train);
//  - one environment row per machine and device (environment_of).
// Qt-free.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/engine_session.h"
#include "core/finished_request.h"
#include "runlog/environment.h"
#include "runlog/response_rows.h"
#include "runlog/run_log.h"

namespace wb::core {

/// The ids a row references.
struct LogTags {
    int64_t model_version_id = 0;  ///< RunLog::ensure_model_version
    int64_t environment_id = 0;    ///< RunLog::ensure_environment
};

/// The environment row of this machine running on `device`: host facts
/// (collect_environment) plus the device exactly as the model reports it.
runlog::EnvironmentInfo environment_of(const model::DeviceFacts& device);

/// The row for `f` (run id f.run_id). Pure function.
runlog::ResponseRecord response_record(const FinishedRequest& f, const LogTags& tags);

/// The model_loads row of a session's load (run log schema v4): the phases
/// of `t` (model phases only when t.phases_known), the load settings from
/// `facts` (backend, n_ctx, n_parallel, kv_type) and `device` (name),
/// pipeline cache "none" on the CPU, else "warm" when the on-disk cache
/// held bytes at load and "cold" when not. Pure function.
runlog::ModelLoadRecord model_load_record(const SessionLoadTimes& t, const EngineFacts& facts,
                                          const model::DeviceFacts& device, const LogTags& tags,
                                          std::string_view surface, std::optional<int64_t> run_id);

/// The row key of a request in ResponseRows: "<session_id>:<id>".
std::string row_key(const FinishedRequest& f);

/// Writes the rows of requests to a run log as they run, through
/// runlog::ResponseRows: a row when a request starts (ResponseLogger::start,
/// from its Started event), its text at most once a second (text), its
/// final fields in place at the end (finish). So a process killed mid-run
/// leaves "interrupted" rows with the text so far, and a busy or full run
/// log never drops a response (kept and retried; unlogged() says what is
/// missing). Runs, model versions and environments are resolved once per
/// model file and device and cached. Thread-safe.
///
/// It is a session's RequestRecorder: EngineSession::set_recorder(logger)
/// logs every request with a run id of every surface on that session; an
/// error there (tags() failing) is told by take_new_error().
class ResponseLogger : public RequestRecorder {
  public:
    /// Text updates of one row are at least `min_update_ms` apart (ms on the
    /// session clock the caller passes to text()).
    explicit ResponseLogger(std::shared_ptr<runlog::RunLog> log, double min_update_ms = 1000.0);

    runlog::RunLog& log() { return *log_; }

    /// Starts a run of `kind` ("chat", "batch", "generate", "compare" or a
    /// new lowercase word such as "server") with the settings it starts
    /// with; `no_text`: its rows keep no prompt or output text (RunLog's
    /// "do not store text" run). Throws what RunLog::begin_run throws
    /// (std::invalid_argument for a kind that is not a lowercase word).
    int64_t begin_run(std::string_view kind, const std::string& name,
                      const nlohmann::json& settings, bool no_text = false);
    /// Ends the run. Throws what RunLog::end_run throws.
    void end_run(int64_t run_id);

    /// Model version and environment of a response from `model_path` run
    /// on `device` (hashing the file the first time). Throws what
    /// ensure_model_version / ensure_environment throw; call it once before
    /// a run so that start() and finish() find it cached.
    LogTags tags(const std::string& model_path, const model::DeviceFacts& device);

    /// Writes the cold start of `session`'s model load (a model_loads row,
    /// model_load_record) for `surface` ("generate", "batch", "app", ...)
    /// and the run it was opened for (nullopt: a load serving many runs),
    /// and remembers it: the first request of that session that finishes
    /// with a token sets the row's first_token_ms (open until that token)
    /// and first_ttft_ms. With several requests at once, one that finishes
    /// later may have had its first token a little earlier; the row keeps
    /// the first finisher's, which is what a user of that request waited. Returns the row id.
    /// Throws what tags() and RunLog::log_model_load throw (the caller warns and goes on).
    int64_t log_load(const EngineSession& session, std::string_view surface,
                     std::optional<int64_t> run_id);
    /// The same from a session's facts, for a caller that keeps them
    /// instead of the session (the app's recorder thread): its model path,
    /// device, session id (EngineSession::session_id), load times and facts.
    int64_t log_load(const std::string& model_path, const model::DeviceFacts& device,
                     uint64_t session_id, const SessionLoadTimes& times, const EngineFacts& facts,
                     std::string_view surface, std::optional<int64_t> run_id);

    /// Writes the row of a request that starts: `started` is its Started
    /// event's snapshot (finish reason "interrupted" until finish()).
    /// Nothing when started.run_id is 0. A failed write is kept (finish()
    /// then inserts the whole row). Throws only what tags() throws.
    void start(const FinishedRequest& started);
    /// The text streamed so far for the request of `started` and its token
    /// count, at `now_ms`; written when the row's last write is at least
    /// min_update_ms old. Never throws.
    void text(const FinishedRequest& started, const std::string& output, int64_t tokens,
              double now_ms);
    /// The finished request: its started row gets every final field, or the
    /// whole row is inserted when it has none (a request refused or
    /// cancelled before it started). Nothing when f.run_id is 0. A failed
    /// write is kept for retry. Throws only what tags() throws.
    void finish(const FinishedRequest& f);

    /// RequestRecorder: start(), text() and finish(), never throwing: an
    /// error is kept for take_new_error() and last_error(), and a finished
    /// response whose row could not be built counts in unlogged().
    void request_started(const std::shared_ptr<const FinishedRequest>& started) override;
    void request_text(const std::shared_ptr<const FinishedRequest>& started,
                      const std::string& output, int64_t tokens, double now_ms) override;
    void request_finished(const std::shared_ptr<const FinishedRequest>& result) override;

    /// Retries every kept write; returns the finished responses still not logged.
    size_t flush();
    /// Finished responses not logged yet (kept for retry).
    size_t unlogged() const;
    /// The last write failure in one sentence ("" when none).
    std::string last_error() const;
    /// Each distinct failure once, for a warning when it happens ("" when
    /// the last one was already taken); a failed first-token update of a
    /// model load comes first.
    std::string take_new_error();

  private:
    std::shared_ptr<runlog::RunLog> log_;
    runlog::ResponseRows rows_;
    mutable std::mutex mu_;
    std::map<std::string, int64_t> model_versions_;  // path -> id
    std::map<std::string, int64_t> environments_;    // device key -> id
    struct PendingLoad {
        int64_t row = 0;        // model_loads id
        double ready_ms = 0.0;  // SessionLoadTimes::ready_ms
    };
    std::map<uint64_t, PendingLoad> loads_;  // session id -> load without first token yet
    std::string load_error_;                 // a failed first-token update, not yet taken
    std::string record_error_;               // a recorder call that failed, not yet taken
    std::string last_record_error_;          // the last one, taken or not
    size_t lost_ = 0;                        // finished responses whose row could not be built
};

}  // namespace wb::core
