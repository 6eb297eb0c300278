#include "compare/logits_math.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace wb::compare {

void log_softmax(std::span<const float> logits, std::vector<double>& out) {
    if (logits.empty()) throw std::invalid_argument("log_softmax: empty logits");
    double max = logits[0];
    for (float x : logits) max = std::max(max, static_cast<double>(x));
    double sum = 0.0;
    for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
    const double log_z = max + std::log(sum);
    out.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - log_z;
}

double nll(std::span<const float> logits, int32_t token) {
    if (token < 0 || static_cast<size_t>(token) >= logits.size()) {
        throw std::out_of_range("nll: token " + std::to_string(token) +
                                " outside a vocabulary of " + std::to_string(logits.size()));
    }
    double max = logits[0];
    for (float x : logits) max = std::max(max, static_cast<double>(x));
    double sum = 0.0;
    for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
    return std::log(sum) + max - static_cast<double>(logits[static_cast<size_t>(token)]);
}

double kl_divergence(std::span<const double> logp, std::span<const double> logq) {
    if (logp.size() != logq.size()) {
        throw std::invalid_argument("kl_divergence: vocabularies of " +
                                    std::to_string(logp.size()) + " and " +
                                    std::to_string(logq.size()) + " tokens");
    }
    double kl = 0.0;
    for (size_t i = 0; i < logp.size(); ++i) {
        const double p = std::exp(logp[i]);
        if (p == 0.0) continue;  // 0 * log(0/q) = 0
        kl += p * (logp[i] - logq[i]);
    }
    // NaN stays NaN (non-finite logits in either model): clamping it to 0
    // would make a broken variant look identical to the reference.
    if (std::isnan(kl)) return kl;
    return kl > 0.0 ? kl : 0.0;
}

int32_t argmax(std::span<const float> logits) {
    if (logits.empty()) throw std::invalid_argument("argmax: empty logits");
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i) {
        if (logits[i] > logits[best]) best = i;  // strict: ties keep the lower id
    }
    return static_cast<int32_t>(best);
}

}  // namespace wb::compare
