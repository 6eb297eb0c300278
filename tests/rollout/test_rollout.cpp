// Canary rollout tests. Expected values are worked by hand from the
// definitions (numpy's "linear" percentile; the golden-ratio sequence and
// the FNV-1a + splitmix64 hash, computed independently in Python), never
// taken from the code under test.

#include <QtTest>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "rollout/judge.h"
#include "rollout/rollout.h"
#include "rollout/router.h"

using namespace wb::rollout;

namespace {

Outcome ok(double ttft_ms, std::vector<double> itl_ms = {10, 10, 10}) {
    Outcome o;
    o.ttft_ms = ttft_ms;
    o.itl_ms = std::move(itl_ms);
    return o;
}

Outcome failed() {
    Outcome o;
    o.error = true;
    return o;
}

const Check& find(const std::vector<Check>& checks, const std::string& name) {
    for (const Check& c : checks)
        if (c.name == name) return c;
    throw std::runtime_error("no check " + name);
}

Policy quick_policy() {
    Policy p;
    p.steps = parse_steps("5,10,25,50,100");
    p.step_seconds = 10;
    p.max_failures = 2;
    p.limits.min_requests = 20;
    p.limits.min_shadow = 0;  // no shadow traffic in these cases
    return p;
}

// One step's traffic: n requests of each arm.
void feed(Rollout& r, size_t n, double stable_ttft, double canary_ttft) {
    for (size_t i = 0; i < n; ++i) {
        r.record(Arm::Stable, ok(stable_ttft));
        r.record(Arm::Canary, ok(canary_ttft));
    }
}

}  // namespace

class TestRollout : public QObject {
    Q_OBJECT

  private slots:
    void key_position_matches_an_independent_hash() {
        // Python: FNV-1a 64 over the 8 salt bytes (little end first) then the
        // key, splitmix64's finalizer, top 53 bits * 2^-53.
        QCOMPARE(Router::key_position("client-0", 0), 0.6131797167322729);
        QCOMPARE(Router::key_position("client-1", 0), 0.11663178819677933);
        QCOMPARE(Router::key_position("10.0.0.7", 42), 0.6431900920240915);
    }

    void keyless_share_is_exact_over_1000() {
        // u_0 = key_position("", 0) = 0.5048676404714686, u_n = frac(u_0 + n/phi).
        // Python over n < 1000: 50, 100, 250, 500 positions below 5/10/25/50 %.
        const std::vector<std::pair<double, int>> cases = {
            {0.05, 50}, {0.10, 100}, {0.25, 250}, {0.50, 500}};
        for (const auto& [share, expected] : cases) {
            Router r(0);
            r.set_share(share);
            int canary = 0;
            for (int i = 0; i < 1000; ++i) canary += r.route("") == Arm::Canary;
            QCOMPARE(canary, expected);
        }
        // The first keyless requests on the canary at 5 %: 17 and 30 (Python).
        Router r(0);
        r.set_share(0.05);
        std::vector<int> first;
        for (int i = 0; i < 40; ++i)
            if (r.route("") == Arm::Canary) first.push_back(i);
        QCOMPARE(first, (std::vector<int>{17, 30}));
    }

