#pragma once
// Greedy generation with the runner's own timing, and the token-agreement
// measures between a reference model A and a variant B:
//  - teacher-forced agreement: B is fed A's prompt and A's greedy output and
//    at every step its arg-max is compared with A's next token (the share of
//    equal positions; a split never propagates, each step sees A's history);
//  - free-running divergence: the first step where B's own greedy output
//    differs from A's.
// Greedy = arg-max with ties to the lower id (llama.cpp); no stop token, so
// every model decodes the same number of tokens and the figures line up.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "model/model.h"

namespace wb::compare {

/// One greedy run. Times in ms from std::chrono::steady_clock.
struct GreedyRun {
    std::vector<int32_t> prompt;  ///< [n_prompt] the prompt's ids
    std::vector<int32_t> tokens;  ///< [n_predict] generated ids
    /// stop() ended the run: the last of `tokens` is the stop token.
    bool stopped = false;
    uint32_t n_prompt = 0;  ///< prompt tokens (BOS included)
    double prefill_ms = 0;  ///< prompt decode until its logits are back
    double ttft_ms = 0;     ///< start until the first token is chosen (prefill + sampling)
    double e2e_ms = 0;      ///< start until the last token is chosen
    /// Prompt tokens per second of the prefill.
    double prefill_tps() const { return prefill_ms > 0 ? n_prompt * 1000.0 / prefill_ms : 0; }
    /// Generated tokens after the first per second of decode (TPOT^-1).
    double decode_tps() const {
        return tokens.size() > 1 && e2e_ms > ttft_ms
                   ? static_cast<double>(tokens.size() - 1) * 1000.0 / (e2e_ms - ttft_ms)
                   : 0;
    }
};

/// Generates `n_predict` tokens greedily after `prompt` in sequence 0 of
/// `m` (cleared before and after). `stop(id)` ends generation early when it
/// returns true (the stop token is kept); empty = never. The prompt is
/// decoded in ubatches of `n_ubatch`. Throws std::invalid_argument for an
/// empty prompt and what decode() throws (DecodeError when the context is
/// too small).
GreedyRun greedy_generate(model::Model& m, std::span<const int32_t> prompt, uint32_t n_predict,
                          uint32_t n_ubatch = 512, const std::function<bool(int32_t)>& stop = {});

/// B's arg-max at each step of A's continuation: decodes prompt +
/// forced[0..n-2] in one pass and returns [n] ids, where element i is B's
/// greedy choice for the token A chose at step i.
std::vector<int32_t> teacher_forced_argmax(model::Model& m, std::span<const int32_t> prompt,
                                           std::span<const int32_t> forced,
                                           uint32_t n_ubatch = 512);

/// Agreement of `b` with `a` position by position over a's length.
struct TokenAgreement {
    uint64_t equal = 0;  ///< positions where b[i] == a[i]
    uint64_t total = 0;  ///< positions compared
    double share() const {
        return total ? static_cast<double>(equal) / static_cast<double>(total) : 0;
    }
};
TokenAgreement token_agreement(std::span<const int32_t> a, std::span<const int32_t> b);

/// First index where the sequences differ, nullopt when they are equal over
/// the shorter one's length.
std::optional<size_t> first_divergence(std::span<const int32_t> a, std::span<const int32_t> b);

}  // namespace wb::compare
