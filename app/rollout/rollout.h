#pragma once
// A canary rollout of a new model version under one public name: the share
// of traffic the canary gets steps up on a schedule (5 -> 10 -> 25 -> 50 ->
// 100 %, one interval per step); at the end of each step the canary is
// judged against the stable version on that step's traffic (judge.h).
//   every check passes        -> advance to the next step; past the last
//                                step the canary is promoted (it becomes
//                                the stable version)
//   a check is inconclusive   -> hold: the step runs one more interval and
//   (too few requests)           is judged on all of its traffic
//   a check fails             -> one more failure; the step starts again on
//                                fresh traffic; at Policy::max_failures the
//                                rollout rolls back: share 0, for good
// A step at 100 % sends the stable version nothing: the canary is judged
// there against the stable version's traffic of the step before.
// (Flagger's analysis loop: "threshold" failed checks roll back.) Every
// decision keeps the figures that made it (Decision::to_json) for the run
// log and the timeline.
//
// The caller owns the clock: tick(now_s) with seconds since the rollout
// began, so tests step time by hand and the server drives it from a timer.
// Qt-free, thread-safe.

#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rollout/judge.h"
#include "rollout/router.h"

namespace wb::rollout {

/// How a rollout proceeds.
struct Policy {
    /// The canary's share at each step, 0..1, increasing, the last 1.0.
    std::vector<double> steps = {0.05, 0.10, 0.25, 0.50, 1.00};
    double step_seconds = 60;    ///< one step's interval, s (> 0)
    uint32_t max_failures = 2;   ///< failed steps that roll back (>= 1)
    double shadow_share = 0.10;  ///< share of canary requests also run on the stable version, 0..1
    Limits limits;               ///< the bounds each step is judged by
    uint64_t salt = 0;           ///< Router salt: which sticky keys go first
};

/// Steps from a list of percentages, "5,10,25,50,100" -> {0.05, ..., 1.0}.
/// Throws std::invalid_argument naming the entry (1-based) that is not a
/// number, outside (0, 100], not above the one before, or when the last is
/// not 100.
std::vector<double> parse_steps(std::string_view percents);

/// "" when `p` can run, else what is wrong with it (steps, step_seconds,
/// max_failures, shadow_share out of range).
std::string validate(const Policy& p);

/// Where a rollout stands.
enum class Phase {
    Rolling,     ///< stepping up
    Promoted,    ///< every step passed: the canary takes all traffic
    RolledBack,  ///< max_failures failed steps: the canary takes none
};

/// "rolling" | "promoted" | "rolled_back".
const char* to_string(Phase p);

/// What one evaluation decided.
enum class Verdict {
    Advance,   ///< all checks passed; next step
    Promote,   ///< all checks passed on the last step
    Hold,      ///< inconclusive; the step goes on
    Fail,      ///< a check failed; the step starts again
    Rollback,  ///< a check failed for the max_failures-th time
};

/// "advance" | "promote" | "hold" | "fail" | "rollback".
const char* to_string(Verdict v);

/// One decision and the figures that made it.
struct Decision {
    double time_s = 0;        ///< seconds since the rollout began
    size_t step = 0;          ///< 0-based index into Policy::steps of the judged step
    double share_before = 0;  ///< the canary's share during the judged step
    double share_after = 0;   ///< its share from now on
    Verdict verdict = Verdict::Hold;
    uint32_t failures = 0;      ///< failed steps so far, this one included
    size_t n_stable = 0;        ///< stable requests the step was judged on
    size_t n_canary = 0;        ///< canary requests
    size_t n_shadow = 0;        ///< shadow pairs
    std::vector<Check> checks;  ///< every check, with its figures
    bool manual = false;        ///< a person promoted or rolled back (decide_by_hand)
    /// {"time_s", "step", "share_before", "share_after", "verdict",
    ///  "failures", "n_stable", "n_canary", "n_shadow", "manual", "checks": [{"name",
    ///  "stable", "canary", "value", "limit", "result", "detail"}]}; NaN
    /// figures are null.
    nlohmann::json to_json() const;
};

/// One rollout: routes requests, collects outcomes, decides at each step's end.
class Rollout {
  public:
    /// Starts at step 0 (share steps[0]) at time 0. Throws
    /// std::invalid_argument with validate()'s message for a bad policy.
    explicit Rollout(Policy policy);

    /// The version that serves a request with sticky key `key` ("" = none).
    /// Promoted: always Canary; rolled back: always Stable.
    Arm route(std::string_view key);

    /// For a request routed to the canary: whether to run it on the stable
    /// version too (a shadow pair), by a low-discrepancy sequence at
    /// Policy::shadow_share (false once the rollout ended).
    bool take_shadow();

    /// A finished request of `arm` in the current step (ignored once the
    /// rollout ended).
    void record(Arm arm, Outcome outcome);
    /// A finished shadow pair in the current step (ignored once ended).
    void record_drift(Drift drift);

    /// Evaluates the current step when its interval has run out at `now_s`
    /// (seconds since the rollout began, non-decreasing); returns the
    /// decision, or nothing before then or once the rollout ended.
    std::optional<Decision> tick(double now_s);

    /// A person's decision at `now_s`: Verdict::Promote (share 1) or
    /// Verdict::Rollback (share 0), ending the rollout; the step's traffic
    /// so far is judged and its checks kept as figures, without deciding.
    /// Returns nothing once the rollout ended. Throws std::invalid_argument
    /// for another verdict.
    std::optional<Decision> decide_by_hand(Verdict verdict, double now_s);

    Phase phase() const;
    double share() const;
    size_t step() const;  ///< 0-based index into Policy::steps
    const Policy& policy() const { return policy_; }
    /// Every decision so far, oldest first.
    std::vector<Decision> decisions() const;

  private:
    Decision decide(double now_s);  // mu_ held

    const Policy policy_;
    Router router_;
    mutable std::mutex mu_;
    Phase phase_ = Phase::Rolling;
    size_t step_ = 0;
    double step_ends_s_;
    uint32_t failures_ = 0;
    uint64_t canary_seen_ = 0;  // canary requests asked about shadowing
    StepSamples samples_;
    std::vector<Decision> decisions_;
};

}  // namespace wb::rollout
