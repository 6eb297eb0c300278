// The load test's pure parts with hand-derived expectations: the arrival
// generators (mean rate and coefficient of variation of the gaps of a seeded
// sample, against the distributions' closed forms, with tolerances from the
// sample size), the schedule's rescale, the per-step percentiles,
// throughput and goodput on hand-worked requests, the sweep's rates and the
// incremental SSE reader; the stop flag of a step and a sweep; the CSV
// export of a hand-made step; cost figures worked by hand.

#include <QtTest>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cost/price.h"
#include "load/answer_reader.h"
#include "load/arrivals.h"
#include "load/driver.h"
#include "load/prompts.h"
#include "load/report.h"
#include "load/sse.h"
#include "load/step_stats.h"
#include "load/sweep.h"
#include "load/telemetry.h"

using namespace wb;
using namespace wb::load;

namespace {

struct Moments {
    double mean = 0;
    double cv = 0;
};

Moments moments(const std::vector<double>& x) {
    double s = 0;
    for (const double v : x) s += v;
    const double mean = s / static_cast<double>(x.size());
    double ss = 0;
    for (const double v : x) ss += (v - mean) * (v - mean);
    const double sd = std::sqrt(ss / static_cast<double>(x.size() - 1));
    return {mean, sd / mean};
}

// Five standard errors of a sample's mean and coefficient of variation for
// n draws of a distribution with coefficient of variation `cv` and kurtosis
// `kurt` (non-excess): SE(mean)/mean = cv/sqrt(n); SE(sd)/sd ~=
// sqrt((kurt - 1) / (4n)) (the delta method), and the mean's own error adds
// to the CV's.
double mean_tol(double mean, double cv, size_t n) {
    return 5 * mean * cv / std::sqrt(static_cast<double>(n));
}
double cv_tol(double cv, double kurt, size_t n) {
    const double dn = static_cast<double>(n);
    return 5 * cv * std::sqrt((kurt - 1) / (4 * dn) + cv * cv / dn);
}

RequestResult ok(double send, double ttft, double e2e, int64_t out, std::vector<double> itl = {}) {
    RequestResult r;
    r.ok = true;
    r.send_ms = send;
    r.ttft_ms = ttft;
    r.e2e_ms = e2e;
    r.output_tokens = out;
    r.output_tokens_source = "usage";
    r.prompt_tokens = 10;
    r.itl_ms = std::move(itl);
    if (out > 1) r.tpot_ms = (e2e - ttft) / static_cast<double>(out - 1);
    return r;
}

}  // namespace

class TestLoadParts : public QObject {
    Q_OBJECT
  private slots:
    void constant_gaps() {
        const auto g = arrival_gaps(Arrival::Constant, 4.0, 1.0, 7, 100);
        for (const double v : g) QCOMPARE(v, 0.25);
    }

    void poisson_gaps() {
        // Exponential(rate 5): mean 1/5 s, CV 1, kurtosis 9.
        const size_t n = 20000;
        const Moments m = moments(arrival_gaps(Arrival::Poisson, 5.0, 1.0, 42, n));
        QVERIFY2(std::abs(m.mean - 0.2) < mean_tol(0.2, 1, n), qPrintable(QString::number(m.mean)));
        QVERIFY2(std::abs(m.cv - 1) < cv_tol(1, 9, n), qPrintable(QString::number(m.cv)));
    }

    void gamma_gaps_data() {
        QTest::addColumn<double>("shape");
        QTest::newRow("bursty B=0.25") << 0.25;
        QTest::newRow("even B=4") << 4.0;
    }
    void gamma_gaps() {
        // Gamma(shape B, scale 1/(R B)): mean 1/R, CV 1/sqrt(B), kurtosis 3 + 6/B.
        QFETCH(double, shape);
        const size_t n = 20000;
        const double rate = 8;
        const Moments m = moments(arrival_gaps(Arrival::Gamma, rate, shape, 3, n));
        const double cv = 1 / std::sqrt(shape);
        QVERIFY2(std::abs(m.mean - 1 / rate) < mean_tol(1 / rate, cv, n),
                 qPrintable(QString::number(m.mean)));
        QVERIFY2(std::abs(m.cv - cv) < cv_tol(cv, 3 + 6 / shape, n),
                 qPrintable(QString::number(m.cv)));
    }

