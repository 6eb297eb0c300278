// Retention, redaction and "do not store text" runs on real SQLite files.
// What must hold: after a purge the removed
// text's bytes are nowhere in the database file or its -wal (the raw file
// bytes are searched for a unique marker, which is first seen there, so the
// search can fail); every row and its figures stay; other text stays; a
// locked log is refused with a sentence and its bytes do not change.
// Expected values come from outside the code under test: the texts and
// figures the test writes, QCryptographicHash for SHA-256, and the rows
// read back through the SQLite C API (wbtest::RawSqlite).

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "runlog/environment.h"
#include "runlog/retention.h"
#include "runlog/run_log.h"
#include "runlog/sqlite_db.h"
#include "runlog/time_utc.h"

using namespace wb::runlog;
using Raw = wbtest::RawSqlite;

namespace {

const std::string kStories = wbtest::data_dir() + "/models/stories260K.gguf";
constexpr int64_t kDay = 86400000;

// The database file and its -wal, as they are on disk now.
QByteArray disk_bytes(const QString& path) {
    QByteArray all;
    for (const QString& p : {path, path + "-wal"}) {
        QFile f(p);
        if (f.open(QIODevice::ReadOnly)) all += f.readAll();
    }
    return all;
}

QString sha256(const std::string& s) {
    return QString::fromLatin1(
        QCryptographicHash::hash(QByteArray::fromStdString(s), QCryptographicHash::Sha256).toHex());
}

// A text long enough to span cells (and overflow pages), with `marker` in it.
std::string text_with(const std::string& marker, int i) {
    std::string t = marker + "#" + std::to_string(i) + " ";
    for (int k = 0; k < 300; ++k) t += "customer data " + std::to_string(k) + ", ";
    return t + marker;
}

struct Ids {
    int64_t mv = 0;
    int64_t env = 0;
};

ResponseRecord record(const Ids& ids, int64_t run, const std::string& prompt,
                      const std::string& output, int64_t started_ms, int i) {
    ResponseRecord r;
    r.run_id = run;
    r.model_version_id = ids.mv;
    r.environment_id = ids.env;
    r.request_id = "q" + std::to_string(i);
    r.settings = {{"temperature", 0.0}, {"seed", 42 + i}};
    r.prompt = prompt;
    r.prompt_tokens = 10 + i;
    r.output = output;
    r.output_tokens = 20 + i;
    r.ttft_ms = 12.5 + i;
    r.e2e_ms = 250.0 + i;
    r.decode_tps = 80.25;
    r.started_ms = started_ms;
    r.finished_ms = started_ms + 250 + i;
    return r;
}

}  // namespace

