#include "metrics/metrics_store.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace wb::metrics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_completed(std::string_view reason) {
    // A request that ran into the context size delivered its output too.
    return reason == "stop" || reason == "length" || reason == "context";
}

}  // namespace

void MetricsStore::Series::add(double at, double value) {
    if (!t.empty() && at < t.back()) at = t.back();
    t.push_back(at);
    v.push_back(value);
}

struct MetricsStore::RawSpan {
    double begin_ms = 0.0, end_ms = 0.0;
    std::vector<double> queue_wait, ttft, itl, tpot, e2e, prompt, generated;
    uint64_t finished = 0, completed = 0, steps = 0, prefill = 0, decode = 0;
    uint64_t prefix_prompt = 0, prefix_cached = 0, preemptions = 0;
    double busy_ms = 0.0;
    /// Sum of the intervals between consecutive forward passes while the
    /// engine had work (ms) and the output tokens sampled at their ends.
    double active_ms = 0.0;
    uint64_t active_decode = 0;
};

MetricsStore::MetricsStore(double run_start_ms) {
    reset(run_start_ms);
}

void MetricsStore::reset(double run_start_ms) {
    std::lock_guard lock(mu_);
    run_start_ms_ = run_start_ms;
    last_ms_ = run_start_ms;
    for (Series* s : {&queue_wait_, &ttft_, &itl_, &tpot_, &e2e_, &prompt_, &generated_, &finished_,
                      &prefix_prompt_, &prefix_cached_, &preempted_}) {
        s->t.clear();
        s->v.clear();
    }
    steps_.clear();
    preempted_before_step_ = 0;
    queued_ = running_ = 0;
    kv_used_ = kv_total_ = kv_cached_ = 0;
    reasons_.clear();
}

void MetricsStore::record_admitted(double at_ms, double queue_wait_ms) {
    std::lock_guard lock(mu_);
    queue_wait_.add(at_ms, queue_wait_ms);
    last_ms_ = std::max(last_ms_, at_ms);
}

void MetricsStore::record_first_token(double at_ms, double ttft_ms) {
    std::lock_guard lock(mu_);
    ttft_.add(at_ms, ttft_ms);
    last_ms_ = std::max(last_ms_, at_ms);
}

void MetricsStore::record_inter_token(double at_ms, double itl_ms) {
    std::lock_guard lock(mu_);
    itl_.add(at_ms, itl_ms);
    last_ms_ = std::max(last_ms_, at_ms);
}

void MetricsStore::record_finished(double at_ms, const RequestMetrics& m,
                                   std::string_view finish_reason) {
    std::lock_guard lock(mu_);
    const bool completed = is_completed(finish_reason);
    finished_.add(at_ms, completed ? 1.0 : 0.0);
    if (completed) {
        tpot_.add(at_ms, m.tpot_ms);
        e2e_.add(at_ms, m.e2e_ms);
        prompt_.add(at_ms, static_cast<double>(m.prompt_tokens));
        generated_.add(at_ms, static_cast<double>(m.generated_tokens));
    }
    auto it = std::find_if(reasons_.begin(), reasons_.end(),
                           [&](const auto& r) { return r.first == finish_reason; });
    if (it == reasons_.end()) {
        reasons_.emplace_back(std::string(finish_reason), 1);
    } else {
        ++it->second;
    }
    last_ms_ = std::max(last_ms_, at_ms);
}

void MetricsStore::record_step(double end_ms, double duration_ms, uint32_t prefill_tokens,
                               uint32_t decode_tokens, bool after_idle, uint32_t batch,
                               uint32_t kv_blocks_used, uint32_t kv_blocks_total) {
    std::lock_guard lock(mu_);
    if (!steps_.empty() && end_ms < steps_.back().end_ms) end_ms = steps_.back().end_ms;
    const uint64_t preempted = preempted_.t.size();
    steps_.push_back({end_ms, duration_ms, prefill_tokens, decode_tokens, after_idle, batch,
                      queued_, kv_blocks_used, kv_blocks_total,
                      static_cast<uint32_t>(preempted - preempted_before_step_)});
    preempted_before_step_ = preempted;
    ++lifetime_.steps;
    lifetime_.busy_ms += duration_ms;
    last_ms_ = std::max(last_ms_, end_ms);
}

void MetricsStore::record_prefix_cache(double at_ms, uint32_t prompt_tokens, uint32_t cached) {
    std::lock_guard lock(mu_);
    prefix_prompt_.add(at_ms, prompt_tokens);
    prefix_cached_.add(at_ms, cached);
    lifetime_.prefix_prompt_tokens += prompt_tokens;
    lifetime_.prefix_cached_tokens += cached;
    last_ms_ = std::max(last_ms_, at_ms);
}

void MetricsStore::record_preempted(double at_ms) {
    std::lock_guard lock(mu_);
    preempted_.add(at_ms, 1.0);
    last_ms_ = std::max(last_ms_, at_ms);
}

