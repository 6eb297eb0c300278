#pragma once
// Per-token log-probabilities as every surface sees them (the CLI's
// --top-logprobs, the OpenAI-compatible server's `logprobs` /
// `top_logprobs`). The engine computes them (sampling/logprobs.h): the
// log-softmax of the model's raw logits at each step, before temperature,
// penalties and top-k/p, as the OpenAI API and llama-server
// (post_sampling_probs=false) report them. Qt-free.

#include "sampling/logprobs.h"

namespace wb::core {

/// {token id, natural-log probability <= 0}.
using TokenLogprob = sampling::TokenLogprob;
/// One step: the chosen token, its log-probability, and `top` [N] the N
/// most likely tokens (most likely first, equal logits lower id first).
using TokenLogprobs = sampling::TokenLogprobs;
/// Largest GenerationRequest::top_logprobs (20, as in the OpenAI API).
inline constexpr int32_t kMaxTopLogprobs = sampling::kMaxTopLogprobs;

}  // namespace wb::core
