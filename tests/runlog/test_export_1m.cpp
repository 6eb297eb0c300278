// Export of 1,000,000 synthetic responses: checks the row count of CSV and
// JSONL exports and prints rows/s and the peak-RSS growth during each
// export (reported in the issue note; never asserted — no timing asserts).
// Rows are inserted with one raw INSERT ... SELECT (one transaction) (log_response's
// per-response durable commit would take far longer and is not what this
// measures).

#include <sqlite3.h>
#include <sys/resource.h>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>

#include "common/data_dir.h"
#include "runlog/exporter.h"
#include "runlog/run_log.h"

using namespace wb::runlog;

namespace {
constexpr int kRows = 1000000;

long max_rss_kib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;  // KiB on Linux
}
}  // namespace

class TestExport1M : public QObject {
    Q_OBJECT

  private slots:
    void exportMillionRows() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string path = dir.filePath("big.sqlite").toStdString();
        RunLog log = RunLog::open(path);
        const int64_t run = log.begin_run(RunKind::Batch, "1M", nlohmann::json::object());
        const int64_t mv =
            log.ensure_model_version(wbtest::data_dir() + "/models/stories260K.gguf");
        const int64_t env = log.ensure_environment(collect_environment("cpu"));

        QElapsedTimer t;
        t.start();
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(path.c_str(), &db), SQLITE_OK);
            // One INSERT ... SELECT over a recursive counter: one transaction,
            // no per-row round trips.
            const std::string sql =
                "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < " +
                std::to_string(kRows - 1) +
                ") INSERT INTO responses (run_id, model_version_id, environment_id, request_id, "
                "settings, redacted, prompt, prompt_sha256, prompt_bytes, prompt_tokens, output, "
                "output_sha256, output_bytes, output_tokens, finish_reason, queue_wait_ms, "
                "ttft_ms, "
                "tpot_ms, e2e_ms, prefill_tps, decode_tps, started_ms, finished_ms) SELECT " +
                std::to_string(run) + ", " + std::to_string(mv) + ", " + std::to_string(env) +
                ", 'p' || i, '{\"seed\":' || i || ',\"temperature\":0.8,\"max_tokens\":64}', 0, "
                "'Once upon a time, number ' || i, printf('%064x', i), 30, 8, "
                "'there was a \"cat\", a dog, and ' || i || ' mice. They played all day in the "
                "sun and were happy.', printf('%064x', i), 90, 64, 'length', 0.25, 12.5, 1.75, "
                "123.0, 2000.0, 570.5, 1764460800000 + i, 1764460800123 + i FROM c";
            QCOMPARE(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
            sqlite3_close(db);
        }
        qInfo("inserted %d rows in %.1f s", kRows, double(t.elapsed()) / 1000.0);

        for (ExportFormat fmt : {ExportFormat::Csv, ExportFormat::Jsonl}) {
            const bool csv = fmt == ExportFormat::Csv;
            const QString out = dir.filePath(csv ? "big.csv" : "big.jsonl");
            const long rss_before = max_rss_kib();
            t.restart();
            int64_t n = 0;
            {
                std::ofstream f(out.toStdString(), std::ios::binary);
                n = export_responses(log, {}, fmt, f);
            }
            const double s = double(t.elapsed()) / 1000.0;
            qInfo(
                "%s: %lld rows in %.2f s = %.0f rows/s, %.1f MiB written, peak RSS %ld KiB "
                "(+%ld KiB during export)",
                csv ? "CSV" : "JSONL", static_cast<long long>(n), s, double(n) / s,
                double(QFileInfo(out).size()) / 1048576.0, max_rss_kib(),
                max_rss_kib() - rss_before);
            QCOMPARE(n, int64_t{kRows});
            // Count records independently: synthetic text has no newlines, so
            // one line per record (+ the CSV header).
            QFile f(out);
            QVERIFY(f.open(QIODevice::ReadOnly));
            int64_t lines = 0;
            QByteArray last;
            while (!f.atEnd()) {
                last = f.readLine();
                ++lines;
            }
            QCOMPARE(lines, int64_t{kRows} + (csv ? 1 : 0));
            QVERIFY(last.contains("p999999"));
            QFile::remove(out);
        }
    }
};

QTEST_GUILESS_MAIN(TestExport1M)
#include "test_export_1m.moc"