    void sticky_keys_keep_their_version_and_stay_as_the_share_grows() {
        Router r(0);
        std::set<int> before;
        for (const double share : {0.05, 0.10, 0.25, 0.50}) {
            r.set_share(share);
            std::set<int> now;
            for (int i = 0; i < 1000; ++i)
                if (r.route("client-" + std::to_string(i)) == Arm::Canary) now.insert(i);
            // Within 3 points of the share over 1000 clients (the bound);
            // the sequence gives it exactly here.
            QVERIFY2(std::abs(static_cast<double>(now.size()) / 10.0 - share * 100) <= 3.0,
                     qPrintable(QString("share %1: %2 canary clients").arg(share).arg(now.size())));
            for (const int c : before)
                QVERIFY2(now.count(c), "a canary client went back to stable");
            // Sticky: the same key asked again gets the same answer.
            for (int i = 0; i < 1000; ++i)
                QCOMPARE(r.route("client-" + std::to_string(i)) == Arm::Canary, now.count(i) == 1);
            before = now;
        }
        r.set_share(0.0);
        for (int i = 0; i < 1000; ++i)
            QCOMPARE(r.route("client-" + std::to_string(i)), Arm::Stable);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.set_share(1.5));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.set_share(NAN));
    }

    void ttft_ratio_by_hand() {
        StepSamples s;
        for (int i = 0; i < 20; ++i) s.stable.push_back(ok(100));
        for (int i = 0; i < 20; ++i) s.canary.push_back(ok(100 + i));
        Limits l;
        l.min_shadow = 0;
        // Canary sorted 100..119, n = 20: h = 19 * 0.99 = 18.81, p99 = 118 +
        // 0.81 * 1 = 118.81; stable p99 = 100; ratio 1.1881 <= 1.25.
        const std::vector<Check> c = judge(s, l);
        const Check& t = find(c, "ttft_p99_ratio");
        QCOMPARE(t.result, CheckResult::Pass);
        QVERIFY(std::abs(t.canary - 118.81) < 1e-9);
        QVERIFY(std::abs(t.value - 1.1881) < 1e-12);
        QCOMPARE(overall(c), CheckResult::Pass);
        // A canary at 150 ms: ratio 1.5 fails.
        for (Outcome& o : s.canary) o.ttft_ms = 150;
        QCOMPARE(find(judge(s, l), "ttft_p99_ratio").result, CheckResult::Fail);
        QCOMPARE(overall(judge(s, l)), CheckResult::Fail);
    }

    void itl_ratio_pools_every_gap() {
        StepSamples s;
        for (int i = 0; i < 20; ++i) s.stable.push_back(ok(100, {10, 10, 10}));
        for (int i = 0; i < 20; ++i) s.canary.push_back(ok(100, {10, 10, 30}));
        Limits l;
        l.min_shadow = 0;
        // Canary: 60 gaps, 40 of 10 then 20 of 30; h = 59 * 0.99 = 58.41 lies
        // between x[58] = 30 and x[59] = 30: p99 = 30; stable 10: ratio 3.
        const std::vector<Check> checks = judge(s, l);
        const Check& t = find(checks, "itl_p99_ratio");
        QCOMPARE(t.canary, 30.0);
        QCOMPARE(t.stable, 10.0);
        QCOMPARE(t.value, 3.0);
        QCOMPARE(t.result, CheckResult::Fail);
    }

    void error_rate_and_too_few_requests() {
        StepSamples s;
        for (int i = 0; i < 20; ++i) s.stable.push_back(ok(100));
        for (int i = 0; i < 20; ++i) s.canary.push_back(ok(100));
        s.canary.push_back(failed());
        Limits l;
        l.min_shadow = 0;
        // Canary 1 of 21 failed: 4.76 % vs 0 %, +4.76 points > +2.
        const std::vector<Check> all = judge(s, l);
        const Check& e = find(all, "error_rate");
        QVERIFY(std::abs(e.value - 1.0 / 21.0) < 1e-12);
        QCOMPARE(e.result, CheckResult::Fail);
        // 19 stable requests: every check that needs 20 is inconclusive.
        s.stable.pop_back();
        s.canary.pop_back();
        const std::vector<Check> c = judge(s, l);
        QCOMPARE(find(c, "ttft_p99_ratio").result, CheckResult::Inconclusive);
        QCOMPARE(find(c, "error_rate").result, CheckResult::Inconclusive);
        QCOMPARE(overall(c), CheckResult::Inconclusive);
    }

    void drift_checks_on_shadow_pairs() {
        StepSamples s;
        for (int i = 0; i < 20; ++i) s.stable.push_back(ok(100));
        for (int i = 0; i < 20; ++i) s.canary.push_back(ok(100));
        Limits l;  // min_shadow 5, agreement >= 0.90, KLD <= 0.05
        QCOMPARE(find(judge(s, l), "token_agreement").result, CheckResult::Inconclusive);
        for (const double a : {1.0, 1.0, 1.0, 0.5, 0.5}) s.drift.push_back({a, 0.01});
        // Mean agreement (1 + 1 + 1 + 0.5 + 0.5) / 5 = 0.8 < 0.9; KLD 0.01.
        const std::vector<Check> c = judge(s, l);
        QCOMPARE(find(c, "token_agreement").value, 0.8);
        QCOMPARE(find(c, "token_agreement").result, CheckResult::Fail);
        QCOMPARE(find(c, "mean_kld").result, CheckResult::Pass);
        QCOMPARE(overall(c), CheckResult::Fail);
    }

    void equal_versions_promote_step_by_step() {
        Rollout r(quick_policy());
        QCOMPARE(r.share(), 0.05);
        const std::vector<double> shares = {0.10, 0.25, 0.50, 1.00, 1.00};
        for (size_t step = 0; step < 5; ++step) {
            if (step < 4) {
                feed(r, 25, 100, 100);
            } else {  // 100 %: no stable traffic; judged against step 4's stable requests
                for (int i = 0; i < 30; ++i) r.record(Arm::Canary, ok(100));
            }
            QVERIFY(!r.tick(10.0 * static_cast<double>(step + 1) - 0.5));  // interval not over
            const auto d = r.tick(10.0 * static_cast<double>(step + 1));
            QVERIFY(d);
            QCOMPARE(d->verdict, step < 4 ? Verdict::Advance : Verdict::Promote);
            QCOMPARE(d->n_stable, size_t{25});  // at 100 %: the baseline of the step before
            QCOMPARE(d->share_after, shares[step]);
        }
        QCOMPARE(r.phase(), Phase::Promoted);
        QCOMPARE(r.route("anyone"), Arm::Canary);
        QVERIFY(!r.tick(1000));
        QCOMPARE(r.decisions().size(), size_t{5});
    }

    void a_slower_canary_rolls_back() {
        Rollout r(quick_policy());
        feed(r, 25, 100, 200);  // TTFT p99 ratio 2
        auto d = r.tick(10);
        QVERIFY(d);
        QCOMPARE(d->verdict, Verdict::Fail);
        QCOMPARE(d->failures, 1u);
        QCOMPARE(r.share(), 0.05);  // the step starts again
        feed(r, 25, 100, 200);
        d = r.tick(20);
        QVERIFY(d);
        QCOMPARE(d->verdict, Verdict::Rollback);
        QCOMPARE(d->share_after, 0.0);
        QCOMPARE(r.phase(), Phase::RolledBack);
        for (int i = 0; i < 100; ++i) QCOMPARE(r.route("client-" + std::to_string(i)), Arm::Stable);
        QVERIFY(!r.take_shadow());
        // The decision carries its figures.
        const nlohmann::json j = d->to_json();
        QCOMPARE(j["verdict"].get<std::string>(), std::string("rollback"));
        QCOMPARE(j["checks"][0]["name"].get<std::string>(), std::string("ttft_p99_ratio"));
        QCOMPARE(j["checks"][0]["value"].get<double>(), 2.0);
        QCOMPARE(j["checks"][0]["result"].get<std::string>(), std::string("fail"));
    }

    // A person's decision ends the rollout at once, with the step's
    // figures kept (the judge's own checks, not deciding).
    void decisions_by_hand() {
        Rollout r(quick_policy());
        feed(r, 25, 100, 200);  // TTFT p99 ratio 2: a failing step, not yet judged
        auto d = r.decide_by_hand(Verdict::Rollback, 3.0);
        QVERIFY(d);
        QCOMPARE(d->verdict, Verdict::Rollback);
        QVERIFY(d->manual);
        QCOMPARE(d->share_before, 0.05);
        QCOMPARE(d->share_after, 0.0);
        QCOMPARE(d->n_stable, size_t{25});
        QCOMPARE(d->n_canary, size_t{25});
        QCOMPARE(find(d->checks, "ttft_p99_ratio").value, 2.0);
        QCOMPARE(d->failures, 0u);  // no step failed: a person decided
        QCOMPARE(r.phase(), Phase::RolledBack);
        QCOMPARE(d->to_json()["manual"].get<bool>(), true);
        QVERIFY(!r.decide_by_hand(Verdict::Promote, 4.0));  // it ended
        QVERIFY(!r.tick(1000));
        QCOMPARE(r.decisions().size(), size_t{1});

        Rollout p(quick_policy());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, p.decide_by_hand(Verdict::Hold, 1.0));
        d = p.decide_by_hand(Verdict::Promote, 1.0);
        QVERIFY(d);
        QCOMPARE(d->share_after, 1.0);
        QCOMPARE(p.phase(), Phase::Promoted);
        QCOMPARE(p.route("anyone"), Arm::Canary);
        QCOMPARE(find(d->checks, "ttft_p99_ratio").result, CheckResult::Inconclusive);
    }

    void too_little_traffic_holds_then_judges_all_of_it() {
        Rollout r(quick_policy());
        feed(r, 5, 100, 100);
        auto d = r.tick(10);
        QVERIFY(d);
        QCOMPARE(d->verdict, Verdict::Hold);
        QCOMPARE(r.share(), 0.05);
        feed(r, 15, 100, 100);
        QVERIFY(!r.tick(15));  // the hold runs one more interval, to 20 s
        d = r.tick(20);
        QVERIFY(d);
        QCOMPARE(d->verdict, Verdict::Advance);  // judged on 5 + 15 = 20 each
        QCOMPARE(d->n_canary, size_t{20});
    }

    void shadow_share_is_exact() {
        Policy p = quick_policy();
        p.shadow_share = 0.10;
        Rollout r(p);
        int shadows = 0;
        for (int i = 0; i < 100; ++i) shadows += r.take_shadow();
        QCOMPARE(shadows, 10);
    }

    void steps_parse_and_errors_name_the_entry() {
        QCOMPARE(parse_steps("5,10,25,50,100"), (std::vector<double>{0.05, 0.10, 0.25, 0.50, 1.0}));
        QCOMPARE(parse_steps("100"), std::vector<double>{1.0});
        const std::vector<std::pair<const char*, const char*>> bad = {
            {"5,abc,100", "entry 2 (\"abc\") is not a number"},
            {"10,5,100", "entry 2 (\"5\") is not above"},
            {"0,100", "entry 1 (\"0\") is outside"},
            {"5,10", "the last step must be 100"},
            {"", "entry 1 (\"\") is not a number"},
            {"5,,100", "entry 2 (\"\") is not a number"},
        };
        for (const auto& [text, msg] : bad) {
            try {
                parse_steps(text);
                QFAIL(text);
            } catch (const std::invalid_argument& e) {
                QVERIFY2(std::string(e.what()).find(msg) != std::string::npos, e.what());
            }
        }
        Policy p;
        p.step_seconds = 0;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Rollout{p});
    }
};

QTEST_APPLESS_MAIN(TestRollout)
#include "test_rollout.moc"
