#pragma once
// A canary rollout, served: two loaded versions of a model under one public
// name (`workbench-cli serve -m STABLE --canary CANARY`). The rollout
// (app/rollout) decides the share; this class connects it to the server:
// - pick(): each request goes to the version its sticky key (the OpenAI
//   `user`, else the client's address) is routed to; some canary requests
//   are marked for a shadow run (Policy::shadow_share) and ask the engine
//   for top-kShadowTop log-probabilities;
// - on_finished(): each finished request's outcome (TTFT, inter-token gaps,
//   error, timeout) is recorded for its arm; a marked canary request is run
//   again on the stable version with the same prompt, settings, seed and
//   length, and the pair's drift (shadow_drift) is recorded;
// - a timer steps the rollout (Rollout::tick) and hands every decision, with
//   its figures, to CanaryOptions::on_decision (printed and logged by the
//   command) and keeps them for status() (GET /canary).
// Qt-free.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/engine_session.h"
#include "rollout/rollout.h"
#include "server/server.h"

namespace wb::server {

/// Log-probability alternatives a shadow pair's two runs ask for.
inline constexpr int32_t kShadowTop = 20;

/// Drift of one shadow pair, from the two runs of one request.
/// token_agreement: the share of the canary's output tokens that the stable
/// run has at the same position (1 when the canary produced none).
/// mean_kld: the mean over positions 0..d (d = the first position where the
/// two outputs differ, or the shorter's end; up to there both runs saw the
/// same context) of KL(stable || canary) = sum over the stable run's listed
/// alternatives t of p_s(t) (ln p_s(t) - ln p_c(t)), with ln p_c(t) the
/// canary's log-probability of t, or its smallest listed one when t is not
/// among its alternatives (an estimate on the top alternatives: the rest of
/// the distributions is not reported), nats per token. `*_logprobs` are
/// [n_out] per-step log-probabilities (core::TokenLogprobs) of the outputs
/// `*_tokens`; steps without alternatives count the chosen tokens only.
/// Never throws.
rollout::Drift shadow_drift(const std::vector<int32_t>& stable_tokens,
                            const std::vector<core::TokenLogprobs>& stable_logprobs,
                            const std::vector<int32_t>& canary_tokens,
                            const std::vector<core::TokenLogprobs>& canary_logprobs);

/// What a served rollout needs besides its two sessions.
struct CanaryOptions {
    rollout::Policy policy;
    std::chrono::milliseconds tick{200};  ///< how often the rollout is stepped
    /// Each decision as it is made (timer thread); may be empty; must not throw.
    std::function<void(const rollout::Decision&)> on_decision;
};

/// Connects a rollout::Rollout to the server's hooks (see the top of the file).
class Canary {
  public:
    /// `stable` and `canary` must outlive this object. Throws
    /// std::invalid_argument for a bad policy (rollout::validate).
    Canary(core::EngineSession& stable, core::EngineSession& canary, CanaryOptions options);
    /// Stops the timer and waits for shadow runs in flight.
    ~Canary();
    Canary(const Canary&) = delete;
    Canary& operator=(const Canary&) = delete;

    /// Starts the rollout's clock and its timer (time 0 is now).
    void start();
    /// Stops the timer (idempotent).
    void stop();

    /// A person promotes (Verdict::Promote) or rolls back
    /// (Verdict::Rollback) now (Rollout::decide_by_hand); the decision goes
    /// to on_decision as the timer's do. Returns it, or nothing once the
    /// rollout ended. Throws std::invalid_argument for another verdict.
    std::optional<rollout::Decision> decide_by_hand(rollout::Verdict verdict);

    /// ServerHooks::pick: the session for a request and its logged arm.
    SessionPick pick(const core::GenerationRequest& request, const std::string& sticky_key);
    /// ServerHooks::on_finished, for any request of either session.
    void on_finished(const core::FinishedRequest& f, int http_status);
    /// Which version served `f` (by session id); nothing for another session.
    std::optional<rollout::Arm> arm_of(const core::FinishedRequest& f) const;

    /// {"phase", "share", "step", "steps": [..], "shadow_pairs", "decisions":
    /// [Decision::to_json()]}.
    nlohmann::json status() const;
    const rollout::Rollout& rollout() const { return rollout_; }

  private:
    void run_timer();
    void run_shadow(core::GenerationRequest request, const core::FinishedRequest& canary_answer);

    core::EngineSession& stable_;
    core::EngineSession& canary_;
    CanaryOptions options_;
    rollout::Rollout rollout_;
    std::chrono::steady_clock::time_point t0_;

    std::mutex mu_;
    std::condition_variable cv_;
    bool stopping_ = false;
    std::thread timer_;
    /// Canary requests marked for a shadow run, by label, until they finish.
    std::unordered_map<std::string, core::GenerationRequest> marked_;
    std::atomic<int> shadows_in_flight_{0};
    std::atomic<uint64_t> shadow_pairs_{0};
};

}  // namespace wb::server
