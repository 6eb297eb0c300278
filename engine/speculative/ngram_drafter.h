#pragma once
// Prompt lookup decoding (Saxena, "Prompt Lookup Decoding", 2023; vLLM's
// ngram proposer, llama.cpp's --spec-type ngram): the last n tokens of the
// sequence are searched for earlier in it, and the tokens that followed
// their most recent earlier occurrence are the draft. No second model;
// pays off where the output repeats its input (editing, summaries that
// quote, code).

#include "speculative/drafter.h"

namespace wb::speculative {

class NgramDrafter : public Drafter {
  public:
    /// Tries n = max_n down to min_n. Throws std::invalid_argument when
    /// min_n is 0 or min_n > max_n.
    explicit NgramDrafter(uint32_t min_n = 1, uint32_t max_n = 3);
    /// For the largest n in [min_n, max_n] whose last-n-token suffix occurs
    /// earlier in `history` with at least one token after it: up to k of the
    /// tokens that follow its most recent earlier occurrence. Empty when no
    /// n matches or k is 0. O(len(history) * max_n). Stateless.
    std::vector<int32_t> propose(int32_t seq, std::span<const int32_t> history,
                                 uint32_t k) override;
    void release(int32_t) override {}
    std::string name() const override { return "ngram"; }

  private:
    uint32_t min_n_, max_n_;
};

}  // namespace wb::speculative
