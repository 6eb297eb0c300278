#pragma once
// The metrics store: the scheduler's engine thread records samples as they
// happen; any other thread (the GUI's 10 Hz chart timer, the CLI's progress
// line) takes a snapshot over a sliding time window and over the whole run.
//
// Thread safety: every member function may be called from any thread. One
// mutex guards the samples; record_*() hold it for an O(1) append, and
// snapshot() holds it only while copying the samples it covers, then
// computes the percentiles outside the lock, so a snapshot never stalls the
// engine for longer than a memcpy.
//
// Memory: every sample of the run is kept (exact percentiles need them):
// 16 bytes per sample, i.e. about 16 MB per million generated tokens.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metrics/percentile.h"
#include "metrics/request_metrics.h"

namespace wb::metrics {

/// Statistics over one span of time (a sliding window or the whole run).
/// A sample belongs to the span when its time t satisfies
/// begin_ms < t <= end_ms (for the run, begin_ms is the run start and
/// samples at exactly the start count too).
struct WindowStats {
    double begin_ms = 0.0;  ///< start of the span (ms, store clock)
    double end_ms = 0.0;    ///< end of the span (the snapshot's now)

    // Latencies (ms). queue wait: at admission; TTFT: at the first token;
    // ITL: at every later token, so a long request shows up while it runs.
    // These include every request that got that far, whatever its finish.
    Summary queue_wait_ms;
    Summary ttft_ms;
    Summary itl_ms;
    // At the finish, for completed requests only (finish reason stop or
    // length), as vLLM's benchmark counts successful requests only.
    Summary tpot_ms;
    Summary e2e_ms;
    Summary prompt_tokens;     ///< tokens per completed request
    Summary generated_tokens;  ///< tokens per completed request

    uint64_t requests_finished = 0;   ///< finished events of any reason
    uint64_t requests_completed = 0;  ///< finish reason stop or length
    uint64_t steps = 0;               ///< ubatches (forward passes) that ended in the span
    uint64_t prefill_tokens = 0;      ///< prompt tokens computed by those steps
    uint64_t decode_tokens = 0;       ///< output tokens sampled by those steps
    /// Throughput over the span's wall time (docs/metrics.md), named as
    /// vLLM's benchmark names it; NaN when the span is empty. Prompt and
    /// output tokens share steps, so these are rates over the run, not
    /// per-phase speeds (a request's "prefill tokens/s" is prompt tokens /
    /// its prefill time: core/finished_request.h).
    /// input tokens/s over the run ("input_throughput"): prefill_tokens /
    /// (end - begin), in tokens/s. Prompt tokens served from the prefix
    /// cache are not computed and not counted.
    double input_tokens_per_s = 0.0;
    /// output tokens/s ("output_throughput"): decode_tokens / (end - begin),
    /// in tokens/s.
    double output_tokens_per_s = 0.0;
    /// requests/s ("request_throughput"): requests_completed / (end -
    /// begin), in requests/s.
    double requests_per_s = 0.0;
    /// Share of the span the engine spent inside forward passes (0..1).
    double busy_fraction = 0.0;
    /// Time the span saw the engine generating (ms): for each forward pass
    /// that ended in the span, the time since the pass before it ended,
    /// except for a pass that followed an idle engine (it starts a busy
    /// stretch; idle gaps between chat turns never count). 0 when no such
    /// pass ended in the span.
    double active_ms = 0.0;
    /// Output tokens sampled by the passes counted in active_ms, per second
    /// of active_ms (tokens/s; NaN when active_ms is 0). A reply shorter than
    /// the span reads at its own speed instead of being averaged with the
    /// idle time around it: for one request alone this is exactly its own
    /// (n - 1) / (last token - first token), and for two turns with an idle
    /// gap between them, their tokens over their generating time only.
    double decode_tokens_per_active_s = 0.0;