void MetricsStore::set_gauges(int32_t queued, int32_t running, uint32_t kv_cells_used,
                              uint32_t kv_cells_total, uint32_t kv_cells_cached) {
    std::lock_guard lock(mu_);
    kv_cached_ = kv_cells_cached;
    queued_ = queued;
    running_ = running;
    kv_used_ = kv_cells_used;
    kv_total_ = kv_cells_total;
    lifetime_.queued = queued;
    lifetime_.running = running;
    lifetime_.kv_cells_used = kv_cells_used;
    lifetime_.kv_cells_total = kv_cells_total;
    lifetime_.kv_cells_cached = kv_cells_cached;
}

std::vector<PassTelemetry> MetricsStore::passes_after(uint64_t first_index,
                                                      size_t max_passes) const {
    std::lock_guard lock(mu_);
    // steps_ holds the current run's passes: the last lifetime_.steps ones.
    const uint64_t first_kept = lifetime_.steps - steps_.size();
    const uint64_t from = std::max(first_index, first_kept);
    std::vector<PassTelemetry> out;
    for (uint64_t i = from; i < lifetime_.steps && out.size() < max_passes; ++i) {
        const Step& st = steps_[static_cast<size_t>(i - first_kept)];
        out.push_back({i, st.end_ms, st.duration_ms, st.batch, st.prefill, st.decode, st.queued,
                       st.kv_used, st.kv_total, st.preemptions});
    }
    return out;
}

LifetimeTotals MetricsStore::lifetime() const {
    std::lock_guard lock(mu_);
    return lifetime_;
}

double MetricsStore::last_sample_ms() const {
    std::lock_guard lock(mu_);
    return last_ms_;
}

double MetricsStore::run_start_ms() const {
    std::lock_guard lock(mu_);
    return run_start_ms_;
}

EventSamples MetricsStore::events(double after_ms, double upto_ms) const {
    EventSamples out;
    std::lock_guard lock(mu_);
    auto range = [&](const std::vector<double>& t) {
        auto lo = std::upper_bound(t.begin(), t.end(), after_ms);
        auto hi = std::upper_bound(lo, t.end(), upto_ms);
        return std::pair<size_t, size_t>(static_cast<size_t>(lo - t.begin()),
                                         static_cast<size_t>(hi - t.begin()));
    };
    auto latencies = [&](const Series& s, std::vector<EventSamples::Latency>& to) {
        const auto [a, b] = range(s.t);
        for (size_t i = a; i < b; ++i) to.push_back({s.t[i], s.v[i]});
    };
    latencies(ttft_, out.ttft);
    latencies(e2e_, out.e2e);
    // Prompt and cached counts are recorded together: the same times.
    const auto [a, b] = range(prefix_prompt_.t);
    for (size_t i = a; i < b && i < prefix_cached_.v.size(); ++i)
        out.prefix.push_back({prefix_prompt_.t[i], static_cast<uint32_t>(prefix_prompt_.v[i]),
                              static_cast<uint32_t>(prefix_cached_.v[i])});
    return out;
}

EventSamples MetricsStore::events_since(EventCursor& cursor) const {
    EventSamples out;
    std::lock_guard lock(mu_);
    auto latencies = [](const Series& s, size_t& from, std::vector<EventSamples::Latency>& to) {
        for (size_t i = std::min(from, s.t.size()); i < s.t.size(); ++i)
            to.push_back({s.t[i], s.v[i]});
        from = s.t.size();
    };
    latencies(ttft_, cursor.ttft, out.ttft);
    latencies(e2e_, cursor.e2e, out.e2e);
    const size_t n = std::min(prefix_prompt_.t.size(), prefix_cached_.v.size());
    for (size_t i = std::min(cursor.prefix, n); i < n; ++i)
        out.prefix.push_back({prefix_prompt_.t[i], static_cast<uint32_t>(prefix_prompt_.v[i]),
                              static_cast<uint32_t>(prefix_cached_.v[i])});
    cursor.prefix = n;
    return out;
}

