#pragma once
// Scheduler telemetry over a load test: while the steps run, the engine's
// forward passes are fetched from the target's GET /scheduler/passes (our
// server's extension, server/responses.h passes_json) every half second,
// aligned to the client's clock and summed per step: batch size, prefill
// and decode tokens per pass, KV blocks used and free, preemptions (vLLM's
// per-iteration stats). A target without the route (vLLM, llama-server,
// OpenAI) answers 404: telemetry is then unavailable and the test goes on.

#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "load/client.h"
#include "metrics/metrics_store.h"

namespace wb::load {

/// One answer of GET /scheduler/passes.
struct PassPage {
    std::vector<metrics::PassTelemetry> passes;  ///< in index order
    double now_ms = 0;                           ///< the engine's clock at the answer (ms)
    uint64_t next = 0;                           ///< the index to ask for next
    uint64_t end = 0;  ///< the index after the last pass the engine has recorded
};

/// Parses a /scheduler/passes body (at most 16384 passes). Throws
/// std::runtime_error saying what is wrong ("pass 3: 'batch' is not a whole number >= 0") for
/// anything but the documented shape; reads one level of arrays, never recursively.
PassPage parse_passes(std::string_view body);

/// A pass on the client's clock: `t_ms` = its end, ms since the load
/// test's epoch (the steady clock's epoch, as RequestResult::send_ms).
struct TelemetryRow {
    double t_ms = 0;
    metrics::PassTelemetry pass;
};

/// One load step's passes summed (those that ended in [begin, end] on the
/// client's clock).
struct SchedulerStats {
    size_t passes = 0;
    double batch_mean = 0;            ///< sequences per pass, mean; NaN without passes
    uint32_t batch_max = 0;           ///< sequences per pass, max
    uint64_t prefill_tokens = 0;      ///< prompt tokens computed
    uint64_t decode_tokens = 0;       ///< output tokens sampled
    uint32_t kv_blocks_used_max = 0;  ///< most KV blocks held after a pass
    uint32_t kv_blocks_total = 0;     ///< pool size (blocks)
    uint64_t preemptions = 0;
    double busy_ms = 0;  ///< sum of the passes' durations
};

/// Sums the rows with begin_ms <= t_ms <= end_ms. Never throws.
SchedulerStats scheduler_stats(const std::vector<TelemetryRow>& rows, double begin_ms,
                               double end_ms);

/// The CSV of `rows`, one line per pass: step (the label of the load step
/// whose span holds it, "" between steps), t_s (since the first row),
/// index, duration_ms, batch, prefill_tokens, decode_tokens, queued,
/// kv_blocks_used, kv_blocks_free, preemptions. `spans`: each step's label
/// and [begin, end] on the rows' clock.
struct StepSpan {
    std::string label;
    double begin_ms = 0;
    double end_ms = 0;
};
std::string telemetry_csv(const std::vector<TelemetryRow>& rows,
                          const std::vector<StepSpan>& spans);

/// Writes telemetry_csv(rows, spans) to `path`. Throws std::runtime_error
/// naming the path when it cannot be written.
void write_telemetry_csv(const std::string& path, const std::vector<TelemetryRow>& rows,
                         const std::vector<StepSpan>& spans);

/// Fetches the passes on a thread of its own while a load test runs.
class TelemetryPoller {
  public:
    /// `target`: the load test's (its key and timeouts are used);
    /// `interval_ms`: time between fetches.
    explicit TelemetryPoller(Target target, double interval_ms = 500);
    /// Stops (stop()).
    ~TelemetryPoller();
    TelemetryPoller(const TelemetryPoller&) = delete;
    TelemetryPoller& operator=(const TelemetryPoller&) = delete;

    /// Asks where the engine's passes end (the passes before now are not
    /// the test's) and, when the target
    /// answers with passes, starts the thread. Returns false with
    /// unavailable() saying why when it does not (a 404: "the target does
    /// not report scheduler telemetry"). Never throws but bad_alloc.
    bool start();
    /// One last fetch, then the thread ends. Idempotent.
    void stop();
    /// Why telemetry is unavailable ("" while it is available).
    std::string unavailable() const;
    /// The passes fetched so far, in index order, on our clock (each pass's
    /// end plus the offset of the fetch with the shortest round trip).
    std::vector<TelemetryRow> rows() const;

  private:
    // One round of pages; false on an error (sets why_). `skip`: only learn
    // where the passes end.
    bool fetch(bool skip = false);
    void loop();

    Target target_;
    double interval_ms_;
    uint64_t next_ = 0;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::string why_;
    std::vector<metrics::PassTelemetry> passes_;  // as fetched, on the engine's clock
    double offset_ = 0;  // engine clock -> ours (ms), from the shortest round trip
    double best_rtt_ = std::numeric_limits<double>::infinity();
    std::thread thread_;
};

}  // namespace wb::load
