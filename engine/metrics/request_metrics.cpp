#include "metrics/request_metrics.h"

#include <cstddef>
#include <limits>

namespace wb::metrics {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

RequestTimeline::RequestTimeline() : submitted_ms(kNaN), admitted_ms(kNaN), finished_ms(kNaN) {}

RequestMetrics::RequestMetrics()
    : queue_wait_ms(kNaN), ttft_ms(kNaN), tpot_ms(kNaN), e2e_ms(kNaN) {}

RequestMetrics compute_request_metrics(const RequestTimeline& t) {
    RequestMetrics m;
    m.prompt_tokens = t.prompt_tokens;
    m.generated_tokens = t.generated_tokens;
    m.queue_wait_ms = t.admitted_ms - t.submitted_ms;  // NaN propagates when never admitted
    m.e2e_ms = t.finished_ms - t.submitted_ms;
    if (!t.token_ms.empty()) m.ttft_ms = t.token_ms.front() - t.submitted_ms;
    for (size_t i = 1; i < t.token_ms.size(); ++i) {
        m.itl_ms.push_back(t.token_ms[i] - t.token_ms[i - 1]);
    }
    const size_t n = t.token_ms.size();
    if (n >= 2) m.tpot_ms = (m.e2e_ms - m.ttft_ms) / static_cast<double>(n - 1);
    return m;
}

}  // namespace wb::metrics