class TestRunLogRetention : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    int n_ = 0;

    QString fresh_path() { return dir_.filePath(QString("log%1.sqlite").arg(n_++)); }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // Three responses 10 days old, two an hour old; retention at 7 days
    // removes exactly the three old texts, keeps all five rows and their
    // figures, and the old text's bytes are gone from the file and -wal.
    void retentionRemovesExactlyTheOldText() {
        const QString path = fresh_path();
        const int64_t now = now_utc_ms();
        const std::string kOld = "OLD-7f3a9c-MARKER";
        const std::string kNew = "NEW-51e0b2-MARKER";
        RunLog log = RunLog::open(path.toStdString());
        const Ids ids{log.ensure_model_version(kStories),
                      log.ensure_environment(collect_environment("cpu"))};
        const int64_t old_run = log.begin_run(
            "batch", "old.jsonl", {{"system_prompt", "SYS-" + kOld}, {"concurrency", 4}});
        const int64_t new_run = log.begin_run("batch", "new.jsonl", {{"concurrency", 2}});
        std::vector<std::string> prompts;
        for (int i = 0; i < 5; ++i) {
            const bool old = i < 3;
            prompts.push_back(text_with(old ? kOld : kNew, i));
            log.log_response(
                record(ids, old ? old_run : new_run, prompts.back(),
                       old ? text_with("ANS-" + kOld, i) : text_with("ANSNEW-" + kNew, i),
                       old ? now - 10 * kDay : now - 3600000, i));
        }
        // The old run began with its responses (begin_run stamps "now").
        Raw(path, true)
            .exec(("UPDATE runs SET started_ms = " + std::to_string(now - 10 * kDay) +
                   " WHERE id = " + std::to_string(old_run))
                      .c_str());
        // The markers are in the file's bytes now, so the search below can fail.
        QVERIFY(disk_bytes(path).contains(QByteArray::fromStdString(kOld)));
        QVERIFY(disk_bytes(path).contains(QByteArray::fromStdString("ANS-" + kOld)));

        QCOMPARE(count_text_older_than(log, now - 7 * kDay), int64_t(3));
        const PurgeResult res = purge_text_older_than(log, now - 7 * kDay);
        QCOMPARE(res.responses, int64_t(3));
        QVERIFY(res.wal_emptied);
        QVERIFY(res.bytes_before > 0 && res.bytes_after > 0);
        QCOMPARE(count_text_older_than(log, now - 7 * kDay), int64_t(0));

        // Gone from the bytes: the database file and the -wal (emptied).
        const QByteArray after = disk_bytes(path);
        QVERIFY2(!after.contains(QByteArray::fromStdString(kOld)),
                 "old prompt text still in the file");
        QVERIFY(!after.contains("ANS-"));  // no old answer either (ANSNEW- stays)
        QVERIFY(after.contains(QByteArray::fromStdString(kNew)));
        QVERIFY(after.contains(QByteArray::fromStdString("ANSNEW-" + kNew)));
        QCOMPARE(QFile(path + "-wal").size(), qint64(0));

        // Every row and its figures stay.
        const Raw raw(path);
        const auto rows = raw.rows(
            "SELECT run_id, redacted, prompt IS NULL, output IS NULL, prompt_sha256, "
            "prompt_bytes, prompt_tokens, output_tokens, ttft_ms, e2e_ms, decode_tps, "
            "started_ms, json_extract(settings, '$.seed') FROM responses ORDER BY id");
        QCOMPARE(int(rows.size()), 5);
        for (int i = 0; i < 5; ++i) {
            const bool old = i < 3;
            const auto& r = rows[size_t(i)];
            QCOMPARE(r[0], std::to_string(old ? old_run : new_run));
            QCOMPARE(r[1], std::string(old ? "1" : "0"));
            QCOMPARE(r[2], std::string(old ? "1" : "0"));
            QCOMPARE(r[3], std::string(old ? "1" : "0"));
            QCOMPARE(QString::fromStdString(r[4]), sha256(prompts[size_t(i)]));
            QCOMPARE(r[5], std::to_string(prompts[size_t(i)].size()));
            QCOMPARE(r[6], std::to_string(10 + i));
            QCOMPARE(r[7], std::to_string(20 + i));
            QCOMPARE(std::stod(r[8]), 12.5 + i);
            QCOMPARE(std::stod(r[9]), 250.0 + i);
            QCOMPARE(std::stod(r[10]), 80.25);
            QCOMPARE(r[11], std::to_string(old ? now - 10 * kDay : now - 3600000));
            QCOMPARE(r[12], std::to_string(42 + i));
        }
        // The old run's system prompt went with its text; its other settings stay.
        QCOMPARE(raw.rows("SELECT json_extract(settings, '$.system_prompt') IS NULL, "
                          "json_extract(settings, '$.concurrency') FROM runs WHERE id = " +
                          std::to_string(old_run))[0],
                 (std::vector<std::string>{"1", "4"}));
        QCOMPARE(raw.rows("SELECT count(*) FROM runs")[0][0], std::string("2"));
    }

    // redact_run: every text of one run, nothing of another.
    void redactOneRunLeavesTheOthers() {
        const QString path = fresh_path();
        const std::string kGone = "REDACT-ME-c41d";
        const std::string kKept = "KEEP-ME-9a2e";
        RunLog log = RunLog::open(path.toStdString());
        const Ids ids{log.ensure_model_version(kStories),
                      log.ensure_environment(collect_environment("cpu"))};
        const int64_t a = log.begin_run("chat", "a", nlohmann::json::object());
        const int64_t b = log.begin_run("chat", "b", nlohmann::json::object());
        const int64_t now = now_utc_ms();
        for (int i = 0; i < 4; ++i)
            log.log_response(record(ids, i % 2 ? b : a, text_with(i % 2 ? kKept : kGone, i),
                                    text_with(i % 2 ? kKept : kGone, i + 10), now, i));
        QVERIFY(disk_bytes(path).contains(QByteArray::fromStdString(kGone)));

        const PurgeResult res = redact_run(log, a);
        QCOMPARE(res.responses, int64_t(2));
        const QByteArray after = disk_bytes(path);
        QVERIFY(!after.contains(QByteArray::fromStdString(kGone)));
        QVERIFY(after.contains(QByteArray::fromStdString(kKept)));
        const Raw raw(path);
        QCOMPARE(raw.rows("SELECT run_id, redacted, prompt IS NULL, output IS NULL, "
                          "output_tokens FROM responses ORDER BY id"),
                 (std::vector<std::vector<std::string>>{{std::to_string(a), "1", "1", "1", "20"},
                                                        {std::to_string(b), "0", "0", "0", "21"},
                                                        {std::to_string(a), "1", "1", "1", "22"},
                                                        {std::to_string(b), "0", "0", "0", "23"}}));

        // An unknown run: a sentence naming it, nothing changed.
        const QByteArray before = disk_bytes(path);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, redact_run(log, 999));
        QCOMPARE(disk_bytes(path), before);
    }

    // A no-text run writes rows without text (every way a row is written:
    // at once, and started / streamed / finished), with its counts, hashes
    // and timings; a run beside it keeps its text.
    void noTextRunStoresCountsButNoText() {
        const QString path = fresh_path();
        const std::string kSecret = "NO-TEXT-SECRET-e88f";
        RunLog log = RunLog::open(path.toStdString());
        const Ids ids{log.ensure_model_version(kStories),
                      log.ensure_environment(collect_environment("cpu"))};
        const int64_t quiet =
            log.begin_run("batch", "quiet", {{"system_prompt", "SYS-" + kSecret}}, true);
        const int64_t plain = log.begin_run("batch", "plain", nlohmann::json::object());
        const int64_t now = now_utc_ms();
        const std::string prompt = text_with(kSecret, 1);
        log.log_response(record(ids, quiet, prompt, text_with(kSecret, 2), now, 1));
        const int64_t streamed =
            log.begin_response(record(ids, quiet, text_with(kSecret, 3), "", now, 2));
        log.update_response(streamed, text_with(kSecret, 4), 5);
        log.finish_response(
            streamed, record(ids, quiet, text_with(kSecret, 3), text_with(kSecret, 5), now, 2));
        log.log_response(record(ids, plain, "plain prompt", "plain answer", now, 3));

        QVERIFY(!disk_bytes(path).contains(QByteArray::fromStdString(kSecret)));
        QVERIFY(disk_bytes(path).contains("plain answer"));
        const Raw raw(path);
        QCOMPARE(raw.rows("SELECT no_text FROM runs ORDER BY id"),
                 (std::vector<std::vector<std::string>>{{"1"}, {"0"}}));
        const auto rows = raw.rows(
            "SELECT redacted, prompt, output, prompt_sha256, prompt_bytes, prompt_tokens, "
            "output_tokens, ttft_ms FROM responses ORDER BY id");
        QCOMPARE(int(rows.size()), 3);
        QCOMPARE(rows[0][0], std::string("1"));
        QCOMPARE(rows[0][1], std::string("<null>"));
        QCOMPARE(rows[0][2], std::string("<null>"));
        QCOMPARE(QString::fromStdString(rows[0][3]), sha256(prompt));
        QCOMPARE(rows[0][4], std::to_string(prompt.size()));
        QCOMPARE(rows[0][5], std::string("11"));
        QCOMPARE(rows[0][6], std::string("21"));
        QCOMPARE(std::stod(rows[0][7]), 13.5);
        QCOMPARE(rows[1][0], std::string("1"));
        QCOMPARE(rows[1][2], std::string("<null>"));
        QCOMPARE(rows[1][6], std::string("22"));
        QCOMPARE(rows[2], (std::vector<std::string>{"0", "plain prompt", "plain answer",
                                                    sha256("plain prompt").toStdString(), "12",
                                                    "13", "23", "15.5"}));
    }

    // Another program holds the write lock: a sentence saying so, and the
    // file's bytes (database and -wal) are exactly what they were.
    void lockedLogIsRefusedAndUnchanged() {
        const QString path = fresh_path();
        const std::string kOld = "LOCKED-OLD-0b7d";
        RunLog log = RunLog::open(path.toStdString());
        const Ids ids{log.ensure_model_version(kStories),
                      log.ensure_environment(collect_environment("cpu"))};
        const int64_t run = log.begin_run("generate", "g", nlohmann::json::object());
        log.log_response(
            record(ids, run, text_with(kOld, 0), text_with(kOld, 1), now_utc_ms() - 30 * kDay, 0));
        log.set_write_retry(1, 50);
        const Raw other(path, true);
        other.exec("BEGIN IMMEDIATE");
        const QByteArray before = disk_bytes(path);
        try {
            purge_text_older_than(log, now_utc_ms());
            QFAIL("a locked log was purged");
        } catch (const DbError& e) {
            QVERIFY2(QString(e.what()).contains("locked by another program"), e.what());
            QVERIFY2(QString(e.what()).contains("nothing was changed"), e.what());
        }
        QCOMPARE(disk_bytes(path), before);
        other.exec("ROLLBACK");
        // Unlocked, the same call works.
        QCOMPARE(purge_text_older_than(log, now_utc_ms()).responses, int64_t(1));
        QVERIFY(!disk_bytes(path).contains(QByteArray::fromStdString(kOld)));
    }
};

QTEST_GUILESS_MAIN(TestRunLogRetention)
#include "test_runlog_retention.moc"
