// Sampler: each chain step on small hand-worked vectors, greedy ties,
// seeded reproducibility, and the empirical distribution of the draw.

#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "sampling/sampler.h"

using wb::sampling::Candidate;
using wb::sampling::Sampler;
using wb::sampling::SamplingParams;

namespace {

std::vector<Candidate> cands_of(const std::vector<float>& logits) {
    std::vector<Candidate> c;
    for (size_t i = 0; i < logits.size(); ++i) c.push_back({int32_t(i), logits[i]});
    return c;
}

std::vector<int32_t> ids_of(const std::vector<Candidate>& c) {
    std::vector<int32_t> out;
    for (const Candidate& x : c) out.push_back(x.id);
    return out;
}

/// Logits whose softmax is exactly `p` (up to rounding): ln p.
std::vector<float> logits_for(const std::vector<double>& p) {
    std::vector<float> l;
    for (double x : p) l.push_back(float(std::log(x)));
    return l;
}

SamplingParams plain(float temp, uint64_t seed) {
    SamplingParams s;
    s.temperature = temp;
    s.top_k = 0;
    s.top_p = 1.0f;
    s.min_p = 0.0f;
    s.repeat_penalty = 1.0f;
    s.seed = seed;
    return s;
}

}  // namespace

class TestSampling : public QObject {
    Q_OBJECT
  private slots:
    void repetition_penalty_divides_positive_multiplies_negative() {
        auto c = cands_of({2.0f, -2.0f, 0.5f});
        const std::vector<int32_t> recent = {0, 1, 0};  // 2 is not recent
        Sampler::apply_repetition_penalty(c, recent, 2.0f);
        QCOMPARE(c[0].logit, 1.0f);
        QCOMPARE(c[1].logit, -4.0f);
        QCOMPARE(c[2].logit, 0.5f);
    }

    void top_k_keeps_the_k_largest() {
        auto c = cands_of({1.0f, 3.0f, 2.0f, 0.0f});
        Sampler::top_k(c, 2);
        QCOMPARE(ids_of(c), (std::vector<int32_t>{1, 2}));
        auto all = cands_of({1.0f, 3.0f, 2.0f, 0.0f});
        Sampler::top_k(all, 0);  // off: everything, sorted
        QCOMPARE(ids_of(all), (std::vector<int32_t>{1, 2, 0, 3}));
    }

    void top_p_keeps_smallest_set_reaching_p() {
        const auto l =
            logits_for({0.05, 0.5, 0.15, 0.3});  // sorted: 1 (.5), 3 (.3), 2 (.15), 0 (.05)
        auto a = cands_of(l);
        Sampler::top_p(a, 0.7f);  // .5 + .3 = .8 >= .7
        QCOMPARE(ids_of(a), (std::vector<int32_t>{1, 3}));
        auto b = cands_of(l);
        Sampler::top_p(b, 0.9f);  // .95 >= .9
        QCOMPARE(ids_of(b), (std::vector<int32_t>{1, 3, 2}));
        auto c = cands_of(l);
        Sampler::top_p(c, 0.4f);  // .5 alone
        QCOMPARE(ids_of(c), (std::vector<int32_t>{1}));
    }

    void min_p_keeps_tokens_near_the_best() {
        const auto l = logits_for({0.05, 0.5, 0.15, 0.3});
        auto a = cands_of(l);
        Sampler::min_p(a, 0.2f);  // threshold .1: drops .05
        QCOMPARE(ids_of(a), (std::vector<int32_t>{1, 2, 3}));
        auto b = cands_of(l);
        Sampler::min_p(b, 0.7f);  // threshold .35: only .5
        QCOMPARE(ids_of(b), (std::vector<int32_t>{1}));
    }

    void temperature_zero_is_argmax_with_low_id_ties() {
        Sampler s(plain(0.0f, 1));
        const std::vector<float> l = {1.0f, 3.0f, 3.0f, 2.0f};
        QCOMPARE(s.sample(l), 1);
        QCOMPARE(Sampler::greedy(l), 1);
    }

    void greedy_sees_the_repetition_penalty() {
        SamplingParams p = plain(0.0f, 1);
        p.repeat_penalty = 2.0f;
        Sampler s(p);
        const std::vector<float> l = {2.0f, 1.5f};
        QCOMPARE(s.sample(l), 0);  // nothing recent yet
        QCOMPARE(s.sample(l), 1);  // 0 penalised to 1.0 < 1.5
    }

