// ResponseRows on a real run-log file: the row a response gets when it
// starts, its throttled text updates, the final fields written in place, and
// writes that fail while another program holds the write lock kept and
// retried in order, never dropped.
//
// Expected rows are read back with the raw SQLite C API (independent of
// wb_runlog); the lock is taken by a second raw connection, as another
// program would hold it.

#include <sqlite3.h>

#include <QTemporaryDir>
#include <QtTest>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "runlog/environment.h"
#include "runlog/response_rows.h"
#include "runlog/run_log.h"

using namespace wb::runlog;

namespace {

const std::string kStories = wbtest::data_dir() + "/models/stories260K.gguf";

using Rows = std::vector<std::vector<std::string>>;

}  // namespace

class TestResponseRows : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    std::string path_;
    ResponseRecord base_;

    // A fresh log with one run, model version and environment; base_ is a
    // started response of it.
    RunLog fresh(const char* name) {
        path_ = dir_.filePath(name).toStdString();
        RunLog log = RunLog::open(path_);
        base_ = {};
        base_.run_id = log.begin_run(RunKind::Batch, "rows", nlohmann::json::object());
        base_.model_version_id = log.ensure_model_version(kStories);
        base_.environment_id = log.ensure_environment(collect_environment("cpu"));
        base_.prompt = "Once upon a time";
        base_.started_ms = 1764460800000;
        return log;
    }
    ResponseRecord finished(const std::string& key, const std::string& output) const {
        ResponseRecord r = base_;
        r.request_id = key;
        r.output = output;
        r.output_tokens = 3;
        r.finish_reason = "length";
        r.finished_ms = base_.started_ms + 250;
        return r;
    }

  private slots:
    // Started row, throttled updates, final fields in the same row.
    void row_lives_from_start_to_finish() {
        RunLog log = fresh("lifecycle.sqlite");
        ResponseRows rows(log, 1000.0);
        ResponseRecord s = base_;
        s.request_id = "p1";
        rows.start("p1", s);
        const std::string q =
            "SELECT id, finish_reason, output, output_tokens, finished_ms "
            "FROM responses";
        Rows r = wbtest::RawSqlite(path_, true).rows(q);
        QCOMPARE(r.size(), size_t(1));
        const std::string id = r[0][0];
        QCOMPARE(r[0], (std::vector<std::string>{id, "interrupted", "", "<null>", "<null>"}));

        rows.text("p1", "Once", 1, 0.0);          // first update: written
        rows.text("p1", "Once there", 2, 500.0);  // 0.5 s later: throttled
        QCOMPARE(wbtest::RawSqlite(path_, true).rows(q)[0][2], std::string("Once"));
        rows.text("p1", "Once there was", 3, 1200.0);  // past a second: written
        r = wbtest::RawSqlite(path_, true).rows(q);
        QCOMPARE(r[0],
                 (std::vector<std::string>{id, "interrupted", "Once there was", "3", "<null>"}));

        rows.start("p1", s);  // resumed after preemption: still one row
        QCOMPARE(wbtest::RawSqlite(path_, true).rows(q).size(), size_t(1));
        rows.finish("p1", finished("p1", "Once there was a"));
        r = wbtest::RawSqlite(path_, true).rows(q);
        QCOMPARE(r.size(), size_t(1));
        QCOMPARE(r[0], (std::vector<std::string>{id, "length", "Once there was a", "3",
                                                 std::to_string(base_.started_ms + 250)}));
        QCOMPARE(rows.unlogged(), size_t(0));
        QCOMPARE(rows.last_error(), std::string());
    }

    // Another program holds the write lock: the started row of p1 is
    // written, then p1's finish and all of p2 (start and finish) fail. Both
    // finished responses are kept, reported once, and written in order by
    // flush() after the lock is released; p1's started row is finished in
    // place (no second row).
    void locked_log_keeps_finished_responses_and_retries_in_order() {
        RunLog log = fresh("locked.sqlite");
        log.set_write_retry(1, 50);  // fail fast while locked
        ResponseRows rows(log);
        ResponseRecord s = base_;
        s.request_id = "p1";
        rows.start("p1", s);
        {
            wbtest::RawSqlite holder(path_, true);
            holder.exec("BEGIN IMMEDIATE");
            rows.finish("p1", finished("p1", "first"));
            QCOMPARE(rows.unlogged(), size_t(1));
            const std::string err = rows.take_new_error();
            QVERIFY2(err.find(path_ + ": the run log stayed locked by another program") == 0,
                     err.c_str());
            QCOMPARE(rows.take_new_error(), std::string());  // each failure reported once
            s.request_id = "p2";
            rows.start("p2", s);  // fails: finish() inserts the whole row
            rows.text("p2", "sec", 1, 5000.0);
            rows.finish("p2", finished("p2", "second"));
            QCOMPARE(rows.unlogged(), size_t(2));
            QCOMPARE(rows.flush(), size_t(2));  // still locked
            QVERIFY(!rows.last_error().empty());
            holder.exec("COMMIT");
        }
        QCOMPARE(rows.flush(), size_t(0));
        QCOMPARE(rows.unlogged(), size_t(0));
        QCOMPARE(rows.last_error(), std::string());
        const Rows r =
            wbtest::RawSqlite(path_, true)
                .rows("SELECT request_id, finish_reason, output FROM responses ORDER BY id");
        QCOMPARE(r, (Rows{{"p1", "length", "first"}, {"p2", "length", "second"}}));
    }

    // A kept finish is written by the next start (no flush needed), before
    // the new response's row.
    void next_start_retries_kept_rows_first() {
        RunLog log = fresh("next.sqlite");
        log.set_write_retry(1, 50);
        ResponseRows rows(log);
        {
            wbtest::RawSqlite holder(path_, true);
            holder.exec("BEGIN IMMEDIATE");
            rows.finish("p1", finished("p1", "kept"));
            holder.exec("COMMIT");
        }
        QCOMPARE(rows.unlogged(), size_t(1));
        ResponseRecord s = base_;
        s.request_id = "p2";
        rows.start("p2", s);
        QCOMPARE(rows.unlogged(), size_t(0));
        const Rows r =
            wbtest::RawSqlite(path_, true)
                .rows("SELECT request_id, finish_reason, output FROM responses ORDER BY id");
        QCOMPARE(r, (Rows{{"p1", "length", "kept"}, {"p2", "interrupted", ""}}));
    }
};

QTEST_GUILESS_MAIN(TestResponseRows)
#include "test_response_rows.moc"
