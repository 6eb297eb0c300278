#pragma once
// Writes a load test to the run log (app/runlog): one run of kind
// "load_test" and one response row per request, warm-up included (marked in
// its settings). The target URL, the model id and the server/version
// headers the endpoint returns go into the settings JSON; the API key never
// does (the writer is never given it).
//
// A remote endpoint has no local GGUF file, yet every response row names a
// model version. Without a local model file, the writer uses a model_versions
// row for the remote model: sha256 = SHA-256 of "remote-model\n<URL>\n<model
// id>", path = the URL, file_size 0, name = the model id, architecture
// "remote", no tensors. With a local model file (the model the endpoint
// serves, given for token counting), its real version is used.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "load/client.h"
#include "load/driver.h"
#include "load/step_stats.h"
#include "runlog/run_log.h"

namespace wb::load {

/// The settings of a load_test run (runs.settings), one definition for
/// `workbench-cli load` and the Load tab: target URL and model (never the
/// key), api, the plan (arrival, rate, burstiness, requests, warm-up, seed;
/// concurrency, max_in_flight and duration_s when set), max_tokens, sweep
/// steps, the SLOs given, and `compare_target` when a comparison names one.
nlohmann::json load_run_settings(const Target& target, const std::string& api, const StepPlan& plan,
                                 int max_tokens, int sweep, const Slo& slo,
                                 const std::string& compare_target = "");

/// The model_versions row of remote model `model` at `url` (described in
/// this file's head), created the first time; returns its id. Throws what
/// the run log throws.
int64_t remote_model_version(runlog::RunLog& log, const std::string& url, const std::string& model);

/// The response row of one request to an endpoint (ids left 0 for the
/// caller): prompt, output, tokens, client-side TTFT, TPOT and e2e, finish
/// reason ("stop"/"length" as the server said, "cancelled" when the client
/// stopped it, "timeout" for a timed-out request, "error" with the reason
/// otherwise) and settings = `row_settings` plus the response id, served
/// model, HTTP status, server headers, ITL count and token-count source.
/// The key is never in it (neither argument holds one). Never throws but
/// std::bad_alloc.
runlog::ResponseRecord remote_record(const RequestSpec& spec, const RequestResult& r,
                                     nlohmann::json row_settings);

/// Writes `rec` (a remote_record with its run and request ids set) as one
/// reply of remote model `model` at `url`: its model version is
/// remote_model_version(log, url, model), its environment this machine's
/// (the client; it computes on the CPU). For the desktop's one-off remote
/// replies (Chat/Batch targets, Compare panes); a load test keeps both ids
/// in its LoadLog. Throws what the run log throws.
void log_remote_row(runlog::RunLog& log, runlog::ResponseRecord rec, const std::string& url,
                    const std::string& model);

/// The run-log writer of one load test (see above). Thread-safe.
class LoadLog {
  public:
    /// Opens the run log at `db_path` (RunLog::open: throws its OpenError),
    /// starts the run (name = the target URL) with `run_settings` (must not
    /// hold a key) and resolves the model version: `local_model` (a GGUF
    /// path, "" = none) or the remote model row described above.
    LoadLog(const std::string& db_path, const std::string& target_url, const std::string& model_id,
            const std::string& local_model, const nlohmann::json& run_settings);

    LoadLog(const LoadLog&) = delete;
    LoadLog& operator=(const LoadLog&) = delete;
    /// Writes the rows still queued and stops the writer (end() not called:
    /// the run keeps no end time). Never throws.
    ~LoadLog();

    /// Queues one request's row for the writer thread (a durable write takes
    /// an fsync; the request threads, and a closed loop's next request, do
    /// not wait for it). The row: prompt, output, tokens, client-side TTFT,
    /// TPOT and e2e, finish reason ("stop"/"length" as the server said,
    /// "timeout" for a timed-out request, "error" with the reason
    /// otherwise) and settings = `row_settings` plus the response id, HTTP
    /// status, server headers, ITL count and token-count source.
    /// Thread-safe; never throws (a failed write is counted, see
    /// write_errors()).
    void log(const RequestSpec& spec, const RequestResult& r, nlohmann::json row_settings);

    /// Waits for the queued rows to be written, then ends the run (sets its
    /// end time). Throws as RunLog::end_run.
    void end();

    /// Rows that could not be written (the first error's text in
    /// first_write_error()).
    size_t write_errors() const;
    std::string first_write_error() const;

    /// The load_test run's id (runs.id).
    int64_t run_id() const { return run_; }
    /// The run log's file path.
    const std::string& path() const { return log_.path(); }

  private:
    runlog::RunLog log_;
    int64_t run_ = 0;
    int64_t model_version_ = 0;
    int64_t environment_ = 0;
    void writer();
    void stop_writer();
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<runlog::ResponseRecord> queue_;
    bool stopping_ = false;
    size_t next_ = 0;
    size_t write_errors_ = 0;
    std::string first_error_;
    std::thread writer_;
};

}  // namespace wb::load