    // Prefix cache, per request whose first prefill ended in the span (at
    // its first token): its prompt tokens, and how many of them came from
    // the cache instead of being computed.
    uint64_t prefix_prompt_tokens = 0;
    uint64_t prefix_cached_tokens = 0;
    /// prefix_cached_tokens / prefix_prompt_tokens (0..1); NaN when no
    /// request finished its prefill in the span.
    double prefix_hit_rate = 0.0;
    /// Requests preempted (blocks given back, to be recomputed) in the span.
    uint64_t preemptions = 0;
};

/// What snapshot() returns: a plain value, safe to keep and copy.
struct MetricsSnapshot {
    double now_ms = 0.0;     ///< the time the snapshot describes (store clock)
    double window_ms = 0.0;  ///< length of the sliding window asked for
    WindowStats window;      ///< samples with now - window_ms < t <= now
    WindowStats run;         ///< every sample since the run started, up to now
    // Gauges: the last values the scheduler set.
    int32_t queued = 0;           ///< requests waiting for a slot
    int32_t running = 0;          ///< requests holding a slot
    uint32_t kv_cells_used = 0;   ///< KV cells in blocks held by running sequences
    uint32_t kv_cells_total = 0;  ///< KV pool size (n_ctx rounded up to whole blocks)
    /// KV cells in blocks no sequence holds but the prefix cache keeps
    /// (reusable, evicted when the pool needs room).
    uint32_t kv_cells_cached = 0;
    /// Finished requests of the whole run per finish reason, in the order the
    /// reasons were first seen.
    std::vector<std::pair<std::string, uint64_t>> finish_reasons;
};

/// The gauges as last set and totals since the store was made, kept across
/// reset(): what a Prometheus scrape needs (its counters never go down, and
/// a benchmark's reset_metrics() must not zero a server's figures).
/// MetricsStore::lifetime() returns it in O(1).
struct LifetimeTotals {
    int32_t queued = 0;            ///< requests waiting for a slot (last set_gauges)
    int32_t running = 0;           ///< requests holding a slot
    uint32_t kv_cells_used = 0;    ///< KV cells in blocks held by running sequences
    uint32_t kv_cells_total = 0;   ///< KV pool size in cells
    uint32_t kv_cells_cached = 0;  ///< cells of blocks only the prefix cache keeps
    uint64_t steps = 0;            ///< forward passes recorded
    /// Sum of the forward passes' durations (record_step's duration_ms), ms.
    double busy_ms = 0.0;
    uint64_t prefix_prompt_tokens = 0;  ///< record_prefix_cache's prompt_tokens summed
    uint64_t prefix_cached_tokens = 0;  ///< record_prefix_cache's cached summed
};

/// One forward pass of the scheduler as scheduler telemetry (vLLM's
/// per-iteration stats): what it computed and the KV pool after it.
struct PassTelemetry {
    /// The pass's number since the store was made (0-based, never reset):
    /// MetricsStore::passes_after() pages by it.
    uint64_t index = 0;
    double end_ms = 0;             ///< when it ended (store clock, ms)
    double duration_ms = 0;        ///< engine busy time of the pass (ms)
    uint32_t batch = 0;            ///< sequences in the pass (its batch size)
    uint32_t prefill_tokens = 0;   ///< prompt tokens it computed
    uint32_t decode_tokens = 0;    ///< output tokens it sampled
    int32_t queued = 0;            ///< requests waiting for a slot as it ran (the last gauge)
    uint32_t kv_blocks_used = 0;   ///< KV pool blocks held by sequences after it
    uint32_t kv_blocks_total = 0;  ///< KV pool size in blocks
    uint32_t preemptions = 0;      ///< requests preempted since the pass before it
};

/// Per-request samples of one span, as recorded (what events() returns):
/// the live charts keep them and compute any window over them again.
struct EventSamples {
    /// One latency sample: recorded at `t_ms` (store clock), `value_ms` long.
    struct Latency {
        double t_ms;
        double value_ms;
    };
    /// One request's first prefill, at `t_ms`: `cached` of its
    /// `prompt_tokens` came from the prefix cache.
    struct Prefix {
        double t_ms;
        uint32_t prompt_tokens;
        uint32_t cached;
    };
    std::vector<Latency> ttft;  ///< at each request's first token
    std::vector<Latency> e2e;   ///< at each completed request's finish
    std::vector<Prefix> prefix;
};

/// Where MetricsStore::events_since() left off: how many samples of each
/// series it has returned. A new store (or reset()) needs a new cursor.
struct EventCursor {
    size_t ttft = 0;
    size_t e2e = 0;
    size_t prefix = 0;
};

class MetricsStore {
  public:
    /// `run_start_ms`: the run's start on the caller's clock (ms).
    explicit MetricsStore(double run_start_ms = 0.0);

    /// Forgets every sample and gauge and starts a new run at `run_start_ms`.
    void reset(double run_start_ms);

