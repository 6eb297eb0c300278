// The server's Prometheus metrics (app/server/metrics). Expected texts and
// bucket counts are worked by hand below from the exposition format spec
// (prometheus.io/docs/instrumenting/exposition_formats); every rendering is
// also parsed by Python's prometheus_client (parse_exposition.py), an
// independent reader. The session test runs stories260K on the CPU
// backend (and on Vulkan in metrics_export_vk). Nothing asserts on timing.

#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/data_dir.h"
#include "common/process.h"
#include "core/engine_session.h"
#include "kv/kv_cells.h"
#include "runlog/model_facts.h"
#include "server/metrics/model_version.h"
#include "server/metrics/prometheus.h"
#include "server/metrics/server_metrics.h"
#include "server/metrics/version_gauges.h"

using namespace wb;
using namespace std::chrono_literals;

namespace {

const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";
const std::string kRoute = "/v1/chat/completions";
// The session test's backend: the CPU reference, or Vulkan in the
// metrics_export_vk build (lavapipe in CI), where memory is device memory.
#ifdef WB_METRICS_EXPORT_VK
constexpr const char* kBackend = "vulkan";
#else
constexpr const char* kBackend = "cpu";
#endif

bool contains_line(const std::string& text, const std::string& line) {
    return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

/// A finished request worked by hand: submitted at 0, admitted at 15.625 ms,
/// first token at 31.25 ms, gaps 15.625, 31.25 and 1500 ms, finished at
/// 2000 ms; 5 prompt tokens (3 cached), 4 output tokens. Every time is a
/// binary fraction, so the sums in seconds are exact.
core::FinishedRequest worked_request() {
    core::FinishedRequest f;
    f.finish_reason = "stop";
    f.prompt_tokens = {1, 2, 3, 4, 5};
    f.prompt_tokens_cached = 3;
    f.prompt_tokens_computed = 2;
    f.output_tokens = {6, 7, 8, 9};
    f.times.submitted_ms = 0.0;
    f.times.admitted_ms = 15.625;
    f.times.first_token_ms = 31.25;
    f.times.itl_ms = {15.625, 31.25, 1500.0};
    f.times.last_token_ms = 31.25 + 15.625 + 31.25 + 1500.0;
    f.times.finished_ms = 2000.0;
    return f;
}

/// Runs parse_exposition.py on `text` with `checks` ("family=count").
wbtest::ProcessResult parse(const QTemporaryDir& dir, const std::string& text,
                            const QStringList& checks = {}) {
    const std::string path = dir.filePath("exposition.txt").toStdString();
    {
        std::ofstream f(path, std::ios::binary);
        f << text;
    }
    QStringList args = {WB_PARSE_EXPOSITION, QString::fromStdString(path)};
    args += checks;
    return wbtest::run_process(WB_PYTHON3, args, 120000);
}

}  // namespace

class TestMetricsExport : public QObject {
    Q_OBJECT

  private:
    QTemporaryDir dir_;

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // A registry's whole text, worked by hand: a histogram with bounds
    // 0.25, 0.5, 1 observes 0.125, 0.25, 0.375, 0.75, 2. Buckets (le is
    // "less or equal", cumulative): le 0.25 -> {0.125, 0.25} = 2; le 0.5
    // -> +0.375 = 3; le 1 -> +0.75 = 4; +Inf -> +2 = 5. Sum 3.5, count 5.
    void registry_text_worked_by_hand() {
        server::Registry r;
        auto& c = r.counter("demo_requests_total", "Requests.", {"kind"});
        auto& g = r.gauge("demo_level", "A level.", {"which"});
        auto& h = r.histogram("demo_latency_seconds", "Latency.", {"v"}, {0.25, 0.5, 1.0});
        c.inc({"a"});
        c.inc({"a"});
        c.inc({"b"}, 2.5);
        g.set({"nan"}, std::numeric_limits<double>::quiet_NaN());
        g.set({"pinf"}, std::numeric_limits<double>::infinity());
        g.set({"ninf"}, -std::numeric_limits<double>::infinity());
        g.set({"small"}, 0.00001);
        for (double v : {0.125, 0.25, 0.375, 0.75, 2.0}) h.observe({"x"}, v);
        const std::string expected =
            "# HELP demo_requests_total Requests.\n"
            "# TYPE demo_requests_total counter\n"
            "demo_requests_total{kind=\"a\"} 2\n"
            "demo_requests_total{kind=\"b\"} 2.5\n"
            "# HELP demo_level A level.\n"
            "# TYPE demo_level gauge\n"
            "demo_level{which=\"nan\"} NaN\n"
            "demo_level{which=\"ninf\"} -Inf\n"
            "demo_level{which=\"pinf\"} +Inf\n"
            "demo_level{which=\"small\"} 1e-05\n"
            "# HELP demo_latency_seconds Latency.\n"
            "# TYPE demo_latency_seconds histogram\n"
            "demo_latency_seconds_bucket{v=\"x\",le=\"0.25\"} 2\n"
            "demo_latency_seconds_bucket{v=\"x\",le=\"0.5\"} 3\n"
            "demo_latency_seconds_bucket{v=\"x\",le=\"1\"} 4\n"
            "demo_latency_seconds_bucket{v=\"x\",le=\"+Inf\"} 5\n"
            "demo_latency_seconds_sum{v=\"x\"} 3.5\n"
            "demo_latency_seconds_count{v=\"x\"} 5\n";
        const std::string text = r.render();
        QCOMPARE(QString::fromStdString(text), QString::fromStdString(expected));
        const auto p = parse(dir_, text, {"demo_latency_seconds=5"});
        QVERIFY2(p.code == 0, (p.out + p.err).constData());
    }

