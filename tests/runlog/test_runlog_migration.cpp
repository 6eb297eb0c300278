// Schema migration on real files: the log the released schema v3 wrote
// (tests/data/runlog/runlog_v3.sqlite, made by workbench-cli at commit
// c17a0c2; its contents are listed in tests/data/runlog/README.md) opens
// with this build, migrates to the current schema and reads back every row
// of every table complete. Expected values come from outside the code
// under test: the sqlite3 CLI's reading of the fixture when it was made
// (the constants below), sha256sum, and the fixture itself read through
// the SQLite C API (wbtest::RawSqlite) before the migration.

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/process.h"
#include "common/raw_sqlite.h"
#include "runlog/exporter.h"
#include "runlog/run_log.h"
#include "runlog/schema.h"
#include "runlog/sqlite_db.h"

using namespace wb::runlog;
using Rows = std::vector<std::vector<std::string>>;

namespace {

const std::string kData = wbtest::data_dir();
const QString kFixture = QString::fromStdString(kData) + "/runlog/runlog_v3.sqlite";

// Every table of the v3 schema and its columns, in the fixture's order.
const char* const kV3Tables[] = {"model_versions", "file_hash_cache", "environments",
                                 "runs",           "responses",       "settings"};

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

// Column names of `table` as the raw connection sees them.
std::vector<std::string> columns(const wbtest::RawSqlite& raw, const std::string& table) {
    std::vector<std::string> out;
    for (const auto& r : raw.rows("SELECT name FROM pragma_table_info('" + table + "')"))
        out.push_back(r[0]);
    return out;
}

// Every row of `table`, the given columns as quote() text (type and value
// exact: 'text', 12, 1.25e+00, NULL), ordered by rowid.
Rows quoted_rows(const wbtest::RawSqlite& raw, const std::string& table,
                 const std::vector<std::string>& cols) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < cols.size(); ++i) sql += (i ? ", quote(" : "quote(") + cols[i] + ")";
    sql += " FROM " + table + " ORDER BY rowid";
    return raw.rows(sql);
}

}  // namespace

