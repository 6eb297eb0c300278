#pragma once
// Token sampling from logits, in llama.cpp's default chain order
// (common/sampling.cpp): repetition penalty -> top-k -> top-p -> min-p ->
// temperature -> draw. Note that, as in llama.cpp, top-p and min-p look at
// the probabilities at temperature 1; temperature only reshapes the draw
// among the survivors.
//
// Reproducible everywhere: the RNG is std::mt19937_64 (fully specified by
// the standard) and raw bits are turned into a double by hand, because
// std::uniform_real_distribution is implementation-defined.

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wb::sampling {

struct SamplingParams {
    float temperature = 0.8f;     ///< <= 0: greedy (arg-max, ties to the lower id)
    int32_t top_k = 40;           ///< keep the k most likely tokens; <= 0: off
    float top_p = 0.95f;          ///< keep the smallest set with cumulative p >= top_p; >= 1: off
    float min_p = 0.05f;          ///< keep tokens with p >= min_p * p_max; <= 0: off
    float repeat_penalty = 1.0f;  ///< > 1 discourages recent tokens; 1: off
    int32_t repeat_last_n = 64;   ///< how many recent tokens the penalty looks at; 0: off, -1: all
    uint64_t seed = 0;            ///< RNG seed of the draw
    /// Added to the raw logit of each listed token before anything else
    /// (llama.cpp's logit_bias sampler, the OpenAI API's `logit_bias`):
    /// {token id, bias}; -INFINITY bans a token. Ids outside the vocabulary
    /// are ignored. Empty by default.
    std::vector<std::pair<int32_t, float>> logit_bias;
};

/// The logits hold NaN or +inf, or every value is -inf (a broken weight,
/// an overflow in the forward pass): no distribution, so no token can be
/// drawn. what() reads "logits are not finite: 512 of 512 values are NaN,
/// 0 are +inf (first at token id 0)"; callers that know the step (the
/// scheduler, generate) wrap it in a message naming the output token.
class NonFiniteLogits : public std::runtime_error {
  public:
    NonFiniteLogits(size_t n_nan, size_t n_pos_inf, size_t n_vocab, int32_t first_id);
    size_t n_nan() const { return n_nan_; }
    size_t n_pos_inf() const { return n_pos_inf_; }

  private:
    size_t n_nan_, n_pos_inf_;
};

/// Throws NonFiniteLogits when `logits` ([n_vocab]) contain a NaN or +inf,
/// or when every value is -inf. Single -inf values are fine (a masked
/// token). O(n_vocab), no allocation.
void check_finite_logits(std::span<const float> logits);

/// One surviving token during sampling.
struct Candidate {
    int32_t id;
    float logit;
};

/// Stateful sampler for one sequence: holds the RNG and the recent tokens
/// for the repetition penalty.
class Sampler {
  public:
    /// Throws std::invalid_argument for a negative penalty or a NaN setting.
    explicit Sampler(const SamplingParams& params);

    const SamplingParams& params() const { return params_; }

    /// Picks the next token from `logits` ([n_vocab], raw model output) and
    /// remembers it for the penalty (as accept() does). Throws
    /// std::invalid_argument for an empty vector and NonFiniteLogits (see
    /// check_finite_logits) before touching the state, so a NaN never
    /// reaches the chain's steps (min-p on NaN kept no candidate at all).
    int32_t sample(std::span<const float> logits);

    /// The distribution sample() draws the next token from, for `logits`
    /// ([n_vocab], raw model output) and the current penalty history:
    /// [n_vocab] probabilities, 0 for tokens the chain removed; a one-hot
    /// at the arg-max when temperature <= 0. Same chain, same code as
    /// sample() (speculative decoding's verification needs exactly this p).
    /// Changes nothing. Throws as sample() does.
    std::vector<double> distribution(std::span<const float> logits) const;

    /// One uniform draw in [0, 1) from this sampler's RNG (uniform01).
    double draw_uniform() { return uniform01(rng_); }

    /// Records `token` as generated or as part of the prompt (llama.cpp
    /// feeds the prompt through accept too, so prompt tokens are penalised).
    void accept(int32_t token);

    /// Forgets the penalty history and re-seeds the RNG with params().seed.
    void reset();

    // ---- the chain's steps, public so each can be tested alone ----------

    /// llama.cpp's repetition penalty: each distinct token of `recent` has
    /// its logit divided by `penalty` if positive, multiplied if <= 0.
    static void apply_repetition_penalty(std::vector<Candidate>& cands,
                                         std::span<const int32_t> recent, float penalty);
    /// Sorts by logit (descending, ties: lower id first) and keeps the
    /// first k (all when k <= 0 or k >= size).
    static void top_k(std::vector<Candidate>& cands, int32_t k);
    /// Keeps the shortest prefix (of the sorted list) whose softmax mass
    /// reaches p; at least one token. Sorts first.
    static void top_p(std::vector<Candidate>& cands, float p);
    /// Keeps tokens whose probability is at least min_p times the largest
    /// one (logit >= max_logit + ln(min_p)); at least one token.
    static void min_p(std::vector<Candidate>& cands, float min_p);
    /// Divides every logit by t (t > 0).
    static void temperature(std::vector<Candidate>& cands, float t);
    /// Softmax of the candidates' logits in double (with max subtraction).
    static std::vector<double> softmax(const std::vector<Candidate>& cands);
    /// Arg-max of `logits`, ties to the lower id.
    static int32_t greedy(std::span<const float> logits);
    /// Uniform double in [0, 1) from the top 53 bits of one mt19937_64 draw.
    static double uniform01(std::mt19937_64& rng);

  private:
    /// The chain up to the draw: the surviving candidates in draw order and
    /// their probabilities in `p`; for temperature <= 0 the single greedy
    /// candidate with p = {1}. Validates `logits` first.
    std::vector<Candidate> chain(std::span<const float> logits, std::vector<double>& p) const;

    SamplingParams params_;
    std::mt19937_64 rng_;
    std::deque<int32_t> recent_;  // [<= repeat_last_n] most recent tokens, oldest first
};

}  // namespace wb::sampling
