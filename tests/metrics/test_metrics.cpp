// Metrics tests: every expected value below was worked out by hand from the
// definitions (numpy's "linear" percentile, vLLM's TTFT/ITL/TPOT/e2e) and is
// written out with its arithmetic, never taken from the code under test.

#include <QtTest>
#include <cmath>
#include <thread>
#include <vector>

#include "metrics/metrics_json.h"
#include "metrics/metrics_store.h"
#include "metrics/metrics_table.h"
#include "metrics/percentile.h"
#include "metrics/request_metrics.h"

using namespace wb::metrics;

class TestMetrics : public QObject {
    Q_OBJECT

  private slots:
    void percentile_five_samples() {
        // Sorted: 15 20 35 40 50, n = 5, h = 4p/100.
        const std::vector<double> x = {15, 20, 35, 40, 50};
        QCOMPARE(percentile_sorted(x, 0), 15.0);
        QCOMPARE(percentile_sorted(x, 50), 35.0);  // h = 2
        QCOMPARE(percentile_sorted(x, 40), 29.0);  // h = 1.6: 20 + 0.6 * 15
        QCOMPARE(percentile_sorted(x, 90), 46.0);  // h = 3.6: 40 + 0.6 * 10
        QCOMPARE(percentile_sorted(x, 95), 48.0);  // h = 3.8: 40 + 0.8 * 10
        QCOMPARE(percentile_sorted(x, 99), 49.6);  // h = 3.96: 40 + 0.96 * 10
        QCOMPARE(percentile_sorted(x, 100), 50.0);
    }

    void summary_one_to_ten_shuffled() {
        // 1..10 in scrambled order; n = 10, h = 9p/100.
        const Summary s = summarize({7, 3, 10, 1, 9, 2, 8, 5, 4, 6});
        QCOMPARE(s.count, size_t{10});
        QCOMPARE(s.mean, 5.5);
        QVERIFY(std::abs(s.p50 - 5.5) < 1e-12);   // h = 4.5: 5 + 0.5
        QVERIFY(std::abs(s.p90 - 9.1) < 1e-12);   // h = 8.1: 9 + 0.1
        QVERIFY(std::abs(s.p95 - 9.55) < 1e-12);  // h = 8.55
        QVERIFY(std::abs(s.p99 - 9.91) < 1e-12);  // h = 8.91
        QCOMPARE(s.max, 10.0);
    }

    void summary_duplicates_and_nan() {
        // {3, 3, 3, 7} plus a NaN that must be skipped; n = 4, h = 3p/100.
        const double nan = std::nan("");
        const Summary s = summarize({3, nan, 7, 3, 3});
        QCOMPARE(s.count, size_t{4});
        QCOMPARE(s.mean, 4.0);
        QCOMPARE(s.p50, 3.0);                     // h = 1.5 between 3 and 3
        QVERIFY(std::abs(s.p90 - 5.8) < 1e-12);   // h = 2.7: 3 + 0.7 * 4
        QVERIFY(std::abs(s.p95 - 6.4) < 1e-12);   // h = 2.85: 3 + 0.85 * 4
        QVERIFY(std::abs(s.p99 - 6.88) < 1e-12);  // h = 2.97: 3 + 0.97 * 4
        QCOMPARE(s.max, 7.0);
    }

    void summary_single_and_empty() {
        const Summary one = summarize({42});
        QCOMPARE(one.count, size_t{1});
        QCOMPARE(one.p50, 42.0);
        QCOMPARE(one.p99, 42.0);
        QCOMPARE(one.max, 42.0);
        const Summary none = summarize({});
        QCOMPARE(none.count, size_t{0});
        QVERIFY(std::isnan(none.mean) && std::isnan(none.p50) && std::isnan(none.max));
        QVERIFY(std::isnan(percentile_sorted(std::vector<double>{}, 50)));
    }

    void summary_equals_sorted_definition_on_many_samples() {
        // 1000 values i*7919 mod 1009 (a permutation-like spread with
        // repeats); p99: h = 999 * 0.99 = 989.01 on the sorted copy.
        std::vector<double> v;
        for (int i = 0; i < 1000; ++i) v.push_back((i * 7919) % 1009);
        std::vector<double> sorted = v;
        std::sort(sorted.begin(), sorted.end());
        const Summary s = summarize(v);
        const double expect99 = sorted[989] + 0.01 * (sorted[990] - sorted[989]);
        QVERIFY(std::abs(s.p99 - expect99) < 1e-9);
        QCOMPARE(s.p50, sorted[499] + 0.5 * (sorted[500] - sorted[499]));
        QCOMPARE(s.max, sorted.back());
    }

