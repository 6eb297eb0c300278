#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace wb::sampling {

namespace {

bool by_logit_desc(const Candidate& a, const Candidate& b) {
    if (a.logit != b.logit) return a.logit > b.logit;
    return a.id < b.id;
}

}  // namespace

NonFiniteLogits::NonFiniteLogits(size_t n_nan, size_t n_pos_inf, size_t n_vocab, int32_t first_id)
    : std::runtime_error(
          n_nan == 0 && n_pos_inf == 0
              ? "logits are not finite: all " + std::to_string(n_vocab) + " values are -inf"
              : "logits are not finite: " + std::to_string(n_nan) + " of " +
                    std::to_string(n_vocab) + " values are NaN, " + std::to_string(n_pos_inf) +
                    " are +inf (first at token id " + std::to_string(first_id) + ")"),
      n_nan_(n_nan),
      n_pos_inf_(n_pos_inf) {}

void check_finite_logits(std::span<const float> logits) {
    size_t n_nan = 0, n_pos_inf = 0, n_neg_inf = 0;
    int32_t first = -1;
    for (size_t i = 0; i < logits.size(); ++i) {
        const float x = logits[i];
        if (std::isfinite(x)) continue;
        if (std::isnan(x))
            ++n_nan;
        else if (x > 0)
            ++n_pos_inf;
        else {
            ++n_neg_inf;
            continue;
        }
        if (first < 0) first = static_cast<int32_t>(i);
    }
    if (n_nan || n_pos_inf || (!logits.empty() && n_neg_inf == logits.size()))
        throw NonFiniteLogits(n_nan, n_pos_inf, logits.size(), first);
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) {
    if (std::isnan(params.temperature) || std::isnan(params.top_p) || std::isnan(params.min_p) ||
        std::isnan(params.repeat_penalty)) {
        throw std::invalid_argument("sampling: NaN setting");
    }
    for (const auto& [id, bias] : params.logit_bias)
        if (std::isnan(bias))
            throw std::invalid_argument("sampling: NaN logit bias for token " + std::to_string(id));
    if (params.repeat_penalty <= 0.0f) {
        throw std::invalid_argument("sampling: repeat_penalty must be > 0");
    }
}

void Sampler::reset() {
    recent_.clear();
    rng_.seed(params_.seed);
}

void Sampler::accept(int32_t token) {
    if (params_.repeat_last_n == 0) return;
    recent_.push_back(token);
    if (params_.repeat_last_n > 0 && recent_.size() > size_t(params_.repeat_last_n)) {
        recent_.pop_front();
    }
}

std::vector<Candidate> Sampler::chain(std::span<const float> logits, std::vector<double>& p) const {
    if (logits.empty()) throw std::invalid_argument("sampling: empty logits");
    check_finite_logits(logits);
    std::vector<Candidate> cands(logits.size());  // [n_vocab] then fewer
    for (size_t i = 0; i < logits.size(); ++i) cands[i] = {static_cast<int32_t>(i), logits[i]};
    // First in the chain, as in llama.cpp (common_sampler_init).
    for (const auto& [id, bias] : params_.logit_bias)
        if (id >= 0 && static_cast<size_t>(id) < cands.size())
            cands[static_cast<size_t>(id)].logit += bias;

    const std::vector<int32_t> recent(recent_.begin(), recent_.end());
    apply_repetition_penalty(cands, recent, params_.repeat_penalty);

    if (params_.temperature <= 0.0f) {
        // Greedy on the penalised logits (candidates are still in id order).
        std::vector<float> penalised(cands.size());
        for (size_t i = 0; i < cands.size(); ++i) penalised[i] = cands[i].logit;
        const Candidate best = cands[static_cast<size_t>(greedy(penalised))];
        p = {1.0};
        return {best};
    }
    top_k(cands, params_.top_k);
    top_p(cands, params_.top_p);
    min_p(cands, params_.min_p);
    temperature(cands, params_.temperature);
    p = softmax(cands);  // [n_candidates]
    return cands;
}

