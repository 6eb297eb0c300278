#include "compare/text_eval.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "compare/logits_math.h"
#include "metrics/percentile.h"

namespace wb::compare {

std::vector<float> chunk_logits(model::Model& m, std::span<const int32_t> chunk, uint32_t first,
                                uint32_t n_ubatch) {
    const uint32_t n_ctx = static_cast<uint32_t>(chunk.size());
    const size_t n_vocab = m.hparams().n_vocab;
    std::vector<float> out;  // [n_ctx - 1 - first, n_vocab]
    out.reserve(static_cast<size_t>(n_ctx - 1 - first) * n_vocab);
    std::vector<float> logits;  // [n_outputs of one ubatch, n_vocab]
    model::Batch batch;
    m.seq_rm(0);
    for (uint32_t start = 0; start < n_ctx; start += n_ubatch) {
        const uint32_t end = std::min(n_ctx, start + n_ubatch);
        batch.clear();
        for (uint32_t p = start; p < end; ++p) {
            batch.add(chunk[p], static_cast<int32_t>(p), 0, p >= first && p + 1 < n_ctx);
        }
        m.decode(batch, logits);
        out.insert(out.end(), logits.begin(),
                   logits.begin() + static_cast<std::ptrdiff_t>(batch.n_outputs() * n_vocab));
    }
    m.seq_rm(0);
    return out;
}

TextEvalResult evaluate_text(std::span<TextModel> models, uint32_t n_ctx, uint32_t n_ubatch,
                             const ChunkProgress& progress) {
    if (n_ctx < 4)
        throw std::invalid_argument("perplexity window of " + std::to_string(n_ctx) +
                                    " tokens is too small (need at least 4)");
    if (models.empty()) throw std::invalid_argument("evaluate_text: no models");
    uint32_t n_chunks = UINT32_MAX;
    for (size_t i = 0; i < models.size(); ++i) {
        const size_t n = models[i].tokens.size();
        if (n < 2ull * n_ctx) {
            throw TextTooShort(
                "the text has " + std::to_string(n) + " tokens (model " + std::to_string(i + 1) +
                "), too short for perplexity with a " + std::to_string(n_ctx) +
                "-token window: llama.cpp's rule needs at "
                "least 2 x n_ctx = " +
                std::to_string(2ull * n_ctx) + " tokens; use a longer text or a smaller window");
        }
        n_chunks = std::min<uint32_t>(n_chunks, static_cast<uint32_t>(n / n_ctx));
        if (models[i].kld_with_reference && models[i].tokens != models[0].tokens) {
            throw std::invalid_argument("KL divergence needs the same tokens as the reference");
        }
    }
    const uint32_t first = n_ctx / 2;
    const uint32_t n_scored_per_chunk = n_ctx - 1 - first;

    struct Acc {
        double nll = 0, nll2 = 0;
        uint64_t n = 0;
        std::vector<double> kld;  // [positions] per-position KLD
        double kld_sum = 0, kld_sum2 = 0;
        uint64_t same_top = 0;
    };
    std::vector<Acc> acc(models.size());
    TextEvalResult res;
    res.ppl.resize(models.size());

    std::vector<std::vector<double>> ref_logp(n_scored_per_chunk);  // [scored rows][n_vocab] of A
    std::vector<int32_t> ref_top(n_scored_per_chunk);               // [scored rows] arg-max of A
    std::vector<double> logq;                                       // [n_vocab]
    for (uint32_t c = 0; c < n_chunks; ++c) {
        for (size_t mi = 0; mi < models.size(); ++mi) {
            TextModel& tm = models[mi];
            std::vector<int32_t> chunk(
                tm.tokens.begin() + static_cast<std::ptrdiff_t>(c) * n_ctx,
                tm.tokens.begin() + static_cast<std::ptrdiff_t>(c + 1) * n_ctx);
            chunk[0] = tm.bos;
            const size_t n_vocab = tm.model->hparams().n_vocab;
            const std::vector<float> logits = chunk_logits(*tm.model, chunk, first, n_ubatch);
            Acc& a = acc[mi];
            for (uint32_t j = 0; j < n_scored_per_chunk; ++j) {
                const std::span<const float> row(logits.data() + j * n_vocab, n_vocab);
                const double v = nll(row, chunk[first + j + 1]);
                a.nll += v;
                a.nll2 += v * v;
                ++a.n;
                if (mi == 0) {
                    log_softmax(row, ref_logp[j]);
                    ref_top[j] = argmax(row);
                }
                if (tm.kld_with_reference) {
                    log_softmax(row, logq);
                    const double k = kl_divergence(ref_logp[j], logq);
                    a.kld.push_back(k);
                    a.kld_sum += k;
                    a.kld_sum2 += k * k;
                    a.same_top += argmax(row) == ref_top[j] ? 1 : 0;
                }
            }
            res.ppl[mi].running_ppl.push_back(std::exp(a.nll / static_cast<double>(a.n)));
        }
        if (progress) progress(c + 1, n_chunks);
    }

    res.kld.resize(models.size());
    for (size_t mi = 0; mi < models.size(); ++mi) {
        const Acc& a = acc[mi];
        PerplexityResult& p = res.ppl[mi];
        const double n = static_cast<double>(a.n);
        p.mean_nll = a.nll / n;
        p.ppl = std::exp(p.mean_nll);
        const double var = a.nll2 / n - p.mean_nll * p.mean_nll;
        p.ppl_error = a.n > 1 ? p.ppl * std::sqrt(std::max(0.0, var) / (n - 1)) : 0;
        p.n_scored = a.n;
        p.n_chunks = n_chunks;
        p.n_ctx = n_ctx;
        p.n_text_tokens = models[mi].tokens.size();
        if (!models[mi].kld_with_reference) continue;
        KldResult k;
        k.n = a.kld.size();
        k.mean = a.kld_sum / static_cast<double>(k.n);
        const double kvar = a.kld_sum2 / static_cast<double>(k.n) - k.mean * k.mean;
        k.mean_error = k.n > 1 ? std::sqrt(std::max(0.0, kvar) / static_cast<double>(k.n - 1)) : 0;
        std::vector<double> sorted = a.kld;
        if (std::any_of(sorted.begin(), sorted.end(), [](double x) { return std::isnan(x); })) {
            // Non-finite logits somewhere: no order statistic means anything
            // (and sorting NaN is undefined); every figure reads NaN.
            k.mean = k.mean_error = k.median = k.p99 = k.max = k.min = std::nan("");
        } else {
            std::sort(sorted.begin(), sorted.end());
            k.median = metrics::percentile_sorted(sorted, 50);
            k.p99 = metrics::percentile_sorted(sorted, 99);
            k.max = sorted.back();
            k.min = sorted.front();
        }
        k.same_top = a.same_top;
        res.kld[mi] = k;
    }
    return res;
}

}  // namespace wb::compare
