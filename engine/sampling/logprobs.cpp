#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace wb::sampling {

double log_sum_exp(std::span<const float> logits) {
    if (logits.empty()) throw std::invalid_argument("log_sum_exp: empty logits");
    double mx = -std::numeric_limits<double>::infinity();
    for (const float x : logits) {
        if (std::isnan(x) || (std::isinf(x) && x > 0))
            throw std::invalid_argument("log_sum_exp: logits hold NaN or +inf");
        mx = std::max(mx, static_cast<double>(x));
    }
    if (std::isinf(mx)) throw std::invalid_argument("log_sum_exp: every logit is -inf");
    double sum = 0.0;
    for (const float x : logits) sum += std::exp(static_cast<double>(x) - mx);  // exp(-inf) = 0
    return mx + std::log(sum);
}

TokenLogprobs token_logprobs(std::span<const float> logits, int32_t token, int32_t n_top) {
    const auto n = static_cast<int64_t>(logits.size());
    if (token < 0 || token >= n)
        throw std::invalid_argument("token_logprobs: token " + std::to_string(token) +
                                    " is outside the vocabulary of " + std::to_string(n));
    if (n_top < 0 || n_top > kMaxTopLogprobs)
        throw std::invalid_argument("token_logprobs: n_top must be in 0.." +
                                    std::to_string(kMaxTopLogprobs) + ", got " +
                                    std::to_string(n_top));
    const double lse = log_sum_exp(logits);
    auto logprob = [&](int32_t id) {
        return static_cast<float>(static_cast<double>(logits[static_cast<size_t>(id)]) - lse);
    };
    TokenLogprobs out;
    out.token = token;
    out.logprob = logprob(token);

    // "a before b": larger logit, or the same logit and a lower id.
    auto before = [&](int32_t a, int32_t b) {
        const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
        return la != lb ? la > lb : a < b;
    };
    // The n_top best ids so far, kept sorted (n_top <= 20: insertion is cheap).
    std::vector<int32_t> best;
    best.reserve(static_cast<size_t>(n_top) + 1);
    const auto k = static_cast<size_t>(std::min<int64_t>(n_top, n));
    for (int32_t id = 0; k > 0 && id < n; ++id) {
        if (best.size() == k && !before(id, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), id, before), id);
        if (best.size() > k) best.pop_back();
    }
    out.top.reserve(best.size());
    for (const int32_t id : best) out.top.push_back({id, logprob(id)});
    return out;
}

}  // namespace wb::sampling
