#include "speculative/draft_length.h"

#include <algorithm>
#include <cmath>

namespace wb::speculative {

void PassCostModel::record(uint32_t n_tokens, double ms) {
    if (n_tokens == 0 || !(ms > 0) || !std::isfinite(ms)) return;
    double& avg = ms_[std::min(n_tokens, kMaxTokens)];
    avg = avg > 0 ? 0.75 * avg + 0.25 * ms : ms;
}

uint32_t PassCostModel::next_measured(uint32_t from, int dir) const {
    for (int64_t i = static_cast<int64_t>(from) + dir; i >= 1 && i <= kMaxTokens; i += dir) {
        if (ms_[static_cast<size_t>(i)] > 0) return static_cast<uint32_t>(i);
    }
    return 0;
}

std::optional<double> PassCostModel::cost_ms(uint32_t n_tokens) const {
    const uint32_t n = std::clamp<uint32_t>(n_tokens, 1, kMaxTokens);
    if (ms_[n] > 0) return ms_[n];
    // Between the nearest measured counts below and above: interpolated.
    const uint32_t lo = next_measured(n, -1), hi = next_measured(n, +1);
    if (lo > 0 && hi > 0) {
        const double f = static_cast<double>(n - lo) / static_cast<double>(hi - lo);
        return ms_[lo] + f * (ms_[hi] - ms_[lo]);
    }
    // Outside the measured range: the line through the two nearest measured
    // counts on that side (its slope at least 0).
    const uint32_t a = lo > 0 ? lo : hi;
    if (a == 0) return std::nullopt;
    const uint32_t b = next_measured(a, lo > 0 ? -1 : +1);
    if (b == 0) return std::nullopt;
    const double slope = std::max(0.0, (ms_[a] - ms_[b]) / (static_cast<double>(a) - b));
    return std::max(0.0, ms_[a] + slope * (static_cast<double>(n) - a));
}

double expected_tokens(double alpha, uint32_t k) {
    const double a = std::clamp(alpha, 0.0, 1.0);
    double sum = 1, term = 1;
    for (uint32_t i = 0; i < k; ++i) {
        term *= a;
        sum += term;
    }
    return sum;
}

std::optional<uint32_t> best_draft_length(double alpha, uint32_t k_max, uint32_t n_base,
                                          double draft_ms_per_token, const PassCostModel& costs) {
    const uint32_t base = std::max<uint32_t>(n_base, 1);
    uint32_t best = 0;
    double best_rate = -1;
    for (uint32_t k = 0; k <= k_max; ++k) {
        const std::optional<double> c = costs.cost_ms(base + k);
        if (!c) return std::nullopt;
        const double ms = *c + std::max(0.0, draft_ms_per_token) * k;
        if (!(ms > 0)) return std::nullopt;
        const double rate = (base - 1 + expected_tokens(alpha, k)) / ms;
        if (rate > best_rate * (1 + 1e-9)) {  // strictly better: ties keep the shorter
            best_rate = rate;
            best = k;
        }
    }
    return best;
}

DraftLength::DraftLength(uint32_t k_max, bool adaptive)
    : fallback_(k_max, adaptive), k_max_(k_max == 0 ? 1 : k_max), adaptive_(adaptive) {}

double DraftLength::alpha() const {
    return kept_ / (kept_ + rejected_);
}

uint32_t DraftLength::next(uint32_t n_base, const PassCostModel& costs) {
    if (!adaptive_) return k_max_;
    const double per_token = drafted_ > 0 ? draft_ms_ / drafted_ : 0;
    const std::optional<uint32_t> k = best_draft_length(alpha(), k_max_, n_base, per_token, costs);
    if (!k) return fallback_.k();
    if (*k > 0) {
        passes_without_draft_ = 0;
        return *k;
    }
    // A probe now and then keeps alpha current.
    if (++passes_without_draft_ >= 8) {
        passes_without_draft_ = 0;
        return 1;
    }
    return 0;
}

void DraftLength::update(uint32_t n_drafted, uint32_t n_accepted, double draft_ms) {
    if (n_drafted == 0) return;
    fallback_.update(n_drafted, n_accepted);
    const uint32_t kept = std::min(n_accepted, n_drafted);
    kept_ += kept;
    rejected_ += kept < n_drafted ? 1 : 0;
    // The first draft's time includes one-off work (a draft model's prefill
    // of the prompt): it is not what a draft token costs from then on.
    if (!first_) {
        drafted_ += n_drafted;
        draft_ms_ += std::max(0.0, draft_ms);
    }
    first_ = false;
}

}  // namespace wb::speculative
