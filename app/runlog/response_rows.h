#pragma once
// The run-log rows of responses while they run, for callers that stream
// them (workbench-cli generate and batch): a row is written when a response
// starts, carries the text streamed so far (updated at most once a second),
// and gets its final fields when it finishes. So
//   - a process killed mid-response (kill -9, a crash) leaves a row saying
//     "interrupted" with the text up to the last update (RunLog::begin_response);
//   - a response is never dropped because the run log was busy or the disk
//     full: a write that fails is kept and retried at every later call and
//     by flush(); unlogged() says what is still missing at the end.
// Never throws for a failed run-log write; thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "runlog/run_log.h"

namespace wb::runlog {

class ResponseRows {
  public:
    /// `log` must outlive this object. Text updates of one response are at
    /// least `min_update_ms` apart (ms of the `now_ms` the caller passes).
    explicit ResponseRows(RunLog& log, double min_update_ms = 1000.0);

    /// Writes the started row of response `key` (a request id unique among
    /// the responses of this object) from `started` (ids, settings, prompt,
    /// started_ms). A failure is kept: finish() then inserts the whole row.
    /// A second start() of a key that has its row (a request resumed after
    /// preemption) keeps that row and writes nothing.
    void start(const std::string& key, const ResponseRecord& started);

    /// The whole text streamed so far for `key` and its token count, at
    /// time `now_ms`; written when the last write of this row is at least
    /// min_update_ms old (a failed update is simply skipped: the next one or
    /// finish() carries the text).
    void text(const std::string& key, const std::string& output, int64_t tokens, double now_ms);

    /// The finished response: its started row is overwritten with `r`, or
    /// `r` is inserted when there is none. A failure keeps `r` for retry.
    void finish(const std::string& key, const ResponseRecord& r);

    /// Retries every kept write, oldest first, until one fails. Returns how
    /// many finished responses are still not logged.
    size_t flush();

    /// Finished responses not logged yet (kept for retry).
    size_t unlogged() const;
    /// The last write failure, one sentence ("" when none); cleared by a
    /// flush() that leaves nothing unlogged.
    std::string last_error() const;
    /// Each distinct failure once, for a warning the moment it happens
    /// (returns "" when the last failure was already taken).
    std::string take_new_error();

  private:
    struct Row {
        int64_t id = 0;  // started row, 0 when it could not be written
        double last_write = -1e300;
    };
    struct Kept {
        std::string key;
        int64_t id = 0;
        ResponseRecord record;
    };
    bool write_final(int64_t id, const ResponseRecord& r);  // caller holds mu_
    void retry_kept();                                      // caller holds mu_

    RunLog& log_;
    const double min_update_ms_;
    mutable std::mutex mu_;
    std::map<std::string, Row> rows_;
    std::deque<Kept> kept_;
    std::string error_, reported_;
};

}  // namespace wb::runlog