    // Label values escape backslash, double quote and line feed; HELP
    // escapes backslash and line feed (the spec's two escaping rules).
    // histogram_quantile() by hand: bounds 0.25, 0.5, 1 and observations
    // 0.125, 0.25 | 0.375 | 0.75 | 2 (buckets 2, 1, 1, +Inf 1; count 5).
    // q = 0.2: rank 1 in the first bucket [0, 0.25]: 0.25 * 1/2 = 0.125.
    // q = 0.5: rank 2.5, second bucket: 0.25 + 0.25 * 0.5/1 = 0.375.
    // q = 0.7: rank 3.5, third bucket: 0.5 + 0.5 * 0.5/1 = 0.75.
    // q = 0.99: rank 4.95 in +Inf: the highest finite bound, 1.
    // Counters summed over matching label sets as PromQL's sum(m{k="a"}).
    void quantiles_and_sums_worked_by_hand() {
        server::Registry r;
        auto& h = r.histogram("demo_latency_seconds", "Latency.", {"v"}, {0.25, 0.5, 1.0});
        for (double v : {0.125, 0.25, 0.375, 0.75, 2.0}) h.observe({"x"}, v);
        QCOMPARE(h.quantile({"x"}, 0.2), 0.125);
        QCOMPARE(h.quantile({"x"}, 0.5), 0.375);
        QCOMPARE(h.quantile({"x"}, 0.7), 0.75);
        QCOMPARE(h.quantile({"x"}, 0.99), 1.0);
        QVERIFY(std::isnan(h.quantile({"y"}, 0.5)));  // no observations
        QVERIFY(std::isnan(h.quantile({"x"}, 1.5)));  // not a quantile
        auto& c = r.counter("demo_requests_total", "Requests.", {"version", "status"});
        c.inc({"a", "200"}, 2);
        c.inc({"a", "429"});
        c.inc({"b", "200"}, 4);
        QCOMPARE(c.sum_matching({"a"}), 3.0);
        QCOMPARE(c.sum_matching({"", "200"}), 6.0);
        QCOMPARE(c.sum_matching({"a", "200"}), 2.0);
        QCOMPARE(c.sum_matching({}), 7.0);
        QCOMPARE(c.sum_matching({"c"}), 0.0);
    }

    void escaping() {
        QCOMPARE(server::escape_label_value("a\\b\"c\nd"), std::string("a\\\\b\\\"c\\nd"));
        QCOMPARE(server::escape_help("x\\y\nz\"q"), std::string("x\\\\y\\nz\"q"));
        // Not UTF-8 (a Latin-1 byte): U+FFFD, so the scrape stays readable.
        QCOMPARE(server::escape_label_value("caf\xe9"), std::string("caf\xef\xbf\xbd"));
        server::Registry r;
        auto& c = r.counter("demo_total", "Back\\slash and\nnewline.", {"path"});
        c.inc({"C:\\x \"y\"\nz"});
        c.inc({"caf\xe9"});  // sorts after "C:..."; the parser reads the file as UTF-8
        const std::string text = r.render();
        QVERIFY(contains_line(text, "# HELP demo_total Back\\\\slash and\\nnewline."));
        QVERIFY(contains_line(text, "demo_total{path=\"C:\\\\x \\\"y\\\"\\nz\"} 1"));
        const auto p = parse(dir_, text);
        QVERIFY2(p.code == 0, (p.out + p.err).constData());
        // prometheus_client unescapes it back to the original value.
        const auto q = wbtest::run_process(WB_PYTHON3,
                                           {"-c",
                                            "import sys\nfrom prometheus_client.parser import "
                                            "text_string_to_metric_families as t\n"
                                            "f = list(t(open(sys.argv[1]).read()))\n"
                                            "sys.stdout.write(f[0].samples[0].labels['path'])",
                                            dir_.filePath("exposition.txt")},
                                           120000);
        QCOMPARE(q.code, 0);
        QCOMPARE(q.out.toStdString(), std::string("C:\\x \"y\"\nz"));
    }

