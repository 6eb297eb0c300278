#pragma once
// The small pieces of math every quality metric is built from, in double
// precision: log-softmax, negative log-likelihood, KL divergence, arg-max.
// Computing from full logits in double (instead of llama.cpp's 16-bit
// compressed base file) is what makes a model against itself give KLD
// exactly 0 and never a negative value.

#include <cstdint>
#include <span>
#include <vector>

namespace wb::compare {

/// log p_i = x_i - max - log(sum_j exp(x_j - max)) for logits `x[n_vocab]`,
/// into `out[n_vocab]` (resized). Max subtraction keeps exp() in range; all
/// arithmetic in double. Throws std::invalid_argument for an empty span.
void log_softmax(std::span<const float> logits, std::vector<double>& out);

/// -log p(token) under softmax(logits), in nats, as llama-perplexity's
/// log_softmax: log(sum exp(x - max)) + max - x[token], in double.
/// Throws std::out_of_range when token is outside [0, n_vocab).
double nll(std::span<const float> logits, int32_t token);

/// KL(P || Q) = sum_i p_i (log p_i - log q_i) in nats, from the
/// log-probabilities of the reference P (`logp`) and the variant Q
/// (`logq`), both [n_vocab]. Terms with p_i = 0 contribute 0. The sum is
/// mathematically >= 0; a rounding residue below 0 (order 1e-17) is returned
/// as 0, and identical inputs give exactly 0. NaN inputs (non-finite
/// logits) give NaN, never 0. Throws std::invalid_argument when the sizes
/// differ.
double kl_divergence(std::span<const double> logp, std::span<const double> logq);

/// Index of the largest logit, ties to the lower id (llama.cpp greedy
/// sampling). Throws std::invalid_argument for an empty span.
int32_t argmax(std::span<const float> logits);

}  // namespace wb::compare