    void seeded_and_checked() {
        QCOMPARE(arrival_gaps(Arrival::Poisson, 3, 1, 9, 50),
                 arrival_gaps(Arrival::Poisson, 3, 1, 9, 50));
        QVERIFY(arrival_gaps(Arrival::Poisson, 3, 1, 9, 50) !=
                arrival_gaps(Arrival::Poisson, 3, 1, 10, 50));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, arrival_gaps(Arrival::Poisson, 0, 1, 1, 5));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, arrival_gaps(Arrival::Gamma, 1, 0, 1, 5));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parse_arrival("uniform"));
    }

    void schedule_offers_the_rate_exactly() {
        // 501 sends at 10/s: the last is due at 500 / 10 = 50 s; the gaps keep
        // the raw sample's shape (the same CV: a rescale does not change it).
        const size_t n = 501;
        const auto t = arrival_schedule(Arrival::Gamma, 10, 0.5, 11, n);
        QCOMPARE(t.front(), 0.0);
        QVERIFY(std::abs(t.back() - 50.0) < 1e-9);
        std::vector<double> gaps;
        for (size_t i = 1; i < n; ++i) {
            QVERIFY(t[i] >= t[i - 1]);
            gaps.push_back(t[i] - t[i - 1]);
        }
        const Moments raw = moments(arrival_gaps(Arrival::Gamma, 10, 0.5, 11, n - 1));
        QVERIFY(std::abs(moments(gaps).cv - raw.cv) < 1e-9);
    }

    void step_figures_by_hand() {
        // Four answers sent at 0, 100, 200, 300 ms; one failure sent at 400.
        std::vector<RequestResult> rs = {
            ok(0, 10, 50, 5, {10, 10, 10, 10}),  // ends at 50
            ok(100, 20, 60, 5, {10, 10, 10, 10}), ok(200, 30, 70, 5, {10, 10, 10, 10}),
            ok(300, 40, 1700, 5, {1, 2, 3, 1654}),  // ends at 2000
        };
        RequestResult bad;
        bad.send_ms = 400;
        bad.e2e_ms = 1000;  // ends at 1400
        bad.timed_out = true;
        bad.error = "timed out";
        rs.push_back(bad);
        Slo slo;
        slo.ttft_p99_ms = 25;
        const StepStats s = step_stats(rs, slo);
        QCOMPARE(s.requests, size_t(5));
        QCOMPARE(s.completed, size_t(4));
        QCOMPARE(s.errors, size_t(1));
        QCOMPARE(s.timeouts, size_t(1));
        QCOMPARE(s.duration_s, 2.0);          // 0 -> 2000 ms
        QCOMPARE(s.achieved_rate, 4 / 0.4);   // 4 gaps over 400 ms
        QCOMPARE(s.request_throughput, 2.0);  // 4 answers / 2 s
        QCOMPARE(s.output_throughput, 10.0);  // 20 tokens / 2 s
        QCOMPARE(s.input_throughput, 20.0);   // 40 prompt tokens / 2 s
        QCOMPARE(s.goodput, 1.0);             // TTFT 10 and 20 meet 25 ms: 2 / 2 s
        // numpy.percentile([10, 20, 30, 40], q): p50 = 25, p90 = 37, p99 = 39.7.
        QCOMPARE(s.ttft.p50, 25.0);
        QVERIFY(std::abs(s.ttft.p90 - 37.0) < 1e-9);
        QVERIFY(std::abs(s.ttft.p99 - 39.7) < 1e-9);
        QVERIFY(!s.meets_slo);  // p99 39.7 > 25
        // TPOT = (e2e - ttft) / 4: 10, 10, 10, 415 -> p50 10; mean 111.25.
        QCOMPARE(s.tpot.p50, 10.0);
        QCOMPARE(s.tpot.mean, 111.25);
        // ITL pools 16 gaps: 12 tens and 1, 2, 3, 1654 -> sorted p50 = 10.
        QCOMPARE(s.itl.count, size_t(16));
        QCOMPARE(s.itl.p50, 10.0);
        QVERIFY(s.goodput <= s.request_throughput);
    }

    // Queue wait as the target reports it (our server's timings.queue_ms):
    // read from the answer, summarized over the requests that carry it,
    // ignored when it is not a finite number >= 0.
    void queue_wait_as_reported() {
        const auto read = [](const std::string& timings) {
            AnswerReader a(nullptr, [] { return 0.0; });
            a.start(0);
            const std::string ev = R"({"id":"c","model":"m","choices":[{"index":0,"delta":)"
                                   R"({"content":"x"},"finish_reason":"stop"}],"timings":)" +
                                   timings + "}";
            a.on_event(ev);
            a.on_event("[DONE]");
            a.finish_counts();
            return a.result();
        };
        const RequestResult r = read(R"({"queue_ms":12.5,"ttft_ms":40})");
        QCOMPARE(r.server_queue_ms, std::optional<double>(12.5));
        QCOMPARE(r.server_ttft_ms, std::optional<double>(40.0));
        for (const char* bad : {R"({"queue_ms":-1})", R"({"queue_ms":"5"})", R"({"queue_ms":null})",
                                R"([1])", R"("x")", R"({"queue_ms":{"a":1}})"}) {
            const RequestResult b = read(bad);
            QVERIFY2(!b.server_queue_ms && !b.server_ttft_ms, bad);
            QVERIFY2(b.output == "x", bad);  // the answer itself is still read
        }

        // Three answers report 5, 25, 15 ms; one reports none; a failure's
        // report does not count. numpy.percentile([5, 15, 25], 50) = 15,
        // 99 -> 24.8.
        std::vector<RequestResult> rs = {ok(0, 10, 50, 5), ok(100, 20, 60, 5), ok(200, 30, 70, 5),
                                         ok(300, 40, 80, 5)};
        rs[0].server_queue_ms = 5;
        rs[1].server_queue_ms = 25;
        rs[2].server_queue_ms = 15;
        RequestResult failed;
        failed.send_ms = 400;
        failed.server_queue_ms = 1000;
        rs.push_back(failed);
        const StepStats s = step_stats(rs, Slo{});
        QCOMPARE(s.queue_wait.count, size_t(3));
        QCOMPARE(s.queue_wait.p50, 15.0);
        QVERIFY(std::abs(s.queue_wait.p99 - 24.8) < 1e-9);
        QCOMPARE(s.queue_wait.max, 25.0);
        SweepStep st;
        st.label = "c=1";
        st.stats = s;
        const nlohmann::json j = step_json(st, {});
        QCOMPARE(j["queue_wait_ms"]["count"].get<size_t>(), size_t(3));
        QCOMPARE(j["queue_wait_ms"]["p50"].get<double>(), 15.0);
        const std::string csv = steps_csv({st});
        QVERIFY(csv.substr(0, csv.find('\n'))
                    .ends_with(",queue_wait_p50_ms,queue_wait_p90_ms,queue_wait_p95_ms,"
                               "queue_wait_p99_ms"));
        // p90 = 23, p95 = 24 by numpy's linear rule.
        QVERIFY2(csv.ends_with(",15.000000,23.000000,24.000000,24.800000\n"), csv.c_str());
        // None reported: no figures.
        QCOMPARE(step_stats({ok(0, 10, 50, 5)}, Slo{}).queue_wait.count, size_t(0));
    }

    // Scheduler telemetry: an answer parsed, refused when not the documented
    // shape, summed over a step's span and written as CSV, by hand.
    void scheduler_telemetry_by_hand() {
        const std::string cols =
            R"("columns":["index","end_ms","duration_ms","batch","prefill_tokens",)"
            R"("decode_tokens","queued","kv_blocks_used","kv_blocks_total","preemptions"])";
        const PassPage p =
            parse_passes("{" + cols +
                         R"(,"now_ms":100,"next":8,"end":9,"passes":[[5,10,2,1,30,1,0,3,64,0],)"
                         R"([6,20,3,3,0,3,2,6,64,1],[7,30,4,2,8,2,0,5,64,0]]})");
        QCOMPARE(p.passes.size(), size_t(3));
        QCOMPARE(p.next, uint64_t(8));
        QCOMPARE(p.end, uint64_t(9));
        QCOMPARE(p.now_ms, 100.0);
        QCOMPARE(p.passes[1].batch, 3u);
        QCOMPARE(p.passes[1].queued, 2);
        for (const std::string& bad :
             {std::string("[]"), "{" + cols + R"(,"now_ms":1,"next":1,"end":1,"passes":[[1]]})",
              "{" + cols + R"(,"now_ms":1,"next":9,"end":9,"passes":[[5,1,1,-1,0,0,0,0,0,0]]})",
              "{" + cols +
                  R"(,"now_ms":1,"next":9,"end":9,"passes":[[5,1,1,1,0,0,0,0,0,0],)"
                  R"([5,2,1,1,0,0,0,0,0,0]]})",
              std::string(R"({"columns":["end_ms"],"now_ms":1,"next":1,"end":1,"passes":[]})")}) {
            QVERIFY_THROWS_EXCEPTION(std::runtime_error, parse_passes(bad));
        }
        // More passes than a page holds (16384): refused, whatever the body.
        std::string many = "{" + cols + R"(,"now_ms":1,"next":20000,"end":20000,"passes":[)";
        for (int i = 0; i < 16385; ++i)
            many += (i ? ",[" : "[") + std::to_string(i) + ",1,1,1,0,1,0,1,2,0]";
        many += "]}";
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, parse_passes(many));
        // On the client's clock the passes end at 1010, 1020, 1030 ms; the
        // step spans [1015, 1030]: passes 6 and 7.
        std::vector<TelemetryRow> rows;
        for (const auto& t : p.passes) rows.push_back({t.end_ms + 1000, t});
        const SchedulerStats st = scheduler_stats(rows, 1015, 1030);
        QCOMPARE(st.passes, size_t(2));
        QCOMPARE(st.batch_mean, 2.5);
        QCOMPARE(st.batch_max, 3u);
        QCOMPARE(st.prefill_tokens, uint64_t(8));
        QCOMPARE(st.decode_tokens, uint64_t(5));
        QCOMPARE(st.kv_blocks_used_max, 6u);
        QCOMPARE(st.kv_blocks_total, 64u);
        QCOMPARE(st.preemptions, uint64_t(1));
        QCOMPARE(st.busy_ms, 7.0);
        QVERIFY(std::isnan(scheduler_stats(rows, 0, 1).batch_mean));
        const std::string csv = telemetry_csv(rows, {{"rate 2.00", 1015, 1030}});
        QCOMPARE(csv, std::string("step,t_s,index,duration_ms,batch,prefill_tokens,decode_tokens,"
                                  "queued,kv_blocks_used,kv_blocks_free,preemptions\n"
                                  ",0.000000,5,2.000,1,30,1,0,3,61,0\n"
                                  "rate 2.00,0.010000,6,3.000,3,0,3,2,6,58,1\n"
                                  "rate 2.00,0.020000,7,4.000,2,8,2,0,5,59,0\n"));
    }

    void request_slo_by_hand() {
        Slo slo;
        slo.itl_p99_ms = 50;
        // p99 of [1, 2, 3, 100]: h = 3 * 0.99 = 2.97 -> 3 + 0.97 * 97 = 97.09 > 50.
        QVERIFY(!meets_slo(ok(0, 5, 200, 5, {1, 2, 3, 100}), slo));
        QVERIFY(meets_slo(ok(0, 5, 200, 5, {1, 2, 3, 40}), slo));
        slo.e2e_p99_ms = 150;
        QVERIFY(!meets_slo(ok(0, 5, 200, 5, {1, 2, 3, 40}), slo));
        RequestResult failed;
        QVERIFY(!meets_slo(failed, Slo{}));
        // A step of failures only meets no SLO and has no throughput.
        const StepStats s = step_stats({failed, failed}, Slo{});
        QVERIFY(!s.meets_slo);
        QCOMPARE(s.request_throughput, 0.0);
    }

    void sweep_rates_by_hand() {
        QCOMPARE(sweep_rates(2, 10, 3), (std::vector<double>{4, 6, 8}));
        QCOMPARE(sweep_rates(1, 2, 1), (std::vector<double>{1.5}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sweep_rates(1, 2, 0));
        std::vector<SweepStep> steps(3);
        steps[0].stats.request_throughput = 3;
        steps[1].stats.request_throughput = 9;
        steps[1].stats.meets_slo = false;
        steps[2].stats.request_throughput = 6;
        Slo slo;
        QCOMPARE(best_step(steps, slo), -1);  // no SLO given: nothing called out
        slo.ttft_p99_ms = 100;
        QCOMPARE(best_step(steps, slo), 2);
    }

    // Without a usage block: the counter's count ("tokenizer"); a counter
    // that throws or gives no count falls back to the content chunks.
    void token_count_sources() {
        const std::string chunk = R"({"choices":[{"delta":{"content":"ab"}}]})";
        auto counted = [&](wb::load::TokenCounter count) {
            wb::load::AnswerReader a(std::move(count), [] { return 0.0; });
            a.start(0);
            for (int i = 0; i < 3; ++i) a.on_event(chunk);
            a.finish_counts();
            return std::make_pair(a.result().output_tokens, a.result().output_tokens_source);
        };
        QCOMPARE(counted([](const std::string& t) { return int64_t(t.size()); }),
                 std::make_pair(int64_t(6), std::string("tokenizer")));
        QCOMPARE(counted(nullptr), std::make_pair(int64_t(3), std::string("chunks")));
        QCOMPARE(counted([](const std::string&) -> int64_t { throw std::runtime_error("limit"); }),
                 std::make_pair(int64_t(3), std::string("chunks")));
        QCOMPARE(counted([](const std::string&) { return int64_t(-1); }),
                 std::make_pair(int64_t(3), std::string("chunks")));
    }

    void sse_reader() {
        std::vector<std::string> events;
        const auto on = [&](std::string_view d) {
            events.emplace_back(d);
            return true;
        };
        SseReader r(64);
        // Split mid-line and mid-"\r\n"; a comment; an event field; CR-only lines.
        QCOMPARE(r.feed("data: {\"a\"", on), std::string());
        QCOMPARE(r.feed(":1}\r", on), std::string());
        QCOMPARE(r.feed("\n\r\n: keep-alive\nevent: x\ndata:two\ndata: lines\n\n", on),
                 std::string());
        QCOMPARE(r.feed("data: [DONE]\r\r", on), std::string());
        QCOMPARE(events, (std::vector<std::string>{"{\"a\":1}", "two\nlines", "[DONE]"}));
        QVERIFY(!r.has_pending());
        r.feed("data: trailing", on);
        QVERIFY(r.has_pending());

        SseReader small(8);
        const std::string err = small.feed(std::string(100, 'x'), on);
        QCOMPARE(err, std::string("an SSE line longer than 8 bytes"));
        QCOMPARE(small.feed("\n\n", on), err);  // stays failed
    }

    // A stop flag already set: an open or closed step sends nothing (no
    // request is made: the target's port would refuse it) and a sweep
    // returns after its first step, marked cancelled, without throwing.
    void stop_flag_sends_nothing() {
        std::atomic<bool> stop{true};
        Target t;
        t.base_url = "http://127.0.0.1:9";
        StepPlan plan;
        plan.rate = 1000;
        plan.requests = 50;
        plan.cancel = &stop;
        size_t made = 0;
        const MakeRequest make = [&](size_t, bool) {
            ++made;
            return RequestSpec{};
        };
        QCOMPARE(run_step(t, plan, make, {}, {}).size(), size_t(0));
        plan.concurrency = 4;
        QCOMPARE(run_step(t, plan, make, {}, {}).size(), size_t(0));
        QCOMPARE(made, size_t(0));
        plan.concurrency.reset();
        size_t started = 0;
        size_t finished = 0;
        const SweepResult r = run_sweep(
            t, plan, 3, 8, Slo{}, make, {}, {}, [&](size_t, const std::string&) { ++started; },
            [&](size_t, const SweepStep&) { ++finished; });
        QVERIFY(r.cancelled);
        QCOMPARE(r.steps.size(), size_t(1));
        QCOMPARE(started, size_t(1));
        QCOMPARE(finished, size_t(1));
        QCOMPARE(r.steps[0].label, std::string("synchronous"));
    }

    // One hand-made step as CSV: the header, then its figures with 6
    // decimals and empty fields for figures without samples.
    void csv_of_a_hand_made_step() {
        SweepStep st;
        st.label = "rate 2.50";
        st.stats.offered_rate = 2.5;
        st.stats.requests = 4;
        st.stats.completed = 3;
        st.stats.errors = 1;
        st.stats.duration_s = 2;
        st.stats.achieved_rate = 2.5;
        st.stats.request_throughput = 1.5;
        st.stats.output_throughput = 12;
        st.stats.goodput = 1;
        st.stats.meets_slo = false;
        st.stats.ttft.count = 3;
        st.stats.ttft.mean = st.stats.ttft.p50 = st.stats.ttft.p90 = st.stats.ttft.p95 =
            st.stats.ttft.p99 = st.stats.ttft.max = 10;
        const std::string csv = steps_csv({st});
        const auto nl = csv.find('\n');
        QVERIFY(csv.substr(0, nl).rfind("step,offered_rate,concurrency,requests,completed,errors,"
                                        "timeouts,duration_s,achieved_rate,request_throughput,",
                                        0) == 0);
        const std::string row = csv.substr(nl + 1);
        QVERIFY2(row.rfind("rate 2.50,2.500000,,4,3,1,0,2.000000,2.500000,1.500000,12.000000,"
                           "0.000000,1.000000,0,10.000000,10.000000,10.000000,10.000000,",
                           0) == 0,
                 row.c_str());
        // 33 separators: 34 columns, the last four the queue wait, empty
        // (this step's target reported none).
        QCOMPARE(std::count(row.begin(), row.end(), ','), std::ptrdiff_t(33));
        QVERIFY2(row.ends_with(",,,,\n"), row.c_str());

        // With a price (per hour): 4 cost columns. 3.60 USD/h over the
        // step's 2 s = 0.002 USD; 3 requests: 0.00066666667 each, 0.66666667
        // per 1k; 24 output tokens (12/s x 2 s): 83.333333 per M.
        cost::Price hourly;
        hourly.per_hour = 3.6;
        const std::string priced = steps_csv({st}, hourly);
        QVERIFY(priced.substr(0, priced.find('\n'))
                    .ends_with(",cost_total,cost_per_request,cost_per_1k_requests,"
                               "cost_per_m_output_tokens"));
        QVERIFY2(priced.ends_with(",0.002,0.00066666667,0.66666667,83.333333\n"), priced.c_str());
    }

    // A huge mean: few prompts, never gigabytes (4 Mi words in all).
    void synthetic_prompts_are_bounded() {
        SyntheticPrompts sp;
        sp.mean_tokens = 1e6;
        const std::vector<std::string> p = synthetic_prompts(sp, 4096);
        QCOMPARE(p.size(), size_t(4));
        size_t words = 0;
        for (const std::string& t : p) words += size_t(std::count(t.begin(), t.end(), ' ')) + 1;
        QCOMPARE(words, size_t(4000000));
    }

    // Hand-worked prices. Per hour: 2.00 USD/h, 90 s busy, 10 requests, 5000
    // output tokens: 0.05 USD, 0.005 a request, 5 per 1k, 10 per M output
    // tokens. Per token: 0.50/M input, 1.50/M output, 12000 in, 3000 out:
    // (6000 + 4500) / 1e6 = 0.0105 USD, 0.00105 a request, 1.05 per 1k,
    // 3.5 per M output tokens.
    void cost_by_hand() {
        const cost::Price hour = *cost::price_from_options(2.0, std::nullopt, std::nullopt);
        cost::Usage u;
        u.requests = 10;
        u.input_tokens = 12000;
        u.output_tokens = 5000;
        u.seconds = 90;
        cost::Figures f = cost::figures(hour, u);
        QVERIFY(std::abs(f.total - 0.05) < 1e-12);
        QVERIFY(std::abs(f.per_request - 0.005) < 1e-12);
        QVERIFY(std::abs(f.per_1k_requests - 5.0) < 1e-9);
        QVERIFY(std::abs(f.per_m_output_tokens - 10.0) < 1e-9);
        QVERIFY2(f.formula.starts_with("2 USD/h x 90 s of engine busy time / 3600 = 0.05 USD"),
                 f.formula.c_str());

        const cost::Price tok = *cost::price_from_options(std::nullopt, 0.5, 1.5, "EUR");
        u.output_tokens = 3000;
        f = cost::figures(tok, u);
        QVERIFY(std::abs(f.total - 0.0105) < 1e-12);
        QVERIFY(std::abs(f.per_request - 0.00105) < 1e-12);
        QVERIFY(std::abs(f.per_1k_requests - 1.05) < 1e-9);
        QVERIFY(std::abs(f.per_m_output_tokens - 3.5) < 1e-9);
        QVERIFY2(f.formula.starts_with("(0.5 EUR/M x 12000 input tokens + 1.5 EUR/M x 3000 "
                                       "output tokens) / 1e6 = 0.0105 EUR"),
                 f.formula.c_str());

        // No requests, no output: those figures are NaN, not a division by 0.
        f = cost::figures(tok, cost::Usage{});
        QCOMPARE(f.total, 0.0);
        QVERIFY(std::isnan(f.per_request) && std::isnan(f.per_m_output_tokens));
        // No price, both kinds, a negative amount.
        QVERIFY(!cost::price_from_options(std::nullopt, std::nullopt, std::nullopt));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 cost::price_from_options(1.0, 1.0, std::nullopt));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 cost::price_from_options(std::nullopt, -1.0, std::nullopt));
    }
};

QTEST_APPLESS_MAIN(TestLoadParts)
#include "test_load_parts.moc"