    // Bad names, wrong label counts and bad observations are refused with
    // a message naming the metric.
    void bad_input_is_refused() {
        server::Registry r;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.counter("1bad", "", {}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.counter("ok_total", "", {"a-b"}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.counter("ok2_total", "", {"__x"}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.histogram("h1", "", {"le"}, {1.0}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.histogram("h2", "", {}, {1.0, 1.0}));
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            r.histogram("h3", "", {}, {std::numeric_limits<double>::infinity()}));
        auto& c = r.counter("c_total", "", {"a"});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, r.counter("c_total", "", {"a"}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, c.inc({}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, c.inc({"x"}, -1.0));
        auto& h = r.histogram("h_seconds", "", {}, {1.0});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 h.observe({}, std::numeric_limits<double>::quiet_NaN()));
        try {
            c.inc({"x", "y"});
            QFAIL("no throw");
        } catch (const std::invalid_argument& e) {
            QVERIFY(std::string(e.what()).find("c_total") != std::string::npos);
        }
    }

    // ServerMetrics on the hand-worked request (worked_request()), seconds:
    // queue wait 0.015625, TTFT 0.03125, gaps 0.015625, 0.03125, 1.5, e2e 2.
    void server_metrics_worked_by_hand() {
        server::ServerMetrics m;
        m.observe(worked_request(), 200, kRoute, "F32-270cba1b");
        m.observe_refused(429, kRoute, "F32-270cba1b");
        server::VersionGauges g;
        g.model_version = "F32-270cba1b";
        g.running = 1;
        g.queued = 2;
        g.kv_blocks_used = 3;
        g.kv_blocks_free = 29;
        g.kv_blocks_cached = 4;
        g.prefix_cache_hit_rate = std::numeric_limits<double>::quiet_NaN();
        g.memory_bytes = 1048576;
        g.busy_share = 0.25;
        const std::string t = m.render({g});
        const std::string v = "model_version=\"F32-270cba1b\"";
        const std::string vr = v + ",route=\"/v1/chat/completions\"";
        const std::vector<std::string> lines = {
            "workbench_requests_total{" + vr + ",status=\"200\",finish_reason=\"stop\"} 1",
            "workbench_requests_total{" + vr + ",status=\"429\",finish_reason=\"rejected\"} 1",
            "workbench_prompt_tokens_total{" + vr + "} 5",
            "workbench_prompt_tokens_cached_total{" + vr + "} 3",
            "workbench_generation_tokens_total{" + vr + "} 4",
            // TTFT 0.03125 s: not <= 0.025, <= 0.05.
            "workbench_time_to_first_token_seconds_bucket{" + v + ",le=\"0.025\"} 0",
            "workbench_time_to_first_token_seconds_bucket{" + v + ",le=\"0.05\"} 1",
            "workbench_time_to_first_token_seconds_bucket{" + v + ",le=\"+Inf\"} 1",
            "workbench_time_to_first_token_seconds_sum{" + v + "} 0.03125",
            "workbench_time_to_first_token_seconds_count{" + v + "} 1",
            // Gaps 0.015625, 0.03125, 1.5 s.
            "workbench_inter_token_latency_seconds_bucket{" + v + ",le=\"0.015\"} 0",
            "workbench_inter_token_latency_seconds_bucket{" + v + ",le=\"0.02\"} 1",
            "workbench_inter_token_latency_seconds_bucket{" + v + ",le=\"0.03\"} 1",
            "workbench_inter_token_latency_seconds_bucket{" + v + ",le=\"0.04\"} 2",
            "workbench_inter_token_latency_seconds_bucket{" + v + ",le=\"1\"} 2",
            "workbench_inter_token_latency_seconds_bucket{" + v + ",le=\"2.5\"} 3",
            "workbench_inter_token_latency_seconds_sum{" + v + "} 1.546875",
            "workbench_inter_token_latency_seconds_count{" + v + "} 3",
            // e2e 2 s: not <= 1, <= 2.5.
            "workbench_e2e_request_latency_seconds_bucket{" + v + ",le=\"1\"} 0",
            "workbench_e2e_request_latency_seconds_bucket{" + v + ",le=\"2.5\"} 1",
            "workbench_e2e_request_latency_seconds_sum{" + v + "} 2",
            // Queue wait 0.015625 s: not <= 0.01, <= 0.025.
            "workbench_request_queue_time_seconds_bucket{" + v + ",le=\"0.01\"} 0",
            "workbench_request_queue_time_seconds_bucket{" + v + ",le=\"0.025\"} 1",
            "workbench_request_queue_time_seconds_sum{" + v + "} 0.015625",
            "workbench_requests_running{" + v + "} 1",
            "workbench_requests_waiting{" + v + "} 2",
            "workbench_kv_blocks_used{" + v + "} 3",
            "workbench_kv_blocks_free{" + v + "} 29",
            "workbench_kv_blocks_cached{" + v + "} 4",
            "workbench_prefix_cache_hit_rate{" + v + "} NaN",
            "workbench_memory_bytes{" + v + ",location=\"host\"} 1048576",
            "workbench_engine_busy_ratio{" + v + "} 0.25",
            "# TYPE workbench_time_to_first_token_seconds histogram",
            "# TYPE workbench_requests_total counter",
            "# TYPE workbench_requests_running gauge",
        };
        for (const std::string& line : lines) {
            QVERIFY2(contains_line(t, line), ("missing: " + line + "\nin:\n" + t).c_str());
        }
        const auto p = parse(
            dir_, t,
            {"workbench_time_to_first_token_seconds=1", "workbench_inter_token_latency_seconds=3",
             "workbench_e2e_request_latency_seconds=1", "workbench_request_queue_time_seconds=1"});
        QVERIFY2(p.code == 0, (p.out + p.err).constData());
    }

    // A request refused by the session (never admitted, no token) counts
    // as a request, but has no latency and no prompt tokens.
    void refused_request_has_no_latency() {
        core::FinishedRequest f;
        f.finish_reason = "rejected";
        f.refused = true;
        f.prompt_tokens = {1, 2, 3};
        f.times.finished_ms = 1.0;
        server::ServerMetrics m;
        m.observe(f, 429, kRoute, "v");
        const std::string t = m.render({});
        QVERIFY(contains_line(t, "workbench_requests_total{model_version=\"v\",route=\"" + kRoute +
                                     "\",status=\"429\",finish_reason=\"rejected\"} 1"));
        QVERIFY(t.find("workbench_e2e_request_latency_seconds_count") == std::string::npos);
        QVERIFY(t.find("workbench_prompt_tokens_total{") == std::string::npos);
    }

    // Four threads observe while this one renders; every rendering parses
    // and the final counts are every observation.
    void concurrent_observe_and_render() {
        server::ServerMetrics m;
        constexpr int kThreads = 4, kEach = 2000;
        std::atomic<bool> go{false};
        std::atomic<int> done{0};
        std::vector<std::thread> threads;
        for (int i = 0; i < kThreads; ++i) {
            threads.emplace_back([&, i] {
                const core::FinishedRequest f = worked_request();
                const std::string version = i % 2 ? "A-00000000" : "B-11111111";
                while (!go.load()) std::this_thread::yield();
                for (int k = 0; k < kEach; ++k) m.observe(f, 200, kRoute, version);
                done.fetch_add(1);
            });
        }
        std::string mid;
        int renders = 0;
        go.store(true);
        do {
            mid = m.render({});
            ++renders;
        } while (done.load() < kThreads);
        for (auto& t : threads) t.join();
        QVERIFY(renders > 0);
        const auto pm = parse(dir_, mid);  // a snapshot taken while observing
        QVERIFY2(pm.code == 0, (pm.out + pm.err).constData());
        const int n = kThreads * kEach;
        const auto p = parse(dir_, m.render({}),
                             {QString("workbench_time_to_first_token_seconds=%1").arg(n),
                              QString("workbench_e2e_request_latency_seconds=%1").arg(n),
                              QString("workbench_request_queue_time_seconds=%1").arg(n),
                              QString("workbench_inter_token_latency_seconds=%1").arg(3 * n)});
        QVERIFY2(p.code == 0, (p.out + p.err).constData());
    }

    // The model_version label of stories260K: F32 (its tensors' one type;
    // runlog/model_label.h's rule) and the first 8 hex digits of the
    // SHA-256 tests/data/SHA256SUMS lists for it.
    void model_version_label_of_stories260k() {
        QCOMPARE(server::model_version_label_of_file(kModel), std::string("F32-270cba1b"));
        runlog::ModelFacts facts;
        facts.file_type_name = "MOSTLY_Q4_K_M";
        QCOMPARE(server::model_version_label(facts, "1f0c2a9e77"), std::string("Q4_K_M-1f0c2a9e"));
        facts.file_type_name.reset();
        facts.tensor_types = {{"f16", 3}, {"q8_0", 4}};
        QCOMPARE(server::model_version_label(facts, "abcdef0123"), std::string("mixed-abcdef01"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, server::model_version_label(facts, "abc"));
    }

    // gauges_of on a real session after a few requests: nothing running or
    // queued, used + free blocks = the pool (n_ctx / block size), a hit
    // rate in (0, 1) (> 0: the repeated prompt's full blocks are cached),
    // a busy share in (0, 1]. The finished requests go through
    // ServerMetrics too, and the histogram counts are the requests.
    void gauges_of_a_real_session() {
        constexpr uint32_t kSlots = 2, kCells = 256;
        core::SessionOptions so;
        so.load.backend = kBackend;
        so.load.context.n_ctx = kSlots * kCells;
        so.load.context.n_seq_max = kSlots;
        auto s = core::EngineSession::open(kModel, so);

        server::ServerMetrics m;
        const std::string version = server::model_version_label_of_file(kModel);
        std::mutex mu;
        size_t gaps = 0;
        double prompt = 0, cached = 0;  // summed from each request's own counts
        constexpr int kRequests = 3;
        for (int i = 0; i < kRequests; ++i) {
            core::GenerationRequest r;
            r.prompt =
                "Once upon a time, there was a little girl named Lily. She loved to play outside "
                "in the sunshine with her dog and her friends in the big green park.";
            r.max_tokens = 8;
            r.ignore_eos = true;
            r.sampling.temperature = 0.0f;
            s->submit(r, [&](const core::RequestEvent& e) {
                if (e.type != core::RequestEvent::Type::Finished) return;
                std::lock_guard lock(mu);
                gaps += e.result->times.itl_ms.size();
                prompt += static_cast<double>(e.result->prompt_tokens.size());
                cached += e.result->prompt_tokens_cached;
                m.observe(*e.result, 200, "/v1/completions", version);
            });
            QVERIFY(s->wait_idle(120s));  // one after another: later ones hit the cache
        }

        const server::VersionGauges g = server::gauges_of(*s, version);
        QCOMPARE(g.model_version, version);
        QCOMPARE(g.running, 0.0);
        QCOMPARE(g.queued, 0.0);
        const double pool_blocks = static_cast<double>(kSlots * kCells) /
                                   static_cast<double>(model::KvCells::kDefaultBlockSize);
        QCOMPARE(g.kv_blocks_used + g.kv_blocks_free, pool_blocks);
        QVERIFY(g.kv_blocks_cached <= g.kv_blocks_free);
        // The first request computed its whole prompt, so the rate is < 1;
        // and it agrees with the requests' own cached counts (another path:
        // FinishedRequest, not the metrics store).
        QVERIFY2(g.prefix_cache_hit_rate > 0.0 && g.prefix_cache_hit_rate < 1.0,
                 std::to_string(g.prefix_cache_hit_rate).c_str());
        QCOMPARE(g.prefix_cache_hit_rate, cached / prompt);
        QVERIFY2(g.busy_share > 0.0 && g.busy_share <= 1.0, std::to_string(g.busy_share).c_str());
        QVERIFY(g.memory_bytes > 0);
        QCOMPARE(g.memory_on_device, std::string(kBackend) == "vulkan");

        // The session's counts are since open: a metrics reset keeps them.
        const core::SessionStats before = s->stats();
        s->reset_metrics();
        const core::SessionStats after = s->stats();
        QCOMPARE(after.prompt_tokens, before.prompt_tokens);
        QCOMPARE(after.prompt_tokens_cached, before.prompt_tokens_cached);
        QCOMPARE(after.kv_blocks_total, before.kv_blocks_total);
        QCOMPARE(after.steps, before.steps);

        const auto p = parse(dir_, m.render({g}),
                             {QString("workbench_e2e_request_latency_seconds=%1").arg(kRequests),
                              QString("workbench_time_to_first_token_seconds=%1").arg(kRequests),
                              QString("workbench_inter_token_latency_seconds=%1").arg(gaps)});
        QVERIFY2(p.code == 0, (p.out + p.err).constData());
        QCOMPARE(gaps, static_cast<size_t>(kRequests * 7));  // 8 tokens: 7 gaps each
    }
};

QTEST_GUILESS_MAIN(TestMetricsExport)
#include "test_metrics_export.moc"