int32_t Sampler::sample(std::span<const float> logits) {
    std::vector<double> p;
    const std::vector<Candidate> cands = chain(logits, p);
    int32_t token = cands.back().id;   // if rounding leaves cum < u, the last one
    if (params_.temperature > 0.0f) {  // greedy draws nothing
        const double u = uniform01(rng_);
        double cum = 0.0;
        for (size_t i = 0; i < cands.size(); ++i) {
            cum += p[i];
            if (u < cum) {
                token = cands[i].id;
                break;
            }
        }
    }
    accept(token);
    return token;
}

std::vector<double> Sampler::distribution(std::span<const float> logits) const {
    std::vector<double> p;
    const std::vector<Candidate> cands = chain(logits, p);
    std::vector<double> out(logits.size(), 0.0);
    for (size_t i = 0; i < cands.size(); ++i) out[static_cast<size_t>(cands[i].id)] = p[i];
    return out;
}

void Sampler::apply_repetition_penalty(std::vector<Candidate>& cands,
                                       std::span<const int32_t> recent, float penalty) {
    if (penalty == 1.0f || recent.empty()) return;
    const std::unordered_set<int32_t> seen(recent.begin(), recent.end());
    for (Candidate& c : cands) {
        if (!seen.count(c.id)) continue;
        c.logit = c.logit <= 0.0f ? c.logit * penalty : c.logit / penalty;
    }
}

void Sampler::top_k(std::vector<Candidate>& cands, int32_t k) {
    if (k > 0 && size_t(k) < cands.size()) {
        std::partial_sort(cands.begin(), cands.begin() + k, cands.end(), by_logit_desc);
        cands.resize(size_t(k));
    } else {
        std::sort(cands.begin(), cands.end(), by_logit_desc);
    }
}

void Sampler::top_p(std::vector<Candidate>& cands, float p) {
    if (p >= 1.0f || cands.empty()) return;
    std::sort(cands.begin(), cands.end(), by_logit_desc);
    const std::vector<double> prob = softmax(cands);
    double cum = 0.0;
    size_t keep = cands.size();
    for (size_t i = 0; i < cands.size(); ++i) {
        cum += prob[i];
        if (cum >= double{p}) {
            keep = i + 1;
            break;
        }
    }
    cands.resize(std::max<size_t>(keep, 1));
}

void Sampler::min_p(std::vector<Candidate>& cands, float min_p) {
    if (min_p <= 0.0f || cands.empty()) return;
    float max_logit = -INFINITY;
    for (const Candidate& c : cands) max_logit = std::max(max_logit, c.logit);
    // p_i >= min_p * p_max  <=>  logit_i >= max_logit + ln(min_p)
    const double threshold = double{max_logit} + std::log(double{min_p});
    std::vector<Candidate> kept;
    for (const Candidate& c : cands) {
        if (double{c.logit} >= threshold) kept.push_back(c);
    }
    cands = std::move(kept);  // never empty: the max itself passes
}

void Sampler::temperature(std::vector<Candidate>& cands, float t) {
    for (Candidate& c : cands) c.logit /= t;
}

std::vector<double> Sampler::softmax(const std::vector<Candidate>& cands) {
    std::vector<double> p(cands.size());
    double mx = -INFINITY;
    for (const Candidate& c : cands) mx = std::max(mx, double{c.logit});
    double sum = 0.0;
    for (size_t i = 0; i < cands.size(); ++i) sum += (p[i] = std::exp(double{cands[i].logit} - mx));
    for (double& x : p) x /= sum;
    return p;
}

int32_t Sampler::greedy(std::span<const float> logits) {
    size_t best = 0;
    for (size_t i = 1; i < logits.size(); ++i) {
        if (logits[i] > logits[best]) best = i;
    }
    return static_cast<int32_t>(best);
}

double Sampler::uniform01(std::mt19937_64& rng) {
    // 53 random mantissa bits -> k * 2^-53, exactly representable, in [0, 1).
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

}  // namespace wb::sampling
