// The bench tables' layout (app/cli/bench_stats.h) with figures past what a
// fixed printf width holds: long names, latencies past 10 s, tens of
// thousands of requests/s. Columns must stay under their names.

#include <QtTest>
#include <string>
#include <vector>

#include "cli/bench_stats.h"

using namespace wb::cli;

namespace {

/// Positions (0-based) where a run of non-blank characters ends in `line`.
std::vector<size_t> field_ends(const std::string& line) {
    std::vector<size_t> e;
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] != ' ' && line[i] != '\n' &&
            (i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\n'))
            e.push_back(i);
    }
    return e;
}

}  // namespace

class TestBenchStats : public QObject {
    Q_OBJECT
  private slots:
    void repeat_stats_median_and_spread() {
        const RepeatStats s = repeat_stats({4.0, 1.0, 3.0, 2.0});
        QCOMPARE(s.median, 2.5);  // (2 + 3) / 2
        QCOMPARE(s.min, 1.0);
        QCOMPARE(s.max, 4.0);
    }

    void format_columns_fits_the_widest_cell() {
        const std::string t =
            format_columns({{"shape", "test", "t/s"},
                            {"n_embd 64, n_layer 5, n_ff 172", "pp512", "123456789.12"},
                            {"x", "tg1", "1.00"}},
                           {Align::Left, Align::Left, Align::Right}, true);
        QCOMPARE(t, std::string("| shape                          | test  |          t/s |\n"
                                "| n_embd 64, n_layer 5, n_ff 172 | pp512 | 123456789.12 |\n"
                                "| x                              | tg1   |         1.00 |\n"));
        const std::string plain =
            format_columns({{"op", "ms"}, {"a_very_long_operation_name_indeed", "12345.6789"}},
                           {Align::Left, Align::Right}, false);
        QCOMPARE(plain, std::string("op                                        ms\n"
                                    "a_very_long_operation_name_indeed 12345.6789\n"));
    }

    void concurrency_rows_stay_under_their_names() {
        // A slow level: 20 min of wall time, latencies far past 10 s (queue
        // wait and TTFT 123 456.78 ms, ITL 12 345.678 ms), and a fast one:
        // 12 345.67 requests/s, 12 345 678.9 tokens/s.
        wb::metrics::WindowStats slow;
        slow.begin_ms = 0;
        slow.end_ms = 1.2e6;
        slow.input_tokens_per_s = slow.output_tokens_per_s = 0.5;
        slow.requests_per_s = 0.01;
        slow.queue_wait_ms.p50 = slow.queue_wait_ms.p95 = slow.queue_wait_ms.p99 = 123456.78;
        slow.ttft_ms.p50 = slow.ttft_ms.p99 = 123456.78;
        slow.itl_ms.p50 = slow.itl_ms.p99 = 12345.678;
        wb::metrics::WindowStats fast;
        fast.begin_ms = 0;
        fast.end_ms = 10;
        fast.input_tokens_per_s = fast.output_tokens_per_s = 12345678.9;
        fast.requests_per_s = 12345.67;
        fast.queue_wait_ms.p50 = fast.ttft_ms.p50 = fast.itl_ms.p50 = 0.001;
        // The names hold blanks ("in tok/s"), so find where each one ends.
        const std::string head = concurrency_table_header();
        std::vector<size_t> name_ends;
        size_t from = 0;
        for (const char* name :
             {"conc", "requests", "wall s", "in tok/s", "out tok/s", "req/s", "wait p50",
              "wait p95", "wait p99", "TTFT p50", "TTFT p99", "ITL p50", "ITL p99", "speedup"}) {
            const size_t at = head.find(name, from);
            QVERIFY2(at != std::string::npos, name);
            from = at + std::string(name).size();
            name_ends.push_back(from - 1);
        }
        for (const wb::metrics::WindowStats* w : {&slow, &fast}) {
            const std::string row =
                concurrency_table_row(4096, 16384, *w, w->output_tokens_per_s / 2);
            QVERIFY2(field_ends(row) == name_ends, (head + row).c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestBenchStats)
#include "test_bench_stats.moc"