    void logit_bias_shifts_raw_logits_first() {
        // Hand-worked: {2, 1.5, 1} + bias {+1 on id 2} = {2, 1.5, 2}: the
        // tie goes to the lower id (0); +1.25 makes id 2 the argmax. The
        // penalty then sees the biased logit: id 2 at 2.25 recent, /2 = 1.125
        // < 2, so greedy goes back to 0. A -inf bias bans; ids past the
        // vocabulary are ignored.
        SamplingParams p = plain(0.0f, 1);
        p.logit_bias = {{2, 1.0f}, {7, 100.0f}};
        const std::vector<float> l = {2.0f, 1.5f, 1.0f};
        QCOMPARE(Sampler(p).sample(l), 0);
        p.logit_bias = {{2, 1.25f}};
        p.repeat_penalty = 2.0f;
        Sampler s(p);
        QCOMPARE(s.sample(l), 2);
        QCOMPARE(s.sample(l), 0);
        p = plain(1.0f, 5);
        p.logit_bias = {{0, -INFINITY}, {1, -INFINITY}};
        Sampler banned(p);
        for (int i = 0; i < 20; ++i) QCOMPARE(banned.sample(l), 2);
        p.logit_bias = {{1, NAN}};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Sampler{p});
    }

    void temperature_scales_logits() {
        auto c = cands_of({2.0f, -1.0f});
        Sampler::temperature(c, 0.5f);
        QCOMPARE(c[0].logit, 4.0f);
        QCOMPARE(c[1].logit, -2.0f);
    }

    void same_seed_same_tokens_different_seed_different() {
        const std::vector<float> flat(100, 0.0f);
        auto draw = [&](uint64_t seed) {
            Sampler s(plain(1.0f, seed));
            std::vector<int32_t> out;
            for (int i = 0; i < 50; ++i) out.push_back(s.sample(flat));
            return out;
        };
        QCOMPARE(draw(7), draw(7));
        QVERIFY(draw(7) != draw(8));
        // reset() replays the same stream
        Sampler s(plain(1.0f, 7));
        std::vector<int32_t> first;
        for (int i = 0; i < 50; ++i) first.push_back(s.sample(flat));
        s.reset();
        std::vector<int32_t> again;
        for (int i = 0; i < 50; ++i) again.push_back(s.sample(flat));
        QCOMPARE(first, again);
    }

    void empirical_frequencies_follow_softmax() {
        // p = (.2, .3, .5) at temperature 1; at temperature 0.5 p ~ p^2:
        // (.04, .09, .25) / .38.
        const auto l = logits_for({0.2, 0.3, 0.5});
        for (float t : {1.0f, 0.5f}) {
            Sampler s(plain(t, 12345));
            const int n = 200000;
            std::vector<int> count(3, 0);
            for (int i = 0; i < n; ++i) ++count[size_t(s.sample(l))];
            const std::vector<double> want =
                t == 1.0f ? std::vector<double>{0.2, 0.3, 0.5}
                          : std::vector<double>{0.04 / 0.38, 0.09 / 0.38, 0.25 / 0.38};
            for (size_t k = 0; k < 3; ++k) {
                const double f = double(count[k]) / n;
                // sd of a frequency is sqrt(p(1-p)/n) <= 0.0012; allow ~6 sd
                QVERIFY2(std::fabs(f - want[k]) < 0.007,
                         qPrintable(QString("t %1 token %2: %3 vs %4")
                                        .arg(double(t))
                                        .arg(k)
                                        .arg(f)
                                        .arg(want[k])));
            }
        }
    }

    void filters_apply_before_the_draw() {
        SamplingParams p = plain(100.0f, 3);  // a hot temperature flattens...
        p.top_k = 1;                          // ...but top-k 1 already left one token
        Sampler s(p);
        const std::vector<float> l = {0.0f, 5.0f, 4.9f};
        for (int i = 0; i < 100; ++i) QCOMPARE(s.sample(l), 1);
    }

    void uniform01_is_in_unit_interval() {
        std::mt19937_64 rng(1);
        double lo = 1.0, hi = 0.0;
        for (int i = 0; i < 100000; ++i) {
            const double u = Sampler::uniform01(rng);
            QVERIFY(u >= 0.0 && u < 1.0);
            lo = std::min(lo, u);
            hi = std::max(hi, u);
        }
        QVERIFY(lo < 0.001 && hi > 0.999);
    }

    void bad_settings_throw() {
        SamplingParams p = plain(1.0f, 1);
        p.repeat_penalty = 0.0f;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Sampler{p});
        p.repeat_penalty = 1.0f;
        p.top_p = NAN;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Sampler{p});
        Sampler ok(plain(1.0f, 1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ok.sample(std::vector<float>{}));
    }

    // A model whose logits come out NaN (tests/data/repro/nan_all_output.gguf)
    // used to crash here: min-p kept no candidate and the draw read
    // cands.back() of an empty vector. Now every setting refuses such logits
    // with NonFiniteLogits, counting what it saw, before any chain step.
    void non_finite_logits_are_refused_with_counts() {
        using wb::sampling::NonFiniteLogits;
        const std::vector<float> all_nan(512, NAN);
        SamplingParams chain;  // the defaults: top-k 40, top-p 0.95, min-p 0.05, T 0.8
        for (const SamplingParams& p : {chain, plain(0.0f, 1), plain(1.0f, 1)}) {
            Sampler s(p);
            try {
                s.sample(all_nan);
                QFAIL("NaN logits were sampled");
            } catch (const NonFiniteLogits& e) {
                QCOMPARE(e.n_nan(), size_t{512});
                QVERIFY2(
                    std::string(e.what()).find("512 of 512 values are NaN") != std::string::npos,
                    e.what());
            }
        }
        std::vector<float> one_inf = {0.5f, 1.0f, INFINITY, -2.0f};
        Sampler s(chain);
        try {
            s.sample(one_inf);
            QFAIL("+inf logits were sampled");
        } catch (const NonFiniteLogits& e) {
            QCOMPARE(e.n_pos_inf(), size_t{1});
            QVERIFY2(std::string(e.what()).find("first at token id 2") != std::string::npos,
                     e.what());
        }
        const std::vector<float> all_neg_inf(8, -INFINITY);
        QVERIFY_THROWS_EXCEPTION(NonFiniteLogits, s.sample(all_neg_inf));
        // A single -inf is a masked token, not an error: the draw avoids it.
        const std::vector<float> masked = {-INFINITY, 0.0f, -INFINITY};
        Sampler g(plain(0.0f, 1));
        QCOMPARE(g.sample(masked), 1);
        Sampler d(chain);
        QCOMPARE(d.sample(masked), 1);
    }
};

QTEST_GUILESS_MAIN(TestSampling)
#include "test_sampling.moc"
