#pragma once
// Which version of a model serves a request while a canary rollout runs:
// the split of traffic between the stable version and the canary at a
// share that steps up (Argo Rollouts' and Flagger's "weight").
//
// Every request gets a position u in [0, 1) and goes to the canary while
// u < share. Positions come from the golden-ratio (Kronecker) sequence
// u_n = frac(u_0 + n / phi), a low-discrepancy sequence: of any N
// consecutive positions, the share below any threshold is within a few
// requests of N * share (50 of 1000 at 5 %, 251 of 1000 at 25 %), where a
// hash or a coin flip per request would wander by its binomial spread
// (+-1.6 points at 50 % over 1000).
// - A request with a sticky key (the client's address, API key or the
//   OpenAI `user` field) keeps the position its key got when first seen,
//   so a client keeps its version across requests, and as the share steps
//   up the canary's clients stay on it (monotone); a rollback (share 0)
//   sends every key to the stable version. Past kMaxKeys remembered keys a
//   new key's position is its hash (key_position), still sticky.
// - A request without one takes the next position.
//
// Qt-free, thread-safe.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace wb::rollout {

/// The two versions under one public model name.
enum class Arm { Stable, Canary };

/// "stable" | "canary".
const char* to_string(Arm a);

/// Splits requests between Arm::Stable and Arm::Canary at a share.
class Router {
  public:
    /// `salt` changes which keys land on the canary (a new rollout, a new
    /// set of early clients); the same salt always gives the same split.
    explicit Router(uint64_t salt = 0);

    /// Sticky keys remembered; beyond, new keys are placed by their hash.
    static constexpr size_t kMaxKeys = 1u << 20;

    /// The canary's share of traffic, 0..1; keys keep their positions.
    /// Throws std::invalid_argument when `share` is NaN or outside [0, 1].
    void set_share(double share);
    double share() const;

    /// The version that serves a request with sticky key `key` ("" = none,
    /// the keyless sequence). Never throws.
    Arm route(std::string_view key);

    /// A position in [0, 1) for `key` and `salt` by hash (used past
    /// kMaxKeys, and for the sequence's start u_0): 64-bit FNV-1a of the key,
    /// finished with splitmix64's mixer (FNV-1a alone leaves short keys
    /// that differ in their last byte close together), top 53 bits.
    static double key_position(std::string_view key, uint64_t salt);

  private:
    mutable std::mutex mu_;
    uint64_t salt_;
    double share_ = 0.0;
    double next_ = 0.0;                             // the sequence's next position
    std::unordered_map<std::string, double> keys_;  // sticky key -> its position
};

}  // namespace wb::rollout
