#include "desktop/remote_run_stats.h"

#include <algorithm>

namespace wb::gui {

RemoteRunStats::RemoteRunStats() : store_(std::make_unique<metrics::MetricsStore>(0.0)) {}

RemoteRunStats::~RemoteRunStats() = default;

void RemoteRunStats::record(const RequestResult& r, double finish_ms) {
    const double sent = std::max(0.0, finish_ms - r.e2e_ms);
    metrics::RequestMetrics m;
    m.queue_wait_ms = 0;  // the client sends at once; the endpoint's queue is inside TTFT
    if (r.ttft_ms >= 0) {
        m.ttft_ms = r.ttft_ms;
        store_->record_first_token(sent + r.ttft_ms, r.ttft_ms);
        double at = sent + r.ttft_ms;
        for (double itl : r.itl_ms) {
            at += itl;
            store_->record_inter_token(at, itl);
        }
    }
    m.itl_ms = r.itl_ms;
    if (r.tpot_ms >= 0) m.tpot_ms = r.tpot_ms;
    m.e2e_ms = r.e2e_ms;
    m.prompt_tokens = r.prompt_tokens;
    m.generated_tokens = r.generated_tokens;
    store_->record_finished(finish_ms, m, r.finish_reason.toStdString());
    // Tokens for the run's throughput; the endpoint's busy time is unknown (0).
    store_->record_step(finish_ms, 0.0, static_cast<uint32_t>(std::max(0, r.prompt_tokens)),
                        static_cast<uint32_t>(std::max(0, r.generated_tokens)));
}

metrics::WindowStats RemoteRunStats::summary() const {
    // Every reply of the run has finished, so its samples are in.
    const double now = std::max(1e-3, store_->last_sample_ms());
    return store_->snapshot(now, now + 1.0).window;
}

}  // namespace wb::gui
