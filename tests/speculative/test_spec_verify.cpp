// speculative::verify: greedy verification keeps the draft while it equals
// the target's arg-max (hand-worked rows); speculative sampling emits
// tokens distributed as the target's own sampler would (chi-square over
// many fixed seeds on an 8-token vocabulary, for a one-hot draft and for a
// full draft distribution q deliberately unlike p). The expected p is
// computed here in double from the documented chain (top-k, top-p at
// temperature 1, min-p, temperature), not by the sampler.

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "speculative/verify.h"

using wb::sampling::Sampler;
using wb::sampling::SamplingParams;
using wb::speculative::verify;

namespace {

constexpr uint32_t kV = 8;
const std::vector<float> kLogits{1.0f, 2.5f, 0.3f, 2.0f, -1.0f, 1.7f, 0.0f, -3.0f};

SamplingParams params() {
    SamplingParams s;
    s.temperature = 0.7f;
    s.top_k = 6;      // drops ids 4 and 7
    s.top_p = 0.95f;  // of the six: cumulative 0.405 0.650 0.832 0.922 0.967 -> keeps five
    s.min_p = 0.05f;  // threshold 2.5 + ln 0.05 = -0.5: keeps all five
    s.repeat_penalty = 1.0f;
    return s;
}

/// The target's p for kLogits under params(), in double, by hand.
std::vector<double> expected_p() {
    std::vector<int> order(kV);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [](int a, int b) { return kLogits[a] > kLogits[b]; });
    order.resize(6);  // top-k
    double z = 0;
    for (int i : order) z += std::exp(double(kLogits[i]));
    double cum = 0;
    size_t keep = 0;
    while (keep < order.size()) {
        cum += std::exp(double(kLogits[order[keep]])) / z;
        ++keep;
        if (cum >= 0.95) break;
    }
    order.resize(keep);
    std::vector<double> p(kV, 0.0);
    double zt = 0;
    for (int i : order) zt += std::exp(double(kLogits[i]) / 0.7);
    for (int i : order) p[size_t(i)] = std::exp(double(kLogits[i]) / 0.7) / zt;
    return p;
}

/// Pearson's statistic of `count` against n * p over the support of p;
/// +inf when a token outside the support was seen.
double chi_square(const std::vector<int>& count, const std::vector<double>& p) {
    const double n = std::accumulate(count.begin(), count.end(), 0.0);
    double x2 = 0;
    for (size_t j = 0; j < p.size(); ++j) {
        if (p[j] == 0.0) {
            if (count[j] > 0) return INFINITY;
            continue;
        }
        const double e = n * p[j];
        x2 += (count[j] - e) * (count[j] - e) / e;
    }
    return x2;
}

// 0.999 quantile of chi-square with 4 degrees of freedom (5 tokens in p's
// support): tables, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.4.
constexpr double kChi2Df4At999 = 18.467;

}  // namespace

class TestSpecVerify : public QObject {
    Q_OBJECT
  private slots:
    void expected_support_is_five_tokens() {
        const auto p = expected_p();
        QCOMPARE(int(std::count_if(p.begin(), p.end(), [](double x) { return x > 0; })), 5);
        // The sampler's own distribution agrees (it is what verify uses).
        Sampler s(params());
        const auto got = s.distribution(kLogits);
        for (size_t j = 0; j < kV; ++j) QVERIFY(std::abs(got[j] - p[j]) < 1e-6);
    }

    void greedy_keeps_the_matching_prefix() {
        SamplingParams g;
        g.temperature = 0.0f;
        // Rows' arg-maxes: 2, 5, 1, 7.
        std::vector<float> rows(4 * kV, 0.0f);
        rows[0 * kV + 2] = 3;
        rows[1 * kV + 5] = 3;
        rows[2 * kV + 1] = 3;
        rows[3 * kV + 7] = 3;
        Sampler s(g);
        auto v = verify(s, rows, kV, std::vector<int32_t>{2, 5, 6});
        QCOMPARE(v.n_accepted, 2u);
        QCOMPARE(v.tokens, (std::vector<int32_t>{2, 5, 1}));
        v = verify(s, rows, kV, std::vector<int32_t>{2, 5, 1});
        QCOMPARE(v.n_accepted, 3u);
        QCOMPARE(v.tokens, (std::vector<int32_t>{2, 5, 1, 7}));  // bonus from the last row
        v = verify(s, std::span<const float>(rows).first(kV), kV, std::vector<int32_t>{});
        QCOMPARE(v.tokens, (std::vector<int32_t>{2}));  // no draft: plain greedy
        v = verify(s, rows, kV, std::vector<int32_t>{0, 5, 1});
        QCOMPARE(v.n_accepted, 0u);
        QCOMPARE(v.tokens, (std::vector<int32_t>{2}));
    }

