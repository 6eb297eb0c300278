#include "server/canary.h"

#include <algorithm>
#include <cmath>

namespace wb::server {

rollout::Drift shadow_drift(const std::vector<int32_t>& stable_tokens,
                            const std::vector<core::TokenLogprobs>& stable_logprobs,
                            const std::vector<int32_t>& canary_tokens,
                            const std::vector<core::TokenLogprobs>& canary_logprobs) {
    rollout::Drift d;
    if (!canary_tokens.empty()) {
        size_t same = 0;
        for (size_t i = 0; i < canary_tokens.size(); ++i)
            same += i < stable_tokens.size() && stable_tokens[i] == canary_tokens[i];
        d.token_agreement = static_cast<double>(same) / static_cast<double>(canary_tokens.size());
    }
    // Positions 0..first divergence: the two runs had the same context there.
    const size_t common = std::min({stable_tokens.size(), canary_tokens.size(),
                                    stable_logprobs.size(), canary_logprobs.size()});
    size_t last = 0;
    while (last < common && stable_tokens[last] == canary_tokens[last]) ++last;
    const size_t n_steps = std::min(last + 1, common);
    double sum = 0;
    for (size_t i = 0; i < n_steps; ++i) {
        const core::TokenLogprobs& s = stable_logprobs[i];
        const core::TokenLogprobs& c = canary_logprobs[i];
        // The canary's log-probability of token t: listed, else its smallest listed one.
        double c_floor = c.logprob;
        for (const core::TokenLogprob& t : c.top)
            c_floor = std::min(c_floor, static_cast<double>(t.logprob));
        auto canary_lp = [&](int32_t token) {
            if (token == c.token) return static_cast<double>(c.logprob);
            for (const core::TokenLogprob& t : c.top)
                if (t.token == token) return static_cast<double>(t.logprob);
            return c_floor;
        };
        double kl = 0;
        auto term = [&](int32_t token, double lp) {
            if (!std::isfinite(lp)) return;  // p_s(t) = 0 adds nothing
            const double lc = canary_lp(token);
            kl += std::exp(lp) * (lp - (std::isfinite(lc) ? lc : -1e4));
        };
        if (s.top.empty()) {
            term(s.token, s.logprob);
        } else {
            for (const core::TokenLogprob& t : s.top) term(t.token, t.logprob);
        }
        sum += std::max(kl, 0.0);  // truncated sums can dip below 0; KL cannot
    }
    d.mean_kld = n_steps > 0 ? sum / static_cast<double>(n_steps) : 0.0;
    return d;
}

Canary::Canary(core::EngineSession& stable, core::EngineSession& canary, CanaryOptions options)
    : stable_(stable), canary_(canary), options_(std::move(options)), rollout_(options_.policy) {}

Canary::~Canary() {
    stop();
    std::unique_lock lock(mu_);
    // A shadow run's sink refers to this object: wait for those in flight
    // (the command cancels the sessions' requests before this).
    cv_.wait_for(lock, std::chrono::seconds(30), [this] { return shadows_in_flight_.load() == 0; });
}

void Canary::start() {
    const std::lock_guard lock(mu_);
    if (timer_.joinable()) return;
    t0_ = std::chrono::steady_clock::now();
    stopping_ = false;
    timer_ = std::thread([this] { run_timer(); });
}

void Canary::stop() {
    {
        const std::lock_guard lock(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (timer_.joinable() && timer_.get_id() != std::this_thread::get_id()) timer_.join();
}

void Canary::run_timer() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
        cv_.wait_for(lock, options_.tick, [this] { return stopping_; });
        if (stopping_) break;
        const double now_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        lock.unlock();
        if (const std::optional<rollout::Decision> d = rollout_.tick(now_s);
            d && options_.on_decision)
            options_.on_decision(*d);
        lock.lock();
    }
}

std::optional<rollout::Decision> Canary::decide_by_hand(rollout::Verdict verdict) {
    const double now_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::optional<rollout::Decision> d = rollout_.decide_by_hand(verdict, now_s);
    if (d && options_.on_decision) options_.on_decision(*d);
    return d;
}

SessionPick Canary::pick(const core::GenerationRequest& request, const std::string& sticky_key) {
    SessionPick p;
    const rollout::Arm arm = rollout_.route(sticky_key);
    p.session = arm == rollout::Arm::Canary ? &canary_ : &stable_;
    p.log_settings["rollout_arm"] = rollout::to_string(arm);
    if (arm == rollout::Arm::Canary && rollout_.take_shadow()) {
        p.min_top_logprobs = kShadowTop;
        p.log_settings["rollout_shadow"] = true;
        const std::lock_guard lock(mu_);
        marked_.emplace(request.label, request);
    }
    return p;
}

std::optional<rollout::Arm> Canary::arm_of(const core::FinishedRequest& f) const {
    if (f.session_id == canary_.session_id()) return rollout::Arm::Canary;
    if (f.session_id == stable_.session_id()) return rollout::Arm::Stable;
    return std::nullopt;
}

void Canary::on_finished(const core::FinishedRequest& f, int http_status) {
    const std::optional<rollout::Arm> arm = arm_of(f);
    if (!arm) return;
    std::optional<core::GenerationRequest> marked;
    {
        const std::lock_guard lock(mu_);
        if (const auto it = marked_.find(f.label); it != marked_.end()) {
            if (*arm == rollout::Arm::Canary) marked = std::move(it->second);
            marked_.erase(it);
        }
    }
    // A client that went away says nothing about the version.
    if (f.finish_reason == "cancelled") return;
    rollout::Outcome o;
    o.timeout = f.finish_reason == "timeout";
    o.error = f.finish_reason == "error" || f.finish_reason == "rejected" || http_status >= 500;
    if (const std::optional<double> ttft = f.ttft_ms())
        o.ttft_ms = *ttft;
    else if (!o.failed())
        o.error = true;  // finished without a first token
    o.itl_ms = f.times.itl_ms;
    rollout_.record(*arm, std::move(o));
    if (marked && f.completed() && !f.output_tokens.empty()) run_shadow(std::move(*marked), f);
}

void Canary::run_shadow(core::GenerationRequest request,
                        const core::FinishedRequest& canary_answer) {
    // The same prompt, settings and seed, as long as the canary's answer,
    // on the stable version, with the alternatives to compare; not logged.
    request.seed = {core::SeedPolicy::Fixed, canary_answer.seed, 0};
    request.max_tokens = static_cast<int32_t>(canary_answer.output_tokens.size());
    request.top_logprobs = kShadowTop;
    request.run_id = 0;
    request.label += "-shadow";
    request.client_id = "canary-shadow";
    auto answer =
        std::make_shared<const std::pair<std::vector<int32_t>, std::vector<core::TokenLogprobs>>>(
            canary_answer.output_tokens, canary_answer.logprobs);
    ++shadows_in_flight_;
    const core::RequestHandle h =
        stable_.submit(std::move(request), [this, answer](const core::RequestEvent& e) {
            if (e.type != core::RequestEvent::Type::Finished) return;
            if (e.result && e.result->completed())
                if (rollout_.phase() == rollout::Phase::Rolling) {
                    rollout_.record_drift(shadow_drift(e.result->output_tokens, e.result->logprobs,
                                                       answer->first, answer->second));
                    ++shadow_pairs_;
                }
            {
                const std::lock_guard lock(mu_);
                --shadows_in_flight_;
            }
            cv_.notify_all();
        });
    (void)h;
}

nlohmann::json Canary::status() const {
    nlohmann::json decisions = nlohmann::json::array();
    for (const rollout::Decision& d : rollout_.decisions()) decisions.push_back(d.to_json());
    return {{"phase", rollout::to_string(rollout_.phase())},
            {"share", rollout_.share()},
            {"step", rollout_.step()},
            {"steps", rollout_.policy().steps},
            {"shadow_pairs", shadow_pairs_.load()},
            {"decisions", decisions}};
}

}  // namespace wb::server
