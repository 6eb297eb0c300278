#pragma once
// Perplexity and KL divergence over a text, scored by llama.cpp's
// llama-perplexity rule so the figures compare with its tool:
//
//   the text is tokenized once (BOS first); it is cut into
//   floor(n_tokens / n_ctx) chunks of n_ctx tokens (the rest is unused);
//   each chunk is evaluated from an empty KV cache with its first token
//   replaced by BOS; only the second half is scored: the logits at
//   positions n_ctx/2 .. n_ctx-2 predict the tokens at n_ctx/2+1 .. n_ctx-1
//   (63 tokens per chunk for n_ctx = 128). PPL = exp(mean NLL).
//   As llama-perplexity, a text needs at least 2 * n_ctx tokens.
//
// KL divergence (llama-perplexity --kl-divergence) is computed on the same
// scored positions: KL(A || B) of B's next-token distribution from the
// reference A's, from full logits in double (logits_math.h). Models are
// evaluated chunk by chunk, all models per chunk, so memory holds one
// chunk's logits per model, never the whole text's: the reference's
// log-probabilities of the scored half, [n_ctx/2 - 1, n_vocab] doubles
// (0.25 GB for n_ctx 2048 and a 32000-token vocabulary), plus one model's
// chunk logits as floats.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/model.h"

namespace wb::compare {

/// The text cannot be scored (too short for the window, ...). what() says
/// how many tokens there are and how many are needed.
class TextTooShort : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// One model's perplexity.
struct PerplexityResult {
    double ppl = 0;         ///< exp(mean NLL)
    double ppl_error = 0;   ///< llama-perplexity's ± estimate: ppl * sqrt(var(NLL)/(N-1))
    double mean_nll = 0;    ///< nats per scored token
    uint64_t n_scored = 0;  ///< tokens scored (n_chunks * (n_ctx/2 - 1) for even n_ctx)
    uint32_t n_chunks = 0;
    uint32_t n_ctx = 0;               ///< window (chunk) length in tokens
    uint64_t n_text_tokens = 0;       ///< tokens of the whole text, BOS included
    std::vector<double> running_ppl;  ///< [n_chunks] PPL after each chunk, as llama.cpp prints
};

/// KL divergence of one variant from the reference, over the scored
/// positions. When either model's logits are not finite at some position,
/// every figure below (mean, error, median, p99, max, min) is NaN.
struct KldResult {
    uint64_t n = 0;                                ///< positions compared
    double mean = 0;                               ///< nats
    double mean_error = 0;                         ///< standard error of the mean
    double median = 0, p99 = 0, max = 0, min = 0;  ///< percentiles as wb::metrics (numpy "linear")
    uint64_t same_top = 0;                         ///< positions where arg-max(B) == arg-max(A)
    double same_top_share() const {
        return n ? static_cast<double>(same_top) / static_cast<double>(n) : 0;
    }
};

/// One model taking part in a text evaluation.
struct TextModel {
    model::Model* model = nullptr;
    std::vector<int32_t> tokens;  ///< the text tokenized by this model's vocab, BOS first
    int32_t bos = 1;              ///< BOS id put at the start of every chunk
    /// Compare distributions with models[0] (same vocabulary, same tokens).
    bool kld_with_reference = false;
};

struct TextEvalResult {
    std::vector<PerplexityResult> ppl;          ///< [n_models]
    std::vector<std::optional<KldResult>> kld;  ///< [n_models]; set where kld_with_reference
                                                ///< (models[0] against itself included)
};

/// Progress: (chunks done, chunks total).
using ChunkProgress = std::function<void(uint32_t, uint32_t)>;

/// Scores every model on its tokens with the rule above. Each model's
/// context must hold n_ctx tokens in sequence 0 (it is cleared with
/// seq_rm(0) before and after every chunk). Chunks are decoded in ubatches
/// of at most `n_ubatch` tokens. Throws TextTooShort when a model's text has
/// fewer than 2 * n_ctx tokens, std::invalid_argument for n_ctx < 4 or KLD
/// requested between different token sequences, and what decode() throws.
TextEvalResult evaluate_text(std::span<TextModel> models, uint32_t n_ctx, uint32_t n_ubatch = 512,
                             const ChunkProgress& progress = {});

/// Logits of one chunk: decodes `chunk[n_ctx]` (first token already BOS)
/// from an empty sequence 0 and returns the rows of positions
/// first .. n_ctx-2 as [n_ctx - 1 - first, n_vocab] row-major.
std::vector<float> chunk_logits(model::Model& m, std::span<const int32_t> chunk, uint32_t first,
                                uint32_t n_ubatch);

}  // namespace wb::compare
