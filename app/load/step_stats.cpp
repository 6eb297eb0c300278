#include "load/step_stats.h"

#include <algorithm>
#include <limits>

namespace wb::load {

bool meets_slo(const RequestResult& r, const Slo& slo) {
    if (!r.ok) return false;
    if (slo.ttft_p99_ms && !(r.ttft_ms && *r.ttft_ms <= *slo.ttft_p99_ms)) return false;
    if (slo.e2e_p99_ms && !(r.e2e_ms && *r.e2e_ms <= *slo.e2e_p99_ms)) return false;
    if (slo.itl_p99_ms && !r.itl_ms.empty()) {
        std::vector<double> s = r.itl_ms;
        std::sort(s.begin(), s.end());
        if (!(metrics::percentile_sorted(s, 99) <= *slo.itl_p99_ms)) return false;
    }
    return true;
}

StepStats step_stats(const std::vector<RequestResult>& results, const Slo& slo) {
    StepStats s;
    s.requests = results.size();
    if (results.empty()) return s;
    double first_send = std::numeric_limits<double>::infinity();
    double last_send = -first_send;
    double last_end = -first_send;
    std::vector<double> ttft, itl, tpot, e2e, queue;
    double out_tokens = 0, in_tokens = 0;
    size_t good = 0;
    for (const RequestResult& r : results) {
        first_send = std::min(first_send, r.send_ms);
        last_send = std::max(last_send, r.send_ms);
        // e2e includes the wait for a slot before send_ms.
        last_end = std::max(last_end, r.send_ms - r.client_wait_ms + r.e2e_ms.value_or(0));
        if (!r.ok) {
            ++s.errors;
            if (r.timed_out) ++s.timeouts;
            continue;
        }
        ++s.completed;
        if (r.ttft_ms) ttft.push_back(*r.ttft_ms);
        if (r.tpot_ms) tpot.push_back(*r.tpot_ms);
        if (r.e2e_ms) e2e.push_back(*r.e2e_ms);
        if (r.server_queue_ms) queue.push_back(*r.server_queue_ms);
        itl.insert(itl.end(), r.itl_ms.begin(), r.itl_ms.end());
        out_tokens += static_cast<double>(r.output_tokens);
        in_tokens += static_cast<double>(r.prompt_tokens.value_or(0));
        if (r.output_tokens_source == "chunks") s.output_tokens_approximate = true;
        if (meets_slo(r, slo)) ++good;
    }
    s.duration_s = (last_end - first_send) / 1000.0;
    if (results.size() > 1 && last_send > first_send) {
        s.achieved_rate =
            static_cast<double>(results.size() - 1) / ((last_send - first_send) / 1000.0);
    }
    if (s.duration_s > 0) {
        s.request_throughput = static_cast<double>(s.completed) / s.duration_s;
        s.output_throughput = out_tokens / s.duration_s;
        s.input_throughput = in_tokens / s.duration_s;
        s.goodput = static_cast<double>(good) / s.duration_s;
    }
    s.ttft = metrics::summarize(std::move(ttft));
    s.itl = metrics::summarize(std::move(itl));
    s.tpot = metrics::summarize(std::move(tpot));
    s.e2e = metrics::summarize(std::move(e2e));
    s.queue_wait = metrics::summarize(std::move(queue));
    // A step with no successful request meets no SLO; NaN compares false.
    const auto within = [](const metrics::Summary& m, const std::optional<double>& lim) {
        return !lim || (m.count > 0 && m.p99 <= *lim);
    };
    s.meets_slo = s.completed > 0 && within(s.ttft, slo.ttft_p99_ms) &&
                  (!slo.itl_p99_ms || s.itl.count == 0 || s.itl.p99 <= *slo.itl_p99_ms) &&
                  within(s.e2e, slo.e2e_p99_ms);
    return s;
}

}  // namespace wb::load
