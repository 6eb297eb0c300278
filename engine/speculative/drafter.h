#pragma once
// What proposes draft tokens for speculative decoding (verify.h checks
// them against the target). One interface for every kind of draft: prompt
// lookup (ngram_drafter.h) and a second, smaller model
// (draft_model_drafter.h). Drafters are deterministic (greedy), so the
// verification treats each proposal as a one-hot q.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wb::speculative {

class Drafter {
  public:
    virtual ~Drafter() = default;
    /// Up to `k` tokens that may follow `history`, sequence `seq`'s whole
    /// token list so far (prompt + output). Fewer, or none, when the
    /// drafter has no guess. `seq` lets a stateful drafter keep per-sequence
    /// state (a draft model's KV); it must be a target sequence id.
    virtual std::vector<int32_t> propose(int32_t seq, std::span<const int32_t> history,
                                         uint32_t k) = 0;
    /// Sequence `seq` ended: forget what was kept for it. Unknown ids are fine.
    virtual void release(int32_t seq) = 0;
    /// "ngram" or the draft model's description, for stats and logs.
    virtual std::string name() const = 0;
};

/// Draft length that adapts to how much of the draft the target keeps:
/// one longer after a fully kept draft, one shorter after a rejection,
/// always within [1, k_max]. With adaptive off it stays at k_max.
class AdaptiveK {
  public:
    /// k starts at k_max (>= 1; 0 is taken as 1).
    explicit AdaptiveK(uint32_t k_max, bool adaptive = true)
        : k_max_(k_max == 0 ? 1 : k_max), k_(k_max_), adaptive_(adaptive) {}
    uint32_t k() const { return k_; }
    /// Records a pass that drafted `n_drafted` tokens and kept `n_accepted`.
    /// A pass with nothing drafted changes nothing.
    void update(uint32_t n_drafted, uint32_t n_accepted) {
        if (!adaptive_ || n_drafted == 0) return;
        if (n_accepted >= n_drafted) {
            if (k_ < k_max_) ++k_;
        } else if (k_ > 1) {
            --k_;
        }
    }

  private:
    uint32_t k_max_, k_;
    bool adaptive_;
};

}  // namespace wb::speculative