class TestRunLogMigration : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int counter_ = 0;

    // A private copy of the fixture (the test never writes the original).
    QString fixture_copy() {
        const QString to = dir_.filePath(QString("v3-%1.sqlite").arg(counter_++));
        if (!QFile::copy(kFixture, to)) qFatal("cannot copy the fixture");
        QFile::setPermissions(to, QFile::ReadOwner | QFile::WriteOwner);
        return to;
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY2(QFile::exists(kFixture), qPrintable(kFixture));
    }

    void cleanupTestCase() {
        // The fixture folder holds the fixture and its README only.
        QVERIFY(!QFile::exists(kFixture + "-wal"));
        QVERIFY(!QFile::exists(kFixture + "-shm"));
    }

    // The fixture is what its README says (sqlite3 CLI, when it was made).
    void fixtureIsTheReleasedV3Log() {
        // Even a read-only SQLite connection leaves -wal/-shm files beside a
        // WAL log: the fixture is only ever read through a copy.
        const wbtest::RawSqlite raw(fixture_copy());
        QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::string("3"));
        QCOMPARE(raw.rows("PRAGMA application_id")[0][0], std::string("1230455372"));
        QCOMPARE(
            raw.rows(
                "SELECT group_concat(kind, ',') FROM (SELECT kind FROM runs ORDER BY id)")[0][0],
            std::string("generate,generate,batch,generate"));
    }

    // The released v3 log opens with this build, migrates, and every value
    // of every row it held reads back the same, in place (same ids).
    void v3LogMigratesAndReadsBackComplete() {
        const QString path = fixture_copy();
        // Before: every table, every column, as the raw connection reads it.
        std::map<std::string, std::vector<std::string>> cols;
        std::map<std::string, Rows> before;
        {
            const wbtest::RawSqlite raw(path);
            for (const char* t : kV3Tables) {
                cols[t] = columns(raw, t);
                QVERIFY2(!cols[t].empty(), t);
                before[t] = quoted_rows(raw, t, cols[t]);
            }
        }
        { RunLog log = RunLog::open(path.toStdString()); }  // strict open: check, migrate

        const wbtest::RawSqlite raw(path);
        QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::to_string(schema_version()));
        QCOMPARE(raw.rows("PRAGMA integrity_check")[0][0], std::string("ok"));
        QVERIFY(raw.rows("PRAGMA foreign_key_check").empty());
        for (const char* t : kV3Tables) {
            // Every column the table had is still there, every row identical.
            const std::vector<std::string> now = columns(raw, t);
            for (const std::string& c : cols[t])
                QVERIFY2(std::find(now.begin(), now.end(), c) != now.end(),
                         (std::string(t) + "." + c + " is gone").c_str());
            const Rows after = quoted_rows(raw, t, cols[t]);
            QCOMPARE(after.size(), before[t].size());
            for (size_t i = 0; i < after.size(); ++i)
                QVERIFY2(after[i] == before[t][i],
                         (std::string(t) + " row " + std::to_string(i + 1) + " changed").c_str());
        }

        // The independent expectations (sqlite3 CLI on the fixture when it
        // was made, tests/data/runlog/README.md).
        auto one = [&](const std::string& sql) { return raw.rows(sql).at(0).at(0); };
        QCOMPARE(one("SELECT count(*) FROM runs"), std::string("4"));
        QCOMPARE(one("SELECT count(*) FROM responses"), std::string("6"));
        QCOMPARE(one("SELECT count(*) FROM model_versions"), std::string("1"));
        QCOMPARE(one("SELECT count(*) FROM file_hash_cache"), std::string("1"));
        QCOMPARE(one("SELECT count(*) FROM environments"), std::string("1"));
        QCOMPARE(one("SELECT group_concat(key || '=' || value) FROM settings"),
                 std::string("redact_text=0"));
        QCOMPARE(one("SELECT group_concat(kind, ',') FROM (SELECT kind FROM runs ORDER BY id)"),
                 std::string("generate,generate,batch,generate"));
        QCOMPARE(one("SELECT name || '|' || json_extract(settings, '$.seed') || '|' || "
                     "json_extract(settings, '$.seed_policy') || '|' || "
                     "json_extract(settings, '$.concurrency') || '|' || "
                     "(ended_ms - started_ms) FROM runs WHERE id = 3"),
                 std::string("prompts.txt|7|base+index|2|98"));
        QCOMPARE(one("SELECT json_extract(settings, '$.prompt_mode') FROM runs WHERE id = 2"),
                 std::string("chat"));
        QCOMPARE(one("SELECT group_concat(request_id || ':' || finish_reason || ':' || "
                     "prompt_tokens || ':' || output_tokens, ',') FROM (SELECT * FROM responses "
                     "ORDER BY id)"),
                 std::string("generate:length:5:16,generate:length:62:12,line-1:length:5:10,"
                             "line-2:length:5:10,line-3:length:5:10,generate:length:13:8"));
        QCOMPARE(one("SELECT output FROM responses WHERE id = 1"),
                 std::string(", there was a little girl named Lily. She loved to play"));
        QCOMPARE(one("SELECT output FROM responses WHERE id = 4"),
                 std::string(" was coming in the park."));
        QCOMPARE(one("SELECT printf('%.6f|%.6f|%.6f', ttft_ms, queue_wait_ms, e2e_ms) "
                     "FROM responses WHERE id = 1"),
                 std::string("1.204316|0.056667|3.997797"));
        QCOMPARE(one("SELECT printf('%.6f|%.6f', ttft_ms, queue_wait_ms) FROM responses "
                     "WHERE id = 5"),
                 std::string("20.089952|19.871498"));
        QCOMPARE(one("SELECT started_ms || '|' || finished_ms FROM responses WHERE id = 3"),
                 std::string("1796207087249|1796207087269"));
        QCOMPARE(one("SELECT prompt_cached_tokens || '|' || preemptions FROM responses "
                     "WHERE id = 2"),
                 std::string("0|0"));
        // The redacted response: text NULL, hash and length kept.
        QCOMPARE(one("SELECT redacted || '|' || quote(prompt) || '|' || quote(output) || '|' || "
                     "prompt_bytes || '|' || prompt_sha256 FROM responses WHERE id = 6"),
                 std::string("1|NULL|NULL|15|"
                             "0c57a60545e8f92a75be7580b620c3f9e7690d573c575859a82893505d183200"));
        const wbtest::ProcessResult sum = wbtest::run_process(
            "sha256sum", {QString::fromStdString(kData) + "/models/stories260K.gguf"}, 60000);
        QCOMPARE(sum.code, 0);
        QCOMPARE(QString::fromStdString(one("SELECT sha256 FROM model_versions WHERE id = 1")),
                 QString::fromLatin1(sum.out).section(' ', 0, 0));
        QCOMPARE(one("SELECT backend || '|' || git_commit || '|' || app_version FROM "
                     "environments"),
                 std::string("cpu|c17a0c2e45ad|0.1.0"));
        // What v3 did not store stays unknown: no invented prefill times,
        // no cold starts.
        QCOMPARE(one("SELECT count(*) FROM responses WHERE prefill_ms IS NOT NULL"),
                 std::string("0"));
        QCOMPARE(one("SELECT count(*) FROM model_loads"), std::string("0"));
        QCOMPARE(one("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND "
                     "tbl_name = 'responses' AND name LIKE 'responses_%'"),
                 std::string("3"));

        // The export (the History tab's and `workbench-cli export`'s rows)
        // reads all six through the joins with runs, models, environments.
        RunLog log = RunLog::open(path.toStdString());
        std::ostringstream csv;
        QCOMPARE(export_responses(log, {}, ExportFormat::Jsonl, csv), int64_t{6});
        QVERIFY(csv.str().find("\"run_kind\":\"batch\"") != std::string::npos);
        QVERIFY(csv.str().find("\"prefill_ms\":null") != std::string::npos);

        // And the migrated log takes new rows: a new run kind, prefill time.
        const int64_t run = log.begin_run("server", "127.0.0.1:8080", nlohmann::json::object());
        ResponseRecord r;
        r.run_id = run;
        r.model_version_id = 1;
        r.environment_id = 1;
        r.request_id = "srv-1";
        r.prompt = "hi";
        r.output = "there";
        r.queue_wait_ms = 1.5;
        r.prefill_ms = 2.25;
        r.ttft_ms = 3.75;
        r.started_ms = 1796207100000;
        log.log_response(r);
        QCOMPARE(one("SELECT u.kind || '|' || r.prefill_ms FROM responses r JOIN runs u ON "
                     "u.id = r.run_id WHERE r.request_id = 'srv-1'"),
                 std::string("server|2.25"));
    }

    // Migrating twice, or an older build's steps run over a v4 log, changes
    // nothing: the file is not downgraded or touched.
    void migratedLogIsNotTouchedAgain() {
        const QString path = fixture_copy();
        { RunLog log = RunLog::open(path.toStdString()); }
        {
            const wbtest::RawSqlite raw(path, true);
            raw.exec("PRAGMA journal_mode = DELETE");  // every byte in the one file
        }
        const QByteArray migrated = file_bytes(path);
        {
            Db db(path.toStdString(), SQLITE_OPEN_READWRITE);
            migrate(db, migrations().subspan(0, 3));  // what the v3 release knew
            migrate(db, migrations());                // and this build again
        }
        QCOMPARE(file_bytes(path), migrated);
        const wbtest::RawSqlite raw(path);
        QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::to_string(schema_version()));
        QCOMPARE(raw.rows("SELECT count(*) FROM responses")[0][0], std::string("6"));
    }

    // A step that breaks a reference is rolled back: the file stays at the
    // version before it, its rows untouched.
    void stepBreakingReferencesIsRolledBack() {
        const QString path = fixture_copy();
        std::vector<Migration> steps(migrations().begin(), migrations().begin() + 3);
        steps.push_back({3, "DELETE FROM runs WHERE id = 3;"});  // its responses point nowhere
        {
            Db db(path.toStdString(), SQLITE_OPEN_READWRITE);
            db.exec("PRAGMA foreign_keys = ON", "test");
            try {
                migrate(db, steps);
                QFAIL("a step that breaks references was applied");
            } catch (const DbError& e) {
                QVERIFY2(QString(e.what()).contains("migrate schema 3 -> 4") &&
                             QString(e.what()).contains("refers to a missing runs row"),
                         e.what());
            }
            // Foreign keys are back on for the connection.
            QCOMPARE(db.query_int("PRAGMA foreign_keys", "test"), int64_t{1});
        }
        const wbtest::RawSqlite raw(path);
        QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::string("3"));
        QCOMPARE(raw.rows("SELECT count(*) FROM runs")[0][0], std::string("4"));
    }

    // A v3 log whose reference was already broken (another program deleted
    // a run) is reported as damaged, naming the row, before any step runs:
    // not blamed on the migration, and not changed.
    void brokenReferenceBeforeMigratingIsReported() {
        const QString path = fixture_copy();
        {
            const wbtest::RawSqlite raw(path, true);
            raw.exec("PRAGMA foreign_keys = OFF");
            raw.exec("DELETE FROM runs WHERE id = 3");
        }
        try {
            RunLog log = RunLog::open(path.toStdString());
            QFAIL("a log with a broken reference was migrated");
        } catch (const OpenError& e) {
            const QString what = e.what();
            QVERIFY2(what.contains("damaged") && what.contains("refers to a missing runs row") &&
                         what.contains("responses row") && !what.contains("migrate schema"),
                     e.what());
        }
        const wbtest::RawSqlite raw(path);
        QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::string("3"));
        QCOMPARE(raw.rows("SELECT count(*) FROM runs")[0][0], std::string("3"));
        QCOMPARE(raw.rows("SELECT count(*) FROM responses")[0][0], std::string("6"));
    }

    // Run kinds are open-ended: a new kind needs no table rebuild, a kind
    // that is not a lowercase word is refused by the code and by the table.
    void runKindsAreOpenEnded() {
        const QString path = dir_.filePath("kinds.sqlite");
        RunLog log = RunLog::open(path.toStdString());
        const int64_t a = log.begin_run("server", "s", nlohmann::json::object());
        const int64_t b = log.begin_run("load_test", "l", nlohmann::json::object());
        const int64_t c = log.begin_run(RunKind::Compare, "c", nlohmann::json::object());
        QVERIFY(a > 0 && b > a && c > b);
        for (const char* bad : {"", "Server", "load-test", "two words", "chat;", "ü"}) {
            try {
                log.begin_run(bad, "x", nlohmann::json::object());
                QFAIL(qPrintable(QString("kind \"%1\" accepted").arg(bad)));
            } catch (const std::invalid_argument& e) {
                QVERIFY2(QString(e.what()).contains(QString("\"%1\"").arg(bad)), e.what());
            }
        }
        QVERIFY(!is_valid_run_kind(std::string(65, 'a')));
        QVERIFY(is_valid_run_kind(std::string(64, 'a')));
        const wbtest::RawSqlite raw(path, true);
        QCOMPARE(raw.rows("SELECT group_concat(kind, ',') FROM (SELECT kind FROM runs ORDER BY "
                          "id)")[0][0],
                 std::string("server,load_test,compare"));
        // The table's own check refuses what the code refuses.
        char* err = nullptr;
        QVERIFY(sqlite3_exec(raw.db,
                             "INSERT INTO runs (kind, name, started_ms, settings) "
                             "VALUES ('Load-Test', 'x', 0, '{}')",
                             nullptr, nullptr, &err) != SQLITE_OK);
        sqlite3_free(err);
    }

    // A v5 log (the fixture taken through the released steps 0..4, as a
    // build of schema 5 left it) opens with this build and gains run_events
    // (schema 6) with every older row as it was; events are written, read
    // back in time order, refused with a clear error when bad, and pruned
    // with their run.
    void v5LogMigratesToRunEvents() {
        const QString path = fixture_copy();
        {
            Db db(path.toStdString(), SQLITE_OPEN_READWRITE);
            migrate(db, migrations().subspan(0, 5));
        }
        Rows runs_before, responses_before;
        {
            const wbtest::RawSqlite raw(path);
            QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::string("5"));
            QCOMPARE(raw.rows("SELECT count(*) FROM sqlite_master WHERE name = 'run_events'")[0][0],
                     std::string("0"));
            runs_before = quoted_rows(raw, "runs", columns(raw, "runs"));
            responses_before = quoted_rows(raw, "responses", columns(raw, "responses"));
        }
        RunLog log = RunLog::open(path.toStdString());
        const wbtest::RawSqlite raw(path);
        QCOMPARE(raw.rows("PRAGMA user_version")[0][0], std::string("6"));
        QCOMPARE(columns(raw, "run_events"),
                 (std::vector<std::string>{"id", "run_id", "t_ms", "kind", "details"}));
        QCOMPARE(quoted_rows(raw, "runs", columns(raw, "runs")), runs_before);
        QCOMPARE(quoted_rows(raw, "responses", columns(raw, "responses")), responses_before);

        RunEvent e;
        e.run_id = 3;
        e.t_ms = 1796207000500;
        e.kind = "rollback";
        e.details = {{"verdict", "rollback"}, {"share_after", 0.0}};
        const int64_t second = log.log_event(e);
        e.t_ms = 1796207000000;
        e.kind = "server_start";
        e.details = {{"port", 8080}};
        const int64_t first = log.log_event(e);
        QVERIFY(first != second);
        const std::vector<RunEvent> got = log.events(3);
        QCOMPARE(got.size(), size_t{2});
        QCOMPARE(got[0].kind, std::string("server_start"));
        QCOMPARE(got[0].details.at("port").get<int>(), 8080);
        QCOMPARE(got[1].kind, std::string("rollback"));
        QCOMPARE(got[1].t_ms, int64_t{1796207000500});
        QCOMPARE(raw.rows("SELECT json_extract(details, '$.verdict') FROM run_events WHERE id = " +
                          std::to_string(second))[0][0],
                 std::string("rollback"));
        QVERIFY(log.events(99).empty());

        RunEvent bad = e;
        bad.kind = "Canary Step";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.log_event(bad));
        bad = e;
        bad.details = nlohmann::json::array();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.log_event(bad));
        bad = e;
        bad.run_id = 99;  // no such run
        QVERIFY_THROWS_EXCEPTION(DbError, log.log_event(bad));
        // The table's own checks hold for a writer that bypasses RunLog.
        char* err = nullptr;
        QVERIFY(sqlite3_exec(raw.db,
                             "INSERT INTO run_events (run_id, t_ms, kind, details) "
                             "VALUES (3, 0, 'promote', 'not json')",
                             nullptr, nullptr, &err) != SQLITE_OK);
        sqlite3_free(err);

        // Pruning everything takes the events, and then their ended run, too.
        QCOMPARE(raw.rows("SELECT count(*) FROM runs WHERE id = 3")[0][0], std::string("1"));
        log.prune_older_than_days(0, 1796207000000 + 1000000000000);
        QCOMPARE(raw.rows("SELECT count(*) FROM run_events")[0][0], std::string("0"));
    }

    // One model load's cold start: written, its first token set once, kept
    // with its model and environment, pruned with old responses.
    void modelLoadRows() {
        const QString path = dir_.filePath("loads.sqlite");
        RunLog log = RunLog::open(path.toStdString());
        const int64_t mv = log.ensure_model_version(kData + "/models/stories260K.gguf");
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        const int64_t run = log.begin_run("generate", "g", nlohmann::json::object());
        ModelLoadRecord l;
        l.model_version_id = mv;
        l.environment_id = env;
        l.run_id = run;
        l.surface = "generate";
        l.settings = {{"backend", "cpu"}, {"n_ctx", 512}};
        l.opened_ms = 1796207000000;
        l.vocab_ms = 1.5;
        l.map_ms = 0.25;
        l.parse_ms = 0.5;
        l.device_ms = 0.0;
        l.upload_ms = 4.0;
        l.ready_ms = 7.125;
        const int64_t id = log.log_model_load(l);
        log.set_model_load_first_token(id, 9.5, 2.0);
        log.set_model_load_first_token(id, 99.0, 99.0);  // only the first counts
        const wbtest::RawSqlite raw(path);
        QCOMPARE(raw.rows("SELECT surface || '|' || run_id || '|' || vocab_ms || '|' || upload_ms "
                          "|| '|' || ready_ms || '|' || pipeline_cache || '|' || quote(pipelines) "
                          "|| '|' || first_token_ms || '|' || first_ttft_ms || '|' || "
                          "json_extract(settings, '$.n_ctx') FROM model_loads")[0][0],
                 std::string("generate|" + std::to_string(run) +
                             "|1.5|4.0|7.125|none|NULL|9.5|2.0|512"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 log.set_model_load_first_token(id + 7, 1.0, 1.0));
        ModelLoadRecord bad = l;
        bad.surface = "Bad Surface";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.log_model_load(bad));
        bad = l;
        bad.pipeline_cache = "lukewarm";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.log_model_load(bad));
        bad = l;
        bad.model_version_id = mv + 40;  // no such model version
        QVERIFY_THROWS_EXCEPTION(DbError, log.log_model_load(bad));
        // Old loads go with old responses; the run left empty goes too.
        log.end_run(run);
        QCOMPARE(log.prune_older_than_days(0, 1796207000000 + 1000000000000), int64_t{0});
        QCOMPARE(raw.rows("SELECT count(*) FROM model_loads")[0][0], std::string("0"));
        QCOMPARE(raw.rows("SELECT count(*) FROM runs")[0][0], std::string("0"));
    }
};

QTEST_GUILESS_MAIN(TestRunLogMigration)
#include "test_runlog_migration.moc"