    void greedy_sees_the_penalty_of_kept_tokens() {
        // Repetition penalty 4: after 2 is kept, row 1 (2: 3.0, 5: 1.0)
        // prefers 5 (2's logit becomes 0.75), as plain decoding would.
        SamplingParams g;
        g.temperature = 0.0f;
        g.repeat_penalty = 4.0f;
        std::vector<float> rows(2 * kV, 0.0f);
        rows[0 * kV + 2] = 3;
        rows[1 * kV + 2] = 3;
        rows[1 * kV + 5] = 1;
        Sampler s(g);
        const auto v = verify(s, rows, kV, std::vector<int32_t>{2});
        QCOMPARE(v.tokens, (std::vector<int32_t>{2, 5}));
    }

    void bad_sizes_throw() {
        Sampler s(params());
        std::vector<float> rows(2 * kV, 0.0f);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 verify(s, rows, kV, std::vector<int32_t>{1, 2}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 verify(s, rows, kV, std::vector<int32_t>{8}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, verify(s, rows, kV, std::vector<int32_t>{1},
                                                               std::vector<double>(3, 0.1)));
    }

    void one_hot_draft_keeps_the_target_distribution() {
        const auto p = expected_p();
        // A likely draft token (1), a middling one (0) and one p excludes (4).
        for (int32_t x : {1, 0, 4}) {
            std::vector<int> first(kV, 0), second(kV, 0);
            std::vector<float> rows;
            for (int r = 0; r < 3; ++r) rows.insert(rows.end(), kLogits.begin(), kLogits.end());
            for (uint64_t seed = 0; seed < 40000; ++seed) {
                SamplingParams sp = params();
                sp.seed = seed;
                Sampler s(sp);
                const auto v = verify(s, rows, kV, std::vector<int32_t>{x, x});
                ++first[size_t(v.tokens[0])];
                if (v.tokens.size() > 1) ++second[size_t(v.tokens[1])];
            }
            const double x1 = chi_square(first, p);
            QVERIFY2(x1 < kChi2Df4At999, qPrintable(QString("draft %1: X2 %2").arg(x).arg(x1)));
            if (p[size_t(x)] == 0.0) {  // never kept, so never a second token
                QCOMPARE(std::accumulate(second.begin(), second.end(), 0), 0);
                continue;
            }
            const double x2 = chi_square(second, p);
            QVERIFY2(x2 < kChi2Df4At999, qPrintable(QString("draft %1: 2nd X2 %2").arg(x).arg(x2)));
        }
    }

    void full_q_draft_keeps_the_target_distribution() {
        const auto p = expected_p();
        // q puts mass where p has none and little where p has most.
        const std::vector<double> q1{0.05, 0.05, 0.4, 0.05, 0.2, 0.05, 0.1, 0.1};
        std::vector<double> q(q1);
        q.insert(q.end(), q1.begin(), q1.end());
        std::vector<float> rows;
        for (int r = 0; r < 3; ++r) rows.insert(rows.end(), kLogits.begin(), kLogits.end());
        std::vector<int> first(kV, 0), second(kV, 0);
        std::discrete_distribution<int32_t> from_q(q1.begin(), q1.end());
        std::mt19937_64 draft_rng(12345);
        for (uint64_t seed = 0; seed < 40000; ++seed) {
            SamplingParams sp = params();
            sp.seed = seed;
            Sampler s(sp);
            const std::vector<int32_t> draft{from_q(draft_rng), from_q(draft_rng)};
            const auto v = verify(s, rows, kV, draft, q);
            ++first[size_t(v.tokens[0])];
            if (v.tokens.size() > 1) ++second[size_t(v.tokens[1])];
        }
        const double x1 = chi_square(first, p), x2 = chi_square(second, p);
        QVERIFY2(x1 < kChi2Df4At999, qPrintable(QString("X2 %1").arg(x1)));
        QVERIFY2(x2 < kChi2Df4At999, qPrintable(QString("2nd X2 %1").arg(x2)));
    }
};

QTEST_GUILESS_MAIN(TestSpecVerify)
#include "test_spec_verify.moc"
