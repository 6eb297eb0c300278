#include "rollout/judge.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "metrics/percentile.h"

namespace wb::rollout {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

double p99(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return metrics::percentile_sorted(v, 99.0);
}

// Latency ratio check over the successful requests of each arm; `gaps`
// pools every inter-token gap instead of taking the TTFT.
Check latency_ratio(const StepSamples& s, const Limits& limits, const char* name, bool gaps,
                    double limit) {
    Check c;
    c.name = name;
    c.limit = limit;
    auto collect = [&](const std::vector<Outcome>& arm, size_t& n_ok) {
        std::vector<double> v;
        n_ok = 0;
        for (const Outcome& o : arm) {
            if (o.failed()) continue;
            if (gaps) {
                if (o.itl_ms.empty()) continue;
                v.insert(v.end(), o.itl_ms.begin(), o.itl_ms.end());
            } else {
                v.push_back(o.ttft_ms);
            }
            ++n_ok;
        }
        return v;
    };
    size_t n_stable = 0, n_canary = 0;
    std::vector<double> st = collect(s.stable, n_stable);
    std::vector<double> ca = collect(s.canary, n_canary);
    if (n_stable < limits.min_requests || n_canary < limits.min_requests) {
        c.stable = st.empty() ? kNaN : p99(st);
        c.canary = ca.empty() ? kNaN : p99(ca);
        c.value = kNaN;
        c.detail = std::string(name) + ": too few requests (stable " + std::to_string(n_stable) +
                   ", canary " + std::to_string(n_canary) + ", need " +
                   std::to_string(limits.min_requests) + " each)";
        return c;
    }
    c.stable = p99(std::move(st));
    c.canary = p99(std::move(ca));
    if (!(c.stable > 0)) {
        c.value = kNaN;
        c.detail = std::string(name) + ": the stable p99 is 0 ms, no ratio";
        return c;
    }
    c.value = c.canary / c.stable;
    c.result = c.value <= limit ? CheckResult::Pass : CheckResult::Fail;
    c.detail = std::string(name) + " " + fmt(c.value) + " (canary p99 " + fmt(c.canary) +
               " ms / stable " + fmt(c.stable) + " ms), limit " + fmt(limit);
    return c;
}

Check error_rate(const StepSamples& s, const Limits& limits) {
    Check c;
    c.name = "error_rate";
    c.limit = limits.max_error_rate_increase;
    auto rate = [](const std::vector<Outcome>& arm) {
        const auto bad =
            std::count_if(arm.begin(), arm.end(), [](const Outcome& o) { return o.failed(); });
        return arm.empty() ? kNaN : static_cast<double>(bad) / static_cast<double>(arm.size());
    };
    c.stable = rate(s.stable);
    c.canary = rate(s.canary);
    if (s.stable.size() < limits.min_requests || s.canary.size() < limits.min_requests) {
        c.value = kNaN;
        c.detail = "error_rate: too few requests (stable " + std::to_string(s.stable.size()) +
                   ", canary " + std::to_string(s.canary.size()) + ", need " +
                   std::to_string(limits.min_requests) + " each)";
        return c;
    }
    c.value = c.canary - c.stable;
    c.result = c.value <= c.limit ? CheckResult::Pass : CheckResult::Fail;
    c.detail = "error_rate: canary " + fmt(100 * c.canary) + "% vs stable " + fmt(100 * c.stable) +
               "%, +" + fmt(100 * c.value) + " points, limit +" + fmt(100 * c.limit);
    return c;
}

Check drift_check(const StepSamples& s, const Limits& limits, bool agreement) {
    Check c;
    c.name = agreement ? "token_agreement" : "mean_kld";
    c.limit = agreement ? limits.min_token_agreement : limits.max_mean_kld;
    c.stable = kNaN;
    if (s.drift.size() < limits.min_shadow) {
        c.canary = kNaN;
        c.value = kNaN;
        c.detail = c.name + ": too few shadow pairs (" + std::to_string(s.drift.size()) +
                   ", need " + std::to_string(limits.min_shadow) + ")";
        return c;
    }
    double sum = 0;
    for (const Drift& d : s.drift) sum += agreement ? d.token_agreement : d.mean_kld;
    c.canary = c.value = sum / static_cast<double>(s.drift.size());
    const bool ok = agreement ? c.value >= c.limit : c.value <= c.limit;
    c.result = ok ? CheckResult::Pass : CheckResult::Fail;
    c.detail = c.name + " " + fmt(c.value) + " over " + std::to_string(s.drift.size()) +
               " shadow pairs, " + (agreement ? "at least " : "at most ") + fmt(c.limit);
    return c;
}

}  // namespace

const char* to_string(CheckResult r) {
    switch (r) {
        case CheckResult::Pass:
            return "pass";
        case CheckResult::Fail:
            return "fail";
        case CheckResult::Inconclusive:
            break;
    }
    return "inconclusive";
}

std::vector<Check> judge(const StepSamples& s, const Limits& limits) {
    std::vector<Check> out;
    out.push_back(latency_ratio(s, limits, "ttft_p99_ratio", false, limits.max_ttft_p99_ratio));
    out.push_back(latency_ratio(s, limits, "itl_p99_ratio", true, limits.max_itl_p99_ratio));
    out.push_back(error_rate(s, limits));
    if (limits.min_shadow > 0) {
        out.push_back(drift_check(s, limits, true));
        out.push_back(drift_check(s, limits, false));
    }
    return out;
}

CheckResult overall(const std::vector<Check>& checks) {
    bool inconclusive = false;
    for (const Check& c : checks) {
        if (c.result == CheckResult::Fail) return CheckResult::Fail;
        if (c.result == CheckResult::Inconclusive) inconclusive = true;
    }
    return inconclusive ? CheckResult::Inconclusive : CheckResult::Pass;
}

}  // namespace wb::rollout
