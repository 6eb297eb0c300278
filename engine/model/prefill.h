#pragma once
// Prefill of one sequence in ubatches: the path every caller that feeds a
// whole prompt at once uses (generate, bench), as the scheduler and the
// comparison's perplexity already do. One decode() of 4000 tokens was one
// GPU submission of over two minutes on lavapipe, past any GPU watchdog
// (Windows' TDR is 2 s, Linux drivers' hang checks a few seconds more).

#include <cstdint>
#include <span>
#include <vector>

#include "model/model.h"

namespace wb::model {

/// Tokens per ubatch when the caller does not choose: llama.cpp's n_ubatch
/// default.
inline constexpr uint32_t kDefaultUbatch = 512;

/// Runs `tokens` ([n_tokens] ids) of sequence `seq`, at positions pos0,
/// pos0 + 1, ..., through `m` in consecutive ubatches of at most `n_ubatch`
/// tokens (one Model::decode each), and leaves the logits of the last
/// token in `logits` ([1, n_vocab]). No call and `logits` untouched when
/// `tokens` is empty. Throws std::invalid_argument for n_ubatch 0, and what
/// decode() throws; then the ubatches before the failing one stay in the
/// cache (Model::seq_rm(seq) clears them).
void prefill(Model& m, std::span<const int32_t> tokens, int32_t seq, int32_t pos0,
             uint32_t n_ubatch, std::vector<float>& logits);

}  // namespace wb::model
