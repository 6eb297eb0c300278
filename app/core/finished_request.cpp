#include "core/finished_request.h"

namespace wb::core {

namespace {

std::optional<double> diff(double later, double earlier) {
    if (std::isnan(later) || std::isnan(earlier)) return std::nullopt;
    return later - earlier;
}

}  // namespace

std::optional<double> FinishedRequest::queue_wait_ms() const {
    return diff(times.admitted_ms, times.submitted_ms);
}

std::optional<double> FinishedRequest::prefill_ms() const {
    return diff(times.first_token_ms, times.admitted_ms);
}

std::optional<double> FinishedRequest::ttft_ms() const {
    return diff(times.first_token_ms, times.submitted_ms);
}

std::optional<double> FinishedRequest::decode_ms() const {
    if (output_tokens.size() < 2) return std::nullopt;
    return diff(times.last_token_ms, times.first_token_ms);
}

std::optional<double> FinishedRequest::tpot_ms() const {
    if (output_tokens.size() < 2) return std::nullopt;
    const std::optional<double> e = e2e_ms(), t = ttft_ms();
    if (!e || !t) return std::nullopt;
    return (*e - *t) / static_cast<double>(output_tokens.size() - 1);
}

std::optional<double> FinishedRequest::e2e_ms() const {
    return diff(times.finished_ms, times.submitted_ms);
}

std::optional<double> FinishedRequest::prefill_tps() const {
    const std::optional<double> p = prefill_ms();
    if (!p || *p <= 0) return std::nullopt;
    return 1000.0 * static_cast<double>(prompt_tokens.size()) / *p;
}

std::optional<double> FinishedRequest::decode_tps() const {
    const std::optional<double> d = decode_ms();
    if (!d || *d <= 0) return std::nullopt;
    return 1000.0 * static_cast<double>(output_tokens.size() - 1) / *d;
}

std::optional<int64_t> FinishedRequest::finished_utc_ms() const {
    const std::optional<double> e = e2e_ms();
    if (!e) return std::nullopt;
    return submitted_utc_ms + static_cast<int64_t>(std::llround(*e));
}

}  // namespace wb::core