    void bad_percentile_throws() {
        const std::vector<double> x = {1, 2};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, percentile_sorted(x, 101));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, percentile_sorted(x, -1));
    }

    void request_metrics_vllm_definitions() {
        // Submitted at 0, admitted at 10, tokens at 110, 130, 160, 200,
        // finished at 200.
        RequestTimeline t;
        t.submitted_ms = 0;
        t.admitted_ms = 10;
        t.token_ms = {110, 130, 160, 200};
        t.finished_ms = 200;
        t.prompt_tokens = 5;
        t.generated_tokens = 4;
        const RequestMetrics m = compute_request_metrics(t);
        QCOMPARE(m.queue_wait_ms, 10.0);
        QCOMPARE(m.ttft_ms, 110.0);  // from submission, not admission
        QCOMPARE(m.itl_ms, (std::vector<double>{20, 30, 40}));
        QCOMPARE(m.tpot_ms, 30.0);  // (200 - 110) / (4 - 1)
        QCOMPARE(m.e2e_ms, 200.0);

        // One token: no ITL, TPOT undefined. Never admitted: no queue wait.
        RequestTimeline one;
        one.submitted_ms = 5;
        one.admitted_ms = 6;
        one.token_ms = {50};
        one.finished_ms = 51;
        const RequestMetrics m1 = compute_request_metrics(one);
        QVERIFY(m1.itl_ms.empty());
        QVERIFY(std::isnan(m1.tpot_ms));
        QCOMPARE(m1.ttft_ms, 45.0);
        RequestTimeline never;
        never.submitted_ms = 0;
        never.finished_ms = 30;
        const RequestMetrics m0 = compute_request_metrics(never);
        QVERIFY(std::isnan(m0.queue_wait_ms) && std::isnan(m0.ttft_ms));
        QCOMPARE(m0.e2e_ms, 30.0);
    }

    void store_window_and_run() {
        MetricsStore store(1000.0);
        // TTFT samples at t = 1100, 1500, 2500, 2900 ms with values 10, 20, 30, 40.
        store.record_first_token(1100, 10);
        store.record_first_token(1500, 20);
        store.record_first_token(2500, 30);
        store.record_first_token(2900, 40);
        // Steps: 3 prefill-only steps then decode steps.
        store.record_step(1200, 50, 100, 0);
        store.record_step(2200, 50, 0, 8);
        store.record_step(2800, 100, 4, 8);
        store.set_gauges(3, 2, 120, 2048);

        // now = 3000, window 1000 ms: covers 2000 < t <= 3000.
        const MetricsSnapshot s = store.snapshot(3000, 1000);
        QCOMPARE(s.window.ttft_ms.count, size_t{2});
        QCOMPARE(s.window.ttft_ms.p50, 35.0);  // {30, 40}: h = 0.5
        QCOMPARE(s.window.ttft_ms.max, 40.0);
        QCOMPARE(s.window.steps, uint64_t{2});
        QCOMPARE(s.window.decode_tokens, uint64_t{16});
        QCOMPARE(s.window.prefill_tokens, uint64_t{4});
        QCOMPARE(s.window.output_tokens_per_s, 16.0);  // 16 tokens / 1 s
        QCOMPARE(s.window.input_tokens_per_s, 4.0);
        QCOMPARE(s.window.busy_fraction, 0.15);  // 150 ms of 1000 ms
        // Whole run: 2 s since the start at 1000.
        QCOMPARE(s.run.ttft_ms.count, size_t{4});
        QCOMPARE(s.run.ttft_ms.p50, 25.0);  // {10,20,30,40}: h = 1.5
        QCOMPARE(s.run.prefill_tokens, uint64_t{104});
        QCOMPARE(s.run.input_tokens_per_s, 52.0);  // 104 / 2 s
        QCOMPARE(s.run.output_tokens_per_s, 8.0);  // 16 / 2 s
        QCOMPARE(s.queued, 3);
        QCOMPARE(s.running, 2);
        QCOMPARE(s.kv_cells_used, 120u);
        QCOMPARE(s.kv_cells_total, 2048u);

        // A sample exactly at now - window is outside (open on the left).
        const MetricsSnapshot edge = store.snapshot(2500, 1000);  // 1500 < t <= 2500
        QCOMPARE(edge.window.ttft_ms.count, size_t{1});
        QCOMPARE(edge.window.ttft_ms.max, 30.0);
        // A window longer than the run so far divides by the run's length.
        const MetricsSnapshot early = store.snapshot(1500, 60000);
        QCOMPARE(early.window.input_tokens_per_s, 200.0);  // 100 tokens / 0.5 s
        QCOMPARE(early.window.ttft_ms.count, size_t{2});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, store.snapshot(3000, 0));
    }

    void store_decode_rate_over_active_time() {
        // One reply inside a 2 s window: a 40 ms prefill step at 10.00-10.04 s
        // (after an idle engine) samples the first token, then 9 decode steps
        // of 10 ms each end at 10.05, 10.06, ..., 10.13 s. The reply's own
        // rate is (10 - 1) tokens / (10.13 - 10.04) s = 100 tokens/s, and the
        // window's rate over active time must read the same; over the whole
        // 2 s window it is 10 / 2 = 5 tokens/s. Hand-worked.
        MetricsStore store(0.0);
        store.record_step(10040, 40, 12, 1, true);
        for (int i = 1; i <= 9; ++i) store.record_step(10040 + 10.0 * i, 10, 0, 1);
        const MetricsSnapshot s = store.snapshot(12000, 2000);
        QCOMPARE(s.window.decode_tokens, uint64_t{10});
        QCOMPARE(s.window.active_ms, 90.0);
        QCOMPARE(s.window.decode_tokens_per_active_s, 9.0 / 0.09);
        QCOMPARE(s.window.output_tokens_per_s, 5.0);
        // A window that starts inside the prefill step: the same 90 ms.
        const MetricsSnapshot cut = store.snapshot(10130, 110);
        QCOMPARE(cut.window.active_ms, 90.0);
        QCOMPARE(cut.window.decode_tokens, uint64_t{10});
        // A window that starts mid-reply, (10.055, 10.10]: the passes ending
        // at 10.06 .. 10.10 s each took 10 ms since the one before, the first
        // of them included though its predecessor ended before the window:
        // 5 tokens / 50 ms.
        const MetricsSnapshot mid = store.snapshot(10100, 45);
        QCOMPARE(mid.window.active_ms, 50.0);
        QCOMPARE(mid.window.decode_tokens_per_active_s, 100.0);
        // A second turn 0.37 s later, inside the same window: a 40 ms prefill
        // after the idle gap, then 4 decode steps of 20 ms (10.54 .. 10.62 s).
        // The idle gap never counts: (9 + 4) tokens / (90 + 80) ms.
        store.record_step(10540, 40, 30, 1, true);
        for (int i = 1; i <= 4; ++i) store.record_step(10540 + 20.0 * i, 20, 0, 1);
        const MetricsSnapshot two = store.snapshot(12000, 2000);
        QCOMPARE(two.window.active_ms, 170.0);
        QCOMPARE(two.window.decode_tokens_per_active_s, 13.0 / 0.17);
        // No step in the span: 0 ms active and no rate (NaN), not 0 tokens/s.
        const MetricsSnapshot idle = store.snapshot(20000, 2000);
        QCOMPARE(idle.window.active_ms, 0.0);
        QVERIFY(std::isnan(idle.window.decode_tokens_per_active_s));
    }

    void store_finished_counts_completed_only() {
        MetricsStore store(0.0);
        RequestMetrics done;
        done.e2e_ms = 100;
        done.tpot_ms = 10;
        done.prompt_tokens = 7;
        done.generated_tokens = 9;
        RequestMetrics cancelled = done;
        cancelled.e2e_ms = 5000;
        store.record_finished(100, done, "stop");
        store.record_finished(200, done, "length");
        store.record_finished(300, cancelled, "cancelled");
        store.record_finished(400, cancelled, "timeout");
        const MetricsSnapshot s = store.snapshot(1000, 1000);
        QCOMPARE(s.run.requests_finished, uint64_t{4});
        QCOMPARE(s.run.requests_completed, uint64_t{2});
        QCOMPARE(s.run.e2e_ms.count, size_t{2});
        QCOMPARE(s.run.e2e_ms.max, 100.0);  // the cancelled 5000 ms is not a latency sample
        QCOMPARE(s.run.generated_tokens.mean, 9.0);
        QCOMPARE(s.finish_reasons.size(), size_t{4});
        QCOMPARE(s.finish_reasons[0].first, std::string("stop"));
        QCOMPARE(s.finish_reasons[2].second, uint64_t{1});
        QCOMPARE(store.last_sample_ms(), 400.0);
        // requests/s over the run: completed requests only, 2 / 1 s.
        QCOMPARE(s.run.requests_per_s, 2.0);
    }

    void wall_time_ratios_carry_vllm_names() {
        // docs/metrics.md: rates over the run are input/output tokens/s and
        // requests/s (vLLM's input_throughput, output_throughput,
        // request_throughput); "prefill tokens/s" is per request only.
        MetricsStore store(0.0);
        RequestMetrics done;
        done.e2e_ms = 100;
        done.prompt_tokens = 8;
        done.generated_tokens = 4;
        store.record_step(500, 10, 8, 0);
        store.record_step(1000, 10, 0, 4);
        store.record_finished(1000, done, "stop");
        const MetricsSnapshot s = store.snapshot(2000, 2000);
        QCOMPARE(s.run.input_tokens_per_s, 4.0);   // 8 prompt tokens / 2 s
        QCOMPARE(s.run.output_tokens_per_s, 2.0);  // 4 output tokens / 2 s
        QCOMPARE(s.run.requests_per_s, 0.5);       // 1 completed / 2 s
        const nlohmann::json j = window_json(s.run);
        QCOMPARE(j["input_throughput"].get<double>(), 4.0);
        QCOMPARE(j["output_throughput"].get<double>(), 2.0);
        QCOMPARE(j["request_throughput"].get<double>(), 0.5);
        QVERIFY(!j.contains("prefill_tokens_per_s") && !j.contains("decode_tokens_per_s"));
        for (const char* p : {"p50", "p95", "p99"}) QVERIFY(j["queue_wait_ms"].contains(p));
        const std::string table = format_metrics_table(s.run);
        QVERIFY2(table.find("over the run: input 4.0 tokens/s (8 tokens), output 2.0 tokens/s "
                            "(4 tokens), 0.500 requests/s") != std::string::npos,
                 table.c_str());
        QVERIFY(table.find("prefill") == std::string::npos);
        const std::string csv = metrics_table_csv(s.run);
        QVERIFY2(csv.find("\ninput_throughput,4.000000\noutput_throughput,2.000000\n"
                          "request_throughput,0.500000\n") != std::string::npos,
                 csv.c_str());
        QVERIFY(csv.find("tokens_per_s") == std::string::npos);
    }

    // events(): the per-request samples of (after, upto], as recorded, for
    // the live charts to compute their own windows over.
    void store_events_in_span() {
        MetricsStore store(0.0);
        store.record_first_token(100, 40);
        store.record_prefix_cache(100, 64, 0);
        store.record_first_token(250, 55);
        store.record_prefix_cache(250, 64, 48);
        RequestMetrics done;
        done.e2e_ms = 300;
        store.record_finished(300, done, "stop");
        RequestMetrics cancelled = done;
        cancelled.e2e_ms = 900;
        store.record_finished(400, cancelled, "cancelled");  // not an e2e sample
        // (100, 400]: the sample at 100 is left out, the one at 400 counted.
        const EventSamples ev = store.events(100, 400);
        QCOMPARE(ev.ttft.size(), size_t{1});
        QCOMPARE(ev.ttft[0].t_ms, 250.0);
        QCOMPARE(ev.ttft[0].value_ms, 55.0);
        QCOMPARE(ev.e2e.size(), size_t{1});
        QCOMPARE(ev.e2e[0].t_ms, 300.0);
        QCOMPARE(ev.e2e[0].value_ms, 300.0);
        QCOMPARE(ev.prefix.size(), size_t{1});
        QCOMPARE(ev.prefix[0].t_ms, 250.0);
        QCOMPARE(ev.prefix[0].prompt_tokens, 64u);
        QCOMPARE(ev.prefix[0].cached, 48u);
        // From before the first sample: both requests, in time order.
        const EventSamples all = store.events(-1, 1000);
        QCOMPARE(all.ttft.size(), size_t{2});
        QCOMPARE(all.ttft[0].value_ms, 40.0);
        QCOMPARE(all.prefix.size(), size_t{2});
        QCOMPARE(all.prefix[0].cached, 0u);
        QVERIFY(store.events(400, 1000).ttft.empty());
    }

    // events_since(): every sample once over successive calls, also one
    // appended after a call with an earlier time than that call's (the
    // engine thread stamps a sample, then takes the lock).
    void store_events_since_cursor() {
        MetricsStore store(0.0);
        EventCursor cursor;
        QVERIFY(store.events_since(cursor).ttft.empty());
        store.record_first_token(100, 40);
        store.record_prefix_cache(100, 64, 16);
        EventSamples ev = store.events_since(cursor);
        QCOMPARE(ev.ttft.size(), size_t{1});
        QCOMPARE(ev.prefix.size(), size_t{1});
        QCOMPARE(ev.prefix[0].cached, 16u);
        QCOMPARE(cursor.ttft, size_t{1});
        // Stamped at 150 ms, appended after a caller read the store at 200.
        store.record_first_token(150, 70);
        RequestMetrics done;
        done.e2e_ms = 120;
        store.record_finished(220, done, "stop");
        QVERIFY(store.events(200, 1000).ttft.empty());  // by time it would be missed
        ev = store.events_since(cursor);
        QCOMPARE(ev.ttft.size(), size_t{1});
        QCOMPARE(ev.ttft[0].t_ms, 150.0);
        QCOMPARE(ev.ttft[0].value_ms, 70.0);
        QCOMPARE(ev.e2e.size(), size_t{1});
        QCOMPARE(ev.e2e[0].value_ms, 120.0);
        QVERIFY(ev.prefix.empty());
        // Nothing new: nothing again.
        ev = store.events_since(cursor);
        QVERIFY(ev.ttft.empty() && ev.e2e.empty() && ev.prefix.empty());
    }

    // Scheduler telemetry: each pass as recorded, the queue gauge as it
    // ran, the preemptions since the pass before; paging by index; a
    // reset() drops the old run's passes but not their numbers.
    void store_pass_telemetry() {
        wb::metrics::MetricsStore store(0);
        store.set_gauges(3, 1, 16, 64);
        store.record_step(10, 5, 7, 1, true, 1, 2, 8);
        store.record_preempted(12);
        store.record_preempted(13);
        store.set_gauges(1, 2, 32, 64);
        store.record_step(20, 6, 0, 2, false, 2, 3, 8);
        store.record_step(30, 4, 0, 2, false, 2, 3, 8);
        std::vector<wb::metrics::PassTelemetry> p = store.passes_after(0, 100);
        QCOMPARE(p.size(), size_t(3));
        QCOMPARE(p[0].index, uint64_t(0));
        QCOMPARE(p[0].batch, 1u);
        QCOMPARE(p[0].prefill_tokens, 7u);
        QCOMPARE(p[0].decode_tokens, 1u);
        QCOMPARE(p[0].queued, 3);
        QCOMPARE(p[0].kv_blocks_used, 2u);
        QCOMPARE(p[0].kv_blocks_total, 8u);
        QCOMPARE(p[0].preemptions, 0u);
        QCOMPARE(p[1].queued, 1);
        QCOMPARE(p[1].preemptions, 2u);  // the two at 12 and 13 ms
        QCOMPARE(p[2].preemptions, 0u);
        QCOMPARE(p[2].end_ms, 30.0);
        QCOMPARE(p[2].duration_ms, 4.0);
        // Paging: from index 1, at most 1.
        p = store.passes_after(1, 1);
        QCOMPARE(p.size(), size_t(1));
        QCOMPARE(p[0].index, uint64_t(1));
        QVERIFY(store.passes_after(3, 10).empty());
        // After reset(): numbering goes on from 3.
        store.reset(100);
        store.record_step(110, 1, 0, 1, true, 1, 1, 8);
        p = store.passes_after(0, 10);
        QCOMPARE(p.size(), size_t(1));
        QCOMPARE(p[0].index, uint64_t(3));
        QCOMPARE(p[0].preemptions, 0u);
    }

    void store_is_thread_safe() {
        // One writer (like the engine thread) and one reader polling snapshots
        // (like the GUI timer); the totals must add up exactly at the end.
        MetricsStore store(0.0);
        std::thread writer([&] {
            for (int i = 1; i <= 20000; ++i) {
                store.record_inter_token(i, 1.0);
                store.record_step(i, 0.5, 0, 1);
            }
        });
        size_t polls = 0;
        for (int i = 0; i < 200; ++i) {
            const MetricsSnapshot s = store.snapshot(20000, 100);
            QVERIFY(s.run.itl_ms.count <= 20000);
            ++polls;
        }
        writer.join();
        const MetricsSnapshot s = store.snapshot(20000, 100);
        QCOMPARE(s.run.itl_ms.count, size_t{20000});
        QCOMPARE(s.run.decode_tokens, uint64_t{20000});
        QCOMPARE(s.window.decode_tokens, uint64_t{100});  // 19900 < t <= 20000
        QCOMPARE(polls, size_t{200});
    }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "test_metrics.moc"
