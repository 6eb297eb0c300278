#include "speculative/verify.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace wb::speculative {

namespace {

/// Inverse-CDF draw from unnormalized weights w (sum > 0), id order.
int32_t draw(std::span<const double> w, double sum, double u) {
    const double target = u * sum;
    double cum = 0.0;
    int32_t last = -1;
    for (size_t j = 0; j < w.size(); ++j) {
        if (w[j] <= 0.0) continue;
        cum += w[j];
        last = static_cast<int32_t>(j);
        if (target < cum) return last;
    }
    return last;  // rounding left cum just below target: the last token with mass
}

}  // namespace

int32_t sample_residual(std::span<const double> p, std::span<const double> q, double u) {
    std::vector<double> r(p.size());  // [n_vocab] max(0, p - q)
    double sum = 0.0;
    for (size_t j = 0; j < p.size(); ++j) sum += (r[j] = std::max(0.0, p[j] - q[j]));
    if (sum > 0.0) return draw(r, sum, u);
    double sp = 0.0;
    for (double x : p) sp += x;
    return draw(p, sp, u);
}

Verdict verify(sampling::Sampler& sampler, std::span<const float> logits, uint32_t n_vocab,
               std::span<const int32_t> draft, std::span<const double> q) {
    const size_t k = draft.size();
    if (n_vocab == 0) throw std::invalid_argument("speculative::verify: n_vocab is 0");
    if (logits.size() != (k + 1) * n_vocab) {
        throw std::invalid_argument("speculative::verify: logits hold " +
                                    std::to_string(logits.size()) + " values, expected (k + 1) * " +
                                    "n_vocab = " + std::to_string((k + 1) * n_vocab));
    }
    if (!q.empty() && q.size() != k * n_vocab) {
        throw std::invalid_argument(
            "speculative::verify: q holds " + std::to_string(q.size()) +
            " values, expected 0 or k * n_vocab = " + std::to_string(k * n_vocab));
    }
    for (size_t i = 0; i < k; ++i) {
        if (draft[i] < 0 || static_cast<uint32_t>(draft[i]) >= n_vocab) {
            throw std::invalid_argument("speculative::verify: draft token " + std::to_string(i) +
                                        " is id " + std::to_string(draft[i]) + ", outside [0, " +
                                        std::to_string(n_vocab) + ")");
        }
    }
    Verdict v;
    std::vector<double> one_hot(n_vocab, 0.0);  // q_i of a deterministic drafter
    for (size_t i = 0; i < k; ++i) {
        const std::span<const float> row = logits.subspan(i * n_vocab, n_vocab);
        const std::vector<double> p = sampler.distribution(row);  // [n_vocab]
        const auto x = static_cast<size_t>(draft[i]);
        std::span<const double> qi;
        if (q.empty()) {
            std::fill(one_hot.begin(), one_hot.end(), 0.0);
            one_hot[x] = 1.0;
            qi = one_hot;
        } else {
            qi = q.subspan(i * n_vocab, n_vocab);
        }
        // min(1, p/q): no draw when the ratio is 0 or >= 1 (greedy draws nothing).
        bool keep = p[x] > 0.0 && p[x] >= qi[x];
        if (!keep && p[x] > 0.0) keep = sampler.draw_uniform() * qi[x] < p[x];
        if (keep) {
            v.tokens.push_back(draft[i]);
            sampler.accept(draft[i]);
            ++v.n_accepted;
            continue;
        }
        // Residual: one draw, except when only one token has mass.
        size_t n_mass = 0;
        for (size_t j = 0; j < n_vocab; ++j) n_mass += p[j] > qi[j] ? 1 : 0;
        const double u = n_mass > 1 ? sampler.draw_uniform() : 0.0;
        const int32_t y = sample_residual(p, qi, u);
        v.tokens.push_back(y);
        sampler.accept(y);
        return v;
    }
    v.tokens.push_back(sampler.sample(logits.subspan(k * n_vocab, n_vocab)));
    return v;
}

}  // namespace wb::speculative