    // ---- recording (the scheduler's engine thread). Times are ms on the
    // same clock as run_start_ms; a time earlier than the previous sample
    // of the same series is clamped to it (series stay sorted by time).
    void record_admitted(double at_ms, double queue_wait_ms);
    void record_first_token(double at_ms, double ttft_ms);
    void record_inter_token(double at_ms, double itl_ms);
    /// A finished request; `m` from compute_request_metrics(). TPOT, e2e and
    /// token counts are recorded when `finish_reason` is "stop" or "length".
    void record_finished(double at_ms, const RequestMetrics& m, std::string_view finish_reason);
    /// One forward pass that ended at `end_ms` and kept the engine busy
    /// `duration_ms` (the scheduler passes the device's own time where the
    /// model reports it, Model::last_device_ms, else its wall time);
    /// `decode_tokens` is the number of tokens sampled from its logits.
    /// `after_idle`: the engine waited for work (no request running) since
    /// the previous pass, so the gap before this one is idle time.
    /// `batch`: sequences in the pass; `kv_blocks_used` / `kv_blocks_total`:
    /// the KV pool after it (PassTelemetry; 0 = not known).
    void record_step(double end_ms, double duration_ms, uint32_t prefill_tokens,
                     uint32_t decode_tokens, bool after_idle = false, uint32_t batch = 0,
                     uint32_t kv_blocks_used = 0, uint32_t kv_blocks_total = 0);
    /// A request's first prefill ended: `cached` of its `prompt_tokens`
    /// came from the prefix cache.
    void record_prefix_cache(double at_ms, uint32_t prompt_tokens, uint32_t cached);
    /// A running request was preempted.
    void record_preempted(double at_ms);
    void set_gauges(int32_t queued, int32_t running, uint32_t kv_cells_used,
                    uint32_t kv_cells_total, uint32_t kv_cells_cached = 0);

    // ---- reading (any thread)
    /// Statistics at `now_ms` over the last `window_ms` (ms, > 0) and over
    /// the whole run. Cost: O(samples covered). Throws std::invalid_argument
    /// when window_ms is not positive.
    MetricsSnapshot snapshot(double now_ms, double window_ms) const;
    /// The TTFT, e2e and prefix-cache samples recorded at t with
    /// after_ms < t <= upto_ms (ms, store clock), in time order. Cost:
    /// O(log samples + samples returned).
    EventSamples events(double after_ms, double upto_ms) const;
    /// The TTFT, e2e and prefix-cache samples appended since `cursor`, in
    /// time order, and moves `cursor` past them: over successive calls each
    /// sample is returned exactly once, also one the engine thread appended
    /// just after a call with a time before that call's (events() by time
    /// would miss it). Cost: O(samples returned).
    EventSamples events_since(EventCursor& cursor) const;
    /// The passes whose index is >= `first_index`, oldest first, at most
    /// `max_passes` of them (PassTelemetry). Passes of a run before the last
    /// reset() are gone: the first returned may then be later than asked.
    /// Cost: O(passes returned).
    std::vector<PassTelemetry> passes_after(uint64_t first_index, size_t max_passes) const;
    /// The gauges and the totals since construction (LifetimeTotals; not
    /// cleared by reset()). O(1), any thread.
    LifetimeTotals lifetime() const;
    /// Time of the latest sample of any kind (run start when none): the end
    /// of a finished run.
    double last_sample_ms() const;
    double run_start_ms() const;

  private:
    // Samples in time order: t[i] is when value v[i] was recorded.
    struct Series {
        std::vector<double> t;
        std::vector<double> v;
        void add(double at, double value);
    };
    struct Step {
        double end_ms;
        double duration_ms;
        uint32_t prefill;
        uint32_t decode;
        bool after_idle;
        uint32_t batch;
        int32_t queued;
        uint32_t kv_used;
        uint32_t kv_total;
        uint32_t preemptions;
    };

    struct RawSpan;  // samples of one span, copied under the lock
    RawSpan copy_span_locked(double begin_ms, double end_ms, bool include_begin) const;

    mutable std::mutex mu_;
    double run_start_ms_;
    double last_ms_;
    Series queue_wait_, ttft_, itl_, tpot_, e2e_, prompt_, generated_;
    Series finished_;  // v = 1 completed, 0 otherwise
    Series prefix_prompt_, prefix_cached_, preempted_;
    std::vector<Step> steps_;
    uint64_t preempted_before_step_ = 0;  // preempted_ samples when the last step was recorded
    int32_t queued_ = 0, running_ = 0;
    uint32_t kv_used_ = 0, kv_total_ = 0, kv_cached_ = 0;
    std::vector<std::pair<std::string, uint64_t>> reasons_;
    LifetimeTotals lifetime_;  // never reset
};

}  // namespace wb::metrics
