#include "rollout/rollout.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace wb::rollout {
namespace {

nlohmann::json number_or_null(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

std::vector<double> parse_steps(std::string_view percents) {
    std::vector<double> out;
    size_t pos = 0;
    for (size_t index = 1;; ++index) {
        const size_t comma = percents.find(',', pos);
        const std::string item(
            percents.substr(pos, comma == std::string_view::npos ? percents.npos : comma - pos));
        const std::string where = "canary steps \"" + std::string(percents) + "\": entry " +
                                  std::to_string(index) + " (\"" + item + "\")";
        size_t used = 0;
        double v = std::numeric_limits<double>::quiet_NaN();
        try {
            v = std::stod(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        while (used < item.size() && item[used] == ' ') ++used;
        if (item.empty() || used != item.size() || !std::isfinite(v))
            throw std::invalid_argument(where + " is not a number");
        if (!(v > 0 && v <= 100))
            throw std::invalid_argument(where + " is outside (0, 100] percent");
        if (!out.empty() && !(v / 100.0 > out.back()))
            throw std::invalid_argument(where + " is not above the step before");
        out.push_back(v / 100.0);
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    if (out.back() != 1.0)
        throw std::invalid_argument("canary steps \"" + std::string(percents) +
                                    "\": the last step must be 100 (the canary takes all traffic)");
    return out;
}

std::string validate(const Policy& p) {
    if (p.steps.empty()) return "a rollout needs at least one step";
    for (size_t i = 0; i < p.steps.size(); ++i) {
        if (!(p.steps[i] > 0 && p.steps[i] <= 1))
            return "step " + std::to_string(i + 1) + " is outside (0, 100] percent";
        if (i > 0 && !(p.steps[i] > p.steps[i - 1]))
            return "step " + std::to_string(i + 1) + " is not above the step before";
    }
    if (p.steps.back() != 1.0) return "the last step must be 100 percent";
    if (!(p.step_seconds > 0)) return "the step interval must be above 0 s";
    if (p.max_failures < 1) return "max failures must be at least 1";
    if (!(p.shadow_share >= 0 && p.shadow_share <= 1)) return "the shadow share is outside 0..1";
    return {};
}

const char* to_string(Phase p) {
    switch (p) {
        case Phase::Rolling:
            return "rolling";
        case Phase::Promoted:
            return "promoted";
        case Phase::RolledBack:
            break;
    }
    return "rolled_back";
}

const char* to_string(Verdict v) {
    switch (v) {
        case Verdict::Advance:
            return "advance";
        case Verdict::Promote:
            return "promote";
        case Verdict::Hold:
            return "hold";
        case Verdict::Fail:
            return "fail";
        case Verdict::Rollback:
            break;
    }
    return "rollback";
}

nlohmann::json Decision::to_json() const {
    nlohmann::json checks_json = nlohmann::json::array();
    for (const Check& c : checks)
        checks_json.push_back({{"name", c.name},
                               {"stable", number_or_null(c.stable)},
                               {"canary", number_or_null(c.canary)},
                               {"value", number_or_null(c.value)},
                               {"limit", number_or_null(c.limit)},
                               {"result", to_string(c.result)},
                               {"detail", c.detail}});
    return {{"time_s", time_s},
            {"step", step},
            {"share_before", share_before},
            {"share_after", share_after},
            {"verdict", to_string(verdict)},
            {"failures", failures},
            {"n_stable", n_stable},
            {"n_canary", n_canary},
            {"n_shadow", n_shadow},
            {"manual", manual},
            {"checks", checks_json}};
}

Rollout::Rollout(Policy policy) : policy_(std::move(policy)), router_(policy_.salt) {
    if (const std::string why = validate(policy_); !why.empty())
        throw std::invalid_argument("canary rollout: " + why);
    router_.set_share(policy_.steps[0]);
    step_ends_s_ = policy_.step_seconds;
}

Arm Rollout::route(std::string_view key) {
    {
        const std::lock_guard lock(mu_);
        if (phase_ == Phase::Promoted) return Arm::Canary;
        if (phase_ == Phase::RolledBack) return Arm::Stable;
    }
    return router_.route(key);
}

bool Rollout::take_shadow() {
    const std::lock_guard lock(mu_);
    if (phase_ != Phase::Rolling) return false;
    const uint64_t n = canary_seen_++;
    const double s = policy_.shadow_share;
    return std::floor(static_cast<double>(n + 1) * s) > std::floor(static_cast<double>(n) * s);
}

void Rollout::record(Arm arm, Outcome outcome) {
    const std::lock_guard lock(mu_);
    if (phase_ != Phase::Rolling) return;
    (arm == Arm::Canary ? samples_.canary : samples_.stable).push_back(std::move(outcome));
}

void Rollout::record_drift(Drift drift) {
    const std::lock_guard lock(mu_);
    if (phase_ != Phase::Rolling) return;
    samples_.drift.push_back(drift);
}

std::optional<Decision> Rollout::tick(double now_s) {
    const std::lock_guard lock(mu_);
    if (phase_ != Phase::Rolling || now_s < step_ends_s_) return std::nullopt;
    return decide(now_s);
}

Decision Rollout::decide(double now_s) {
    Decision d;
    d.time_s = now_s;
    d.step = step_;
    d.share_before = policy_.steps[step_];
    d.n_stable = samples_.stable.size();
    d.n_canary = samples_.canary.size();
    d.n_shadow = samples_.drift.size();
    d.checks = judge(samples_, policy_.limits);
    bool fresh = true;  // the next interval judges new traffic only
    switch (overall(d.checks)) {
        case CheckResult::Pass:
            if (step_ + 1 == policy_.steps.size()) {
                d.verdict = Verdict::Promote;
                phase_ = Phase::Promoted;
            } else {
                d.verdict = Verdict::Advance;
                ++step_;
            }
            break;
        case CheckResult::Inconclusive:
            d.verdict = Verdict::Hold;
            fresh = false;
            break;
        case CheckResult::Fail:
            ++failures_;
            if (failures_ >= policy_.max_failures) {
                d.verdict = Verdict::Rollback;
                phase_ = Phase::RolledBack;
            } else {
                d.verdict = Verdict::Fail;
            }
            break;
    }
    d.failures = failures_;
    d.share_after = phase_ == Phase::Promoted     ? 1.0
                    : phase_ == Phase::RolledBack ? 0.0
                                                  : policy_.steps[step_];
    if (phase_ == Phase::Rolling && d.verdict == Verdict::Advance) router_.set_share(d.share_after);
    if (fresh) {
        // A step at 100 % sends the stable version no traffic: the canary is
        // judged against the stable version's traffic of the step before.
        std::vector<Outcome> baseline;
        if (phase_ == Phase::Rolling && policy_.steps[step_] >= 1.0)
            baseline = std::move(samples_.stable);
        samples_ = StepSamples{};
        samples_.stable = std::move(baseline);
    }
    step_ends_s_ = now_s + policy_.step_seconds;
    decisions_.push_back(d);
    return d;
}

std::optional<Decision> Rollout::decide_by_hand(Verdict verdict, double now_s) {
    if (verdict != Verdict::Promote && verdict != Verdict::Rollback)
        throw std::invalid_argument(std::string("canary rollout: a person may promote or roll "
                                                "back, not ") +
                                    to_string(verdict));
    const std::lock_guard lock(mu_);
    if (phase_ != Phase::Rolling) return std::nullopt;
    Decision d;
    d.time_s = now_s;
    d.step = step_;
    d.share_before = policy_.steps[step_];
    d.n_stable = samples_.stable.size();
    d.n_canary = samples_.canary.size();
    d.n_shadow = samples_.drift.size();
    d.checks = judge(samples_, policy_.limits);
    d.verdict = verdict;
    d.manual = true;
    d.failures = failures_;
    phase_ = verdict == Verdict::Promote ? Phase::Promoted : Phase::RolledBack;
    d.share_after = verdict == Verdict::Promote ? 1.0 : 0.0;
    samples_ = StepSamples{};
    decisions_.push_back(d);
    return d;
}

Phase Rollout::phase() const {
    const std::lock_guard lock(mu_);
    return phase_;
}

double Rollout::share() const {
    const std::lock_guard lock(mu_);
    return phase_ == Phase::Promoted     ? 1.0
           : phase_ == Phase::RolledBack ? 0.0
                                         : policy_.steps[step_];
}

size_t Rollout::step() const {
    const std::lock_guard lock(mu_);
    return step_;
}

std::vector<Decision> Rollout::decisions() const {
    const std::lock_guard lock(mu_);
    return decisions_;
}

}  // namespace wb::rollout
