// token_logprobs / log_sum_exp (sampling/logprobs.h) on small vectors whose
// log-softmax was worked by hand and checked in Python float64
// (math.log/math.exp): ordinary logits, logits so large or so small that a
// naive float exp overflows or underflows, a -inf (masked) token, ties in
// the top-N, and the refusals.

#include <QtTest>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sampling/logprobs.h"

using wb::sampling::log_sum_exp;
using wb::sampling::token_logprobs;
using wb::sampling::TokenLogprobs;

namespace {

/// |got - want| within float rounding of a value of size |want|.
bool near(float got, double want) {
    return std::fabs(double(got) - want) <= 1e-6 * std::max(1.0, std::fabs(want));
}

}  // namespace

class TestLogprobs : public QObject {
    Q_OBJECT

  private slots:
    void small_vector_by_hand() {
        // log(e^1 + e^2 + e^3) = 3 + log(1 + e^-1 + e^-2)
        //                      = 3 + log(1 + 0.3678794 + 0.1353353) = 3.4076059644443806
        const std::vector<float> l = {1.0f, 2.0f, 3.0f};
        QVERIFY(std::fabs(log_sum_exp(l) - 3.4076059644443806) < 1e-12);
        const TokenLogprobs r = token_logprobs(l, 1, 3);
        QCOMPARE(r.token, 1);
        QVERIFY(near(r.logprob, -1.4076059644443806));
        QCOMPARE(r.top.size(), size_t(3));
        QCOMPARE(r.top[0].token, 2);
        QCOMPARE(r.top[1].token, 1);
        QCOMPARE(r.top[2].token, 0);
        QVERIFY(near(r.top[0].logprob, -0.4076059644443806));
        QVERIFY(near(r.top[1].logprob, -1.4076059644443806));
        QVERIFY(near(r.top[2].logprob, -2.4076059644443806));
        // n_top 0: the chosen token only.
        const TokenLogprobs none = token_logprobs(l, 0, 0);
        QVERIFY(none.top.empty());
        QVERIFY(near(none.logprob, -2.4076059644443806));
        // More than the vocabulary: all of it.
        QCOMPARE(token_logprobs(l, 0, 20).top.size(), size_t(3));
    }

    void large_logits_do_not_overflow() {
        // float exp(1000) is inf: the max is subtracted first.
        // log(2 e^1000 + e^999) = 1000 + log(2 + e^-1) = 1000.8619948040582;
        // the -inf token has probability 0.
        const std::vector<float> l = {1000.0f, 1000.0f, 999.0f, -INFINITY};
        QVERIFY(std::fabs(log_sum_exp(l) - 1000.8619948040582) < 1e-9);
        const TokenLogprobs r = token_logprobs(l, 2, 4);
        QVERIFY(near(r.logprob, -1.861994804058213));
        QCOMPARE(r.top.size(), size_t(4));
        QCOMPARE(r.top[0].token, 0);  // tie with 1: the lower id first
        QCOMPARE(r.top[1].token, 1);
        QVERIFY(near(r.top[0].logprob, -0.861994804058213));
        QVERIFY(near(r.top[1].logprob, -0.861994804058213));
        QCOMPARE(r.top[2].token, 2);
        QCOMPARE(r.top[3].token, 3);
        QVERIFY(std::isinf(r.top[3].logprob) && r.top[3].logprob < 0);
    }

    void small_logits_do_not_underflow() {
        // float exp(-1000) is 0, so a naive log(sum) is -inf.
        // log(e^-1000 + e^-1000.5) = -1000 + log(1 + e^-0.5) = -999.5259230158199.
        const std::vector<float> l = {-1000.0f, -1000.5f};
        QVERIFY(std::fabs(log_sum_exp(l) - -999.5259230158199) < 1e-9);
        const TokenLogprobs r = token_logprobs(l, 1, 1);
        QVERIFY(near(r.logprob, -0.9740769841801011));
        QCOMPARE(r.top.size(), size_t(1));
        QCOMPARE(r.top[0].token, 0);
        QVERIFY(near(r.top[0].logprob, -0.47407698418010114));
    }

    void ties_go_to_the_lower_id() {
        // Three equal best logits; top-2 keeps ids 1 and 2, not 3.
        // log(1 + 3 e^5 + e^-2) = 6.101158986067908.
        const std::vector<float> l = {0.0f, 5.0f, 5.0f, 5.0f, -2.0f};
        const TokenLogprobs r = token_logprobs(l, 3, 2);
        QVERIFY(near(r.logprob, -1.101158986067908));
        QCOMPARE(r.top.size(), size_t(2));
        QCOMPARE(r.top[0].token, 1);
        QCOMPARE(r.top[1].token, 2);
        QVERIFY(near(r.top[1].logprob, -1.101158986067908));
        // The same ties reached from the other end of the vector.
        const std::vector<float> rev = {-2.0f, 5.0f, 5.0f, 5.0f, 0.0f};
        const TokenLogprobs q = token_logprobs(rev, 0, 5);
        QCOMPARE(q.top[0].token, 1);
        QCOMPARE(q.top[1].token, 2);
        QCOMPARE(q.top[2].token, 3);
        QCOMPARE(q.top[3].token, 4);
        QCOMPARE(q.top[4].token, 0);
        QVERIFY(near(q.logprob, -8.101158986067908));
    }

    void bad_input_is_refused() {
        const std::vector<float> l = {1.0f, 2.0f};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, token_logprobs(l, 2, 0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, token_logprobs(l, -1, 0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, token_logprobs(l, 0, 21));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, token_logprobs(l, 0, -1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log_sum_exp(std::vector<float>{}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 log_sum_exp(std::vector<float>{-INFINITY, -INFINITY}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log_sum_exp(std::vector<float>{0.0f, NAN}));
        try {
            token_logprobs(l, 7, 0);
            QFAIL("no throw");
        } catch (const std::invalid_argument& e) {
            QVERIFY2(std::string(e.what()).find("token 7") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestLogprobs)
#include "test_logprobs.moc"
