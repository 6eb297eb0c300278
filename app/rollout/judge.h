#pragma once
// Judging one step of a canary rollout: the canary against the stable
// version on that step's traffic, as Flagger and Argo Rollouts judge a web
// service (request success rate, p99 duration), with the latencies that
// matter for an LLM (TTFT p99, inter-token latency p99) and how far the
// canary's answers drift from the stable version's on a shadow sample (the
// same request also run on the stable version: token agreement and mean KL
// divergence, as Compare computes them, app/compare/logits_math.h).
//
// Every check gives the figures that decided it, so a decision can be shown
// and logged with its reasons. Percentiles are numpy's "linear" method
// (metrics/percentile.h), the one every other latency figure here uses.
//
// Qt-free.

#include <cstdint>
#include <string>
#include <vector>

namespace wb::rollout {

/// One finished request of one arm, as the server saw it.
struct Outcome {
    double ttft_ms = 0;          ///< time to first token, ms (ignored when failed())
    std::vector<double> itl_ms;  ///< [output tokens - 1] inter-token gaps, ms
    bool error = false;          ///< an engine error or a 5xx
    bool timeout = false;        ///< the request's timeout ran out
    bool failed() const { return error || timeout; }
};

/// One shadow pair: a canary answer and the stable version's answer to the
/// same request.
struct Drift {
    double token_agreement =
        1.0;  ///< share of the canary's answer tokens the stable version also picks, 0..1
    double mean_kld = 0.0;  ///< mean KL(stable || canary) per answer token, nats
};

/// The bounds a step must stay within. Ratios are canary / stable.
struct Limits {
    /// Fewest requests per arm (and successful ones for the latency checks)
    /// before a step is judged; fewer make the check inconclusive (hold).
    uint32_t min_requests = 20;
    double max_ttft_p99_ratio = 1.25;  ///< canary TTFT p99 / stable TTFT p99
    double max_itl_p99_ratio = 1.25;   ///< canary ITL p99 / stable ITL p99
    /// Canary error-or-timeout rate minus the stable version's, absolute
    /// (0.02 = two points more).
    double max_error_rate_increase = 0.02;
    /// Fewest shadow pairs before answer drift is judged; 0 turns the drift
    /// checks off (no shadow traffic).
    uint32_t min_shadow = 5;
    double min_token_agreement = 0.90;  ///< mean over the step's shadow pairs
    double max_mean_kld = 0.05;         ///< mean over the step's shadow pairs, nats/token
};

/// What one check found.
enum class CheckResult { Pass, Fail, Inconclusive };

/// "pass" | "fail" | "inconclusive".
const char* to_string(CheckResult r);

/// One check and the figures behind it.
struct Check {
    std::string
        name;  ///< "ttft_p99_ratio", "itl_p99_ratio", "error_rate", "token_agreement", "mean_kld"
    double stable = 0;  ///< the stable version's figure (NaN where it has none: drift checks)
    double canary = 0;  ///< the canary's figure
    double value = 0;   ///< what is compared with `limit` (a ratio, a difference, a mean)
    double limit = 0;
    CheckResult result = CheckResult::Inconclusive;
    std::string detail;  ///< one line for people: the figures and the bound, or why inconclusive
};

/// One step's traffic.
struct StepSamples {
    std::vector<Outcome> stable;
    std::vector<Outcome> canary;
    std::vector<Drift> drift;  ///< shadow pairs (canary requests also run on stable)
};

/// Runs every check on `s` against `limits`: TTFT p99 ratio and ITL p99
/// ratio over successful requests, error rate difference over all, and,
/// when limits.min_shadow > 0, mean token agreement and mean KLD over the
/// shadow pairs. A latency ratio whose stable p99 is 0 is inconclusive.
/// Never throws.
std::vector<Check> judge(const StepSamples& s, const Limits& limits);

/// Fail when any check failed, else Inconclusive when any was, else Pass.
CheckResult overall(const std::vector<Check>& checks);

}  // namespace wb::rollout