MetricsStore::RawSpan MetricsStore::copy_span_locked(double begin_ms, double end_ms,
                                                     bool include_begin) const {
    RawSpan r;
    r.begin_ms = begin_ms;
    r.end_ms = end_ms;
    // [first, last) index range of a sorted time vector inside the span.
    auto range = [&](const std::vector<double>& t) {
        auto lo = include_begin ? std::lower_bound(t.begin(), t.end(), begin_ms)
                                : std::upper_bound(t.begin(), t.end(), begin_ms);
        auto hi = std::upper_bound(lo, t.end(), end_ms);
        return std::pair<size_t, size_t>(static_cast<size_t>(lo - t.begin()),
                                         static_cast<size_t>(hi - t.begin()));
    };
    auto copy = [&](const Series& s, std::vector<double>& out) {
        auto [a, b] = range(s.t);
        out.assign(s.v.begin() + static_cast<std::ptrdiff_t>(a),
                   s.v.begin() + static_cast<std::ptrdiff_t>(b));
    };
    copy(queue_wait_, r.queue_wait);
    copy(ttft_, r.ttft);
    copy(itl_, r.itl);
    copy(tpot_, r.tpot);
    copy(e2e_, r.e2e);
    copy(prompt_, r.prompt);
    copy(generated_, r.generated);
    {
        auto [a, b] = range(finished_.t);
        r.finished = b - a;
        for (size_t i = a; i < b; ++i) r.completed += finished_.v[i] > 0.5 ? 1 : 0;
    }
    auto sum = [&](const Series& s) {
        auto [a, b] = range(s.t);
        double total = 0.0;
        for (size_t i = a; i < b; ++i) total += s.v[i];
        return static_cast<uint64_t>(total);
    };
    r.prefix_prompt = sum(prefix_prompt_);
    r.prefix_cached = sum(prefix_cached_);
    r.preemptions = sum(preempted_);
    auto lo = include_begin ? std::ranges::lower_bound(steps_, begin_ms, {}, &Step::end_ms)
                            : std::ranges::upper_bound(steps_, begin_ms, {}, &Step::end_ms);
    auto hi = std::ranges::upper_bound(lo, steps_.end(), end_ms, {}, &Step::end_ms);
    for (auto it = lo; it != hi; ++it) {
        const Step& s = *it;
        ++r.steps;
        r.prefill += s.prefill;
        r.decode += s.decode;
        r.busy_ms += s.duration_ms;
        // A pass that followed an idle engine (or the first of the run)
        // starts a busy stretch: its tokens have no interval before them
        // that measures generation, so the rate starts at its end. Every
        // other pass counts the time since the previous pass ended (host
        // work between passes included), even when that pass ended just
        // before the span: the tokens it sampled took that long.
        if (s.after_idle || it == steps_.begin()) continue;
        r.active_ms += s.end_ms - std::prev(it)->end_ms;
        r.active_decode += s.decode;
    }
    return r;
}

namespace {

WindowStats finish_span(const auto& raw) {
    WindowStats w;
    w.begin_ms = raw.begin_ms;
    w.end_ms = raw.end_ms;
    w.queue_wait_ms = summarize(raw.queue_wait);
    w.ttft_ms = summarize(raw.ttft);
    w.itl_ms = summarize(raw.itl);
    w.tpot_ms = summarize(raw.tpot);
    w.e2e_ms = summarize(raw.e2e);
    w.prompt_tokens = summarize(raw.prompt);
    w.generated_tokens = summarize(raw.generated);
    w.requests_finished = raw.finished;
    w.requests_completed = raw.completed;
    w.steps = raw.steps;
    w.prefill_tokens = raw.prefill;
    w.decode_tokens = raw.decode;
    w.prefix_prompt_tokens = raw.prefix_prompt;
    w.prefix_cached_tokens = raw.prefix_cached;
    w.prefix_hit_rate = raw.prefix_prompt > 0 ? static_cast<double>(raw.prefix_cached) /
                                                    static_cast<double>(raw.prefix_prompt)
                                              : kNaN;
    w.preemptions = raw.preemptions;
    const double span_s = (raw.end_ms - raw.begin_ms) / 1000.0;
    if (span_s > 0.0) {
        w.input_tokens_per_s = static_cast<double>(raw.prefill) / span_s;
        w.output_tokens_per_s = static_cast<double>(raw.decode) / span_s;
        w.requests_per_s = static_cast<double>(raw.completed) / span_s;
        w.busy_fraction = std::min(1.0, raw.busy_ms / (raw.end_ms - raw.begin_ms));
    } else {
        w.input_tokens_per_s = w.output_tokens_per_s = w.requests_per_s = w.busy_fraction = kNaN;
    }
    w.active_ms = raw.active_ms;
    w.decode_tokens_per_active_s =
        w.active_ms > 0.0 ? static_cast<double>(raw.active_decode) / (w.active_ms / 1000.0) : kNaN;
    return w;
}

}  // namespace

MetricsSnapshot MetricsStore::snapshot(double now_ms, double window_ms) const {
    if (!(window_ms > 0.0)) {
        throw std::invalid_argument("metrics snapshot: window_ms must be > 0, got " +
                                    std::to_string(window_ms));
    }
    MetricsSnapshot s;
    s.now_ms = now_ms;
    s.window_ms = window_ms;
    RawSpan win, run;
    {
        std::lock_guard lock(mu_);
        // A window reaching back before the run start covers the run only, so
        // its tokens/s divides by the time the run has actually lasted.
        const double wbegin = std::max(now_ms - window_ms, run_start_ms_);
        win = copy_span_locked(wbegin, now_ms, wbegin == run_start_ms_);
        run = copy_span_locked(run_start_ms_, now_ms, true);
        s.queued = queued_;
        s.running = running_;
        s.kv_cells_used = kv_used_;
        s.kv_cells_total = kv_total_;
        s.kv_cells_cached = kv_cached_;
        s.finish_reasons = reasons_;
    }
    s.window = finish_span(win);
    s.run = finish_span(run);
    return s;
}

}  // namespace wb::metrics
