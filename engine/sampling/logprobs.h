#pragma once
// Per-token log-probabilities of the model's own distribution: the
// log-softmax of the raw logits of one step, before logit bias, penalties,
// temperature or top-k/p/min-p. This is what the OpenAI API's `logprobs` /
// `top_logprobs` report and what llama-server returns with
// post_sampling_probs=false; sampling settings never change these values.

#include <cstdint>
#include <span>
#include <vector>

namespace wb::sampling {

/// Most alternatives a request may ask for per step (the OpenAI API's
/// top_logprobs limit, 0..20).
inline constexpr int32_t kMaxTopLogprobs = 20;

/// One token and its log-probability (natural log, <= 0; -inf for a
/// token whose logit is -inf).
struct TokenLogprob {
    int32_t token = -1;
    float logprob = 0;
};

/// One generation step: the chosen token's log-probability and the `top`
/// most likely tokens of that step.
struct TokenLogprobs {
    int32_t token = -1;  ///< the token that was output at this step
    float logprob = 0;   ///< its log-probability under the raw logits
    /// [N] the N most likely tokens, most likely first; equal logits go
    /// lower token id first. Empty when N is 0.
    std::vector<TokenLogprob> top;
};

/// log(sum(exp(logits))) in double, with the maximum subtracted first so
/// large logits (e.g. 1000) do not overflow. -inf values count as zero
/// probability. Throws std::invalid_argument for an empty span or when no
/// value is finite and above -inf (NaN, +inf or all -inf: no distribution;
/// the scheduler has already refused such logits via check_finite_logits).
double log_sum_exp(std::span<const float> logits);

/// The log-softmax of `logits` ([n_vocab], raw model output) at `token`,
/// plus the `n_top` largest entries (most likely first, ties to the lower
/// id). Values are computed in double (logit - log_sum_exp) and stored as
/// float. O(n_vocab + n_vocab log n_top) time, O(n_top) extra memory.
/// Throws std::invalid_argument when `token` is outside [0, n_vocab),
/// `n_top` is outside [0, kMaxTopLogprobs], or log_sum_exp throws.
TokenLogprobs token_logprobs(std::span<const float> logits, int32_t token, int32_t n_top);

}  // namespace wb::sampling
