#pragma once
// Verification of a draft in speculative decoding: the target model scored
// the sequence's last token plus k drafted tokens in one pass, giving k + 1
// rows of logits; this decides which drafted tokens to keep and which token
// comes after them. The rule is speculative sampling (Leviathan, Kalman,
// Matias, "Fast Inference from Transformers via Speculative Decoding", ICML
// 2023, Algorithm 1; Chen et al., "Accelerating Large Language Model
// Decoding with Speculative Sampling", 2023): draft token x_i, proposed
// with probability q_i(x_i), is kept with probability min(1, p_i(x_i) /
// q_i(x_i)); at the first rejection the next token is drawn from
// normalize(max(0, p_i - q_i)) and the rest of the draft is dropped; when
// all k are kept, one more token is drawn from p_{k+1}. The emitted tokens
// are then distributed exactly as the target's own sampling would give.
//
// p_i is the distribution the normal sampler draws from
// (Sampler::distribution: logit bias, repetition penalty, top-k, top-p,
// min-p, temperature), computed row by row with each kept token recorded
// in the sampler first, as plain decoding would have. At temperature <= 0,
// p_i is a one-hot at the (penalised) arg-max, so the rule keeps draft
// tokens while they equal the target's greedy choice and replaces the first
// mismatch by it: greedy output is token-for-token that of plain decoding.

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/sampler.h"

namespace wb::speculative {

/// What verify() decided.
struct Verdict {
    /// The tokens to emit, in order: the n_accepted kept draft tokens, then
    /// one more (the resampled replacement, or the bonus token when all
    /// were kept). Size n_accepted + 1.
    std::vector<int32_t> tokens;
    uint32_t n_accepted = 0;  ///< draft tokens kept (0..k)
};

/// Applies the speculative sampling rule (see the file comment).
/// `logits`: [k + 1, n_vocab] row-major, row i the target's logits after
/// the sequence's tokens and draft[0..i). `draft`: [k] proposed token ids.
/// `q`: [k, n_vocab] row-major, the draft's proposal distributions, or
/// empty for a deterministic drafter (n-gram, greedy draft model: q_i is a
/// one-hot at draft[i], so x_i is kept with probability p_i(x_i) and a
/// rejection draws from p_i without x_i, renormalized). Every emitted token
/// is recorded in `sampler` (Sampler::accept), and uniform draws come from
/// its RNG. Throws std::invalid_argument, naming the sizes, when logits is
/// not (k + 1) * n_vocab, q is neither empty nor k * n_vocab, n_vocab is 0,
/// or a draft token is outside [0, n_vocab); NonFiniteLogits as
/// Sampler::sample does (tokens already recorded stay recorded).
Verdict verify(sampling::Sampler& sampler, std::span<const float> logits, uint32_t n_vocab,
               std::span<const int32_t> draft, std::span<const double> q = {});

/// Draws a token from normalize(max(0, p - q)) with uniform u in [0, 1)
/// (inverse CDF in id order). p, q: [n_vocab]. When the residual has no
/// mass (p <= q everywhere, only possible by rounding), draws from p
/// instead. Pure function.
int32_t sample_residual(std::span<const double> p, std::span<const double> q, double u);

}  // namespace wb::speculative
