#pragma once
// How many draft tokens a speculative pass should check, chosen from what a
// pass costs on this machine and how much of a draft this request keeps.
//
// A pass that checks k draft tokens computes k + 1 rows. If each draft token
// is kept with probability alpha (given the ones before it were), the pass
// yields E(k) = 1 + alpha + ... + alpha^k tokens (Leviathan et al. 2023,
// "Fast Inference from Transformers via Speculative Decoding", eq. 1).
// Where a pass over n tokens costs c(n) and drafting costs d per token, the
// best k maximises tokens per millisecond, E(k) / (c(1 + k) + d k); k = 0
// (plain decoding) is a candidate, so speculation is never chosen where
// the measured costs say it loses. On compute-bound kernels (c(n) grows
// almost linearly, the CPU backend) that is often k = 0 or 1; on
// bandwidth-bound ones (c(n) nearly flat, a GPU) the longest k.

#include <array>
#include <cstdint>
#include <optional>

#include "speculative/drafter.h"

namespace wb::speculative {

/// Wall time of one target pass by the number of tokens it computes, learnt
/// from the passes the scheduler runs (every pass: decode, prefill chunk,
/// verification). Not thread-safe: the scheduler's thread only.
class PassCostModel {
  public:
    /// Largest token count with its own estimate; larger passes are
    /// recorded under it (they only widen the interpolation's range).
    static constexpr uint32_t kMaxTokens = 256;

    /// Records a pass over `n_tokens` tokens (>= 1) that took `ms` (> 0)
    /// milliseconds. Each count keeps an exponential moving average
    /// (weight 0.25 for the new sample), so a change of load shows within
    /// a few passes. Other values are ignored.
    void record(uint32_t n_tokens, double ms);

    /// Estimated ms of a pass over `n_tokens`: the count's own average, or
    /// linear interpolation between the nearest counts measured below and
    /// above it, or beyond the largest measured count the line through the
    /// two largest (never decreasing). nullopt while fewer than two counts
    /// are measured (no slope is known).
    std::optional<double> cost_ms(uint32_t n_tokens) const;

  private:
    /// The nearest measured count after `from` going `dir` (+1 or -1); 0 = none.
    uint32_t next_measured(uint32_t from, int dir) const;

    std::array<double, kMaxTokens + 1> ms_{};  // [n] average ms, 0 = not measured
};

/// Expected tokens of a pass that checks `k` draft tokens each kept with
/// probability `alpha` in [0, 1]: sum_{i=0..k} alpha^i (1 at k = 0).
double expected_tokens(double alpha, uint32_t k);

/// The draft length in [0, k_max] that maximises
/// (n_base - 1 + E(k)) / (c(n_base + k) + draft_ms_per_token * k): the
/// step's tokens per ms when this request adds k draft tokens to a pass
/// that already holds `n_base` >= 1 tokens (its own fed token and the
/// other requests' tokens, each counted as one token of output). nullopt
/// when `costs` cannot estimate a count yet. Ties go to the shorter draft.
std::optional<uint32_t> best_draft_length(double alpha, uint32_t k_max, uint32_t n_base,
                                          double draft_ms_per_token, const PassCostModel& costs);

/// One request's draft length: best_draft_length from the pass costs and
/// this request's acceptance rate once the costs are known, AdaptiveK's
/// rule before that (and always when adaptive is off: then k_max).
/// The acceptance rate is the maximum-likelihood alpha of the passes so
/// far (kept tokens over kept tokens plus rejections), with one kept and
/// one rejected token as a prior. While the costs say k = 0, every 8th pass
/// still drafts one token, so a drafter that starts guessing well is seen.
class DraftLength {
  public:
    /// `k_max` >= 1 (0 is taken as 1).
    explicit DraftLength(uint32_t k_max, bool adaptive = true);

    /// The draft length for the next pass (0 = decode without a draft);
    /// `n_base` and `costs` as best_draft_length.
    uint32_t next(uint32_t n_base, const PassCostModel& costs);

    /// Records a pass that drafted `n_drafted` tokens, kept `n_accepted`,
    /// and spent `draft_ms` drafting them (the first draft's time is left
    /// out of the cost per draft token: it holds one-off work such as a
    /// draft model's prefill). A pass with nothing drafted changes nothing.
    void update(uint32_t n_drafted, uint32_t n_accepted, double draft_ms);

    /// The current acceptance estimate, in (0, 1).
    double alpha() const;

  private:
    AdaptiveK fallback_;
    uint32_t k_max_;
    bool adaptive_;
    double kept_ = 1, rejected_ = 1;  // the prior: alpha starts at 0.5
    double draft_ms_ = 0, drafted_ = 0;
    uint32_t passes_without_draft_ = 0;
    bool first_ = true;  // no draft checked yet
};

}  // namespace wb::speculative
