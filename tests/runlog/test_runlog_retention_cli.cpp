// The run log's data through the built workbench-cli: `generate
// --no-text` and `batch --no-text` log counts without text; `log retention
// --days N [--dry-run]` and `log redact RUN_ID` remove text so that its
// bytes are gone from the database file and its -wal; a damaged log or an
// unknown run is an error and the file's bytes do not change (sha256sum).
// Real model (stories260K on the CPU backend), real SQLite files; rows read
// through the SQLite C API (wbtest::RawSqlite), not the code under test.

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <random>
#include <string>

#include "common/data_dir.h"
#include "common/process.h"
#include "common/raw_sqlite.h"

namespace {

const QString kCli = WB_CLI_PATH;
const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";
using Raw = wbtest::RawSqlite;
using Rows = std::vector<std::vector<std::string>>;

wbtest::ProcessResult cli(const QStringList& args) {
    return wbtest::run_process(kCli, args, 300000);
}

// The database file and its -wal as they are on disk.
QByteArray disk_bytes(const QString& path) {
    QByteArray all;
    for (const QString& p : {path, path + "-wal"}) {
        QFile f(p);
        if (f.open(QIODevice::ReadOnly)) all += f.readAll();
    }
    return all;
}

QString sha256sum(const QString& path) {
    return QString::fromLatin1(wbtest::run_process("sha256sum", {path}, 60000).out)
        .section(' ', 0, 0);
}

// One generate with `prompt` into `db` (CPU backend, greedy, 6 tokens).
bool generate(const QString& db, const QString& prompt, const QStringList& extra = {}) {
    const auto r = cli(QStringList{"generate", "-m", kModel, "-p", prompt, "-n", "6", "--temp", "0",
                                   "--backend", "cpu", "--db", db} +
                       extra);
    if (r.code != 0) qWarning("generate: %s", r.err.constData());
    return r.code == 0;
}

}  // namespace

class TestRunLogRetentionCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // generate --no-text and batch --no-text: rows with token counts and
    // timings, no text, the run marked; the marker is nowhere in the file.
    void noTextRunsStoreCountsOnly() {
        const QString db = dir_.filePath("notext.sqlite");
        const QString kSecret = "Once upon a time ZQXNOTEXTSECRET";
        QVERIFY(generate(db, kSecret, {"--no-text"}));
        const QString prompts = dir_.filePath("notext.jsonl");
        {
            QFile f(prompts);
            QVERIFY(f.open(QIODevice::WriteOnly));
            for (int i = 0; i < 3; ++i)
                f.write(QJsonDocument(QJsonObject{{"id", QString("p%1").arg(i)},
                                                  {"prompt", kSecret + QString::number(i)}})
                            .toJson(QJsonDocument::Compact) +
                        "\n");
        }
        const auto b = cli({"batch", "-m", kModel, "--prompts", prompts, "-n", "6", "--temp", "0",
                            "--backend", "cpu", "--db", db, "-q", "--no-text", "--system",
                            "ZQXSYSTEMSECRET", "-o", dir_.filePath("notext.out.jsonl")});
        QVERIFY2(b.code == 0, b.err.constData());
        // A plain run beside them keeps its text (so the search can fail).
        QVERIFY(generate(db, "Once upon a time ZQXPLAINTEXT"));

        QVERIFY(!disk_bytes(db).contains("ZQXNOTEXTSECRET"));
        QVERIFY(!disk_bytes(db).contains("ZQXSYSTEMSECRET"));
        QVERIFY(disk_bytes(db).contains("ZQXPLAINTEXT"));
        const Raw raw(db);
        QCOMPARE(raw.rows("SELECT kind, no_text FROM runs ORDER BY id"),
                 (Rows{{"generate", "1"}, {"batch", "1"}, {"generate", "0"}}));
        const Rows rows = raw.rows(
            "SELECT u.no_text, r.redacted, r.prompt IS NULL, r.output IS NULL, "
            "r.prompt_tokens > 0, r.output_tokens > 0, r.output_bytes > 0, r.e2e_ms > 0 "
            "FROM responses r JOIN runs u ON u.id = r.run_id ORDER BY r.id");
        QCOMPARE(int(rows.size()), 5);
        for (const auto& r : rows) {
            const std::string hidden = r[0];  // "1" for the no-text runs
            QCOMPARE(r[1], hidden);
            QCOMPARE(r[2], hidden);
            QCOMPARE(r[3], hidden);
            QCOMPARE(r[4], std::string("1"));
            QCOMPARE(r[5], std::string("1"));
            QCOMPARE(r[6], std::string("1"));
            QCOMPARE(r[7], std::string("1"));
        }
    }

    // log retention: --dry-run counts and changes nothing; then exactly the
    // old response loses its text, every row stays, its bytes are gone.
    void retentionRemovesOldTextFromTheFile() {
        const QString db = dir_.filePath("retention.sqlite");
        QVERIFY(generate(db, "Once upon a time ZQXOLDPROMPT"));
        QVERIFY(generate(db, "Once upon a time ZQXNEWPROMPT"));
        {
            // The first response started 10 days ago.
            const Raw raw(db, true);
            raw.exec("UPDATE responses SET started_ms = started_ms - 864000000 WHERE id = 1");
        }
        QVERIFY(disk_bytes(db).contains("ZQXOLDPROMPT"));
        const Rows figures_before = Raw(db).rows(
            "SELECT id, prompt_tokens, output_tokens, output_sha256, ttft_ms, e2e_ms "
            "FROM responses ORDER BY id");

        const QString hash = sha256sum(db);
        const auto dry = cli({"log", "retention", "--days", "7", "--dry-run", "--db", db});
        QVERIFY2(dry.code == 0, dry.err.constData());
        QVERIFY2(dry.out.contains("1 responses older than 7 days would lose their text"),
                 dry.out.constData());
        QCOMPARE(sha256sum(db), hash);

        const auto r = cli({"log", "retention", "--days", "7", "--db", db});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.contains("removed the text of 1 responses older than 7 days"),
                 r.out.constData());
        QVERIFY2(
            r.out.contains("file size:") && r.out.contains("before") && r.out.contains("after"),
            r.out.constData());
        QVERIFY(!disk_bytes(db).contains("ZQXOLDPROMPT"));
        QVERIFY(disk_bytes(db).contains("ZQXNEWPROMPT"));
        const Raw raw(db);
        QCOMPARE(raw.rows("SELECT id, prompt_tokens, output_tokens, output_sha256, ttft_ms, e2e_ms "
                          "FROM responses ORDER BY id"),
                 figures_before);
        QCOMPARE(raw.rows("SELECT redacted, prompt IS NULL, output IS NULL FROM responses ORDER "
                          "BY id"),
                 (Rows{{"1", "1", "1"}, {"0", "0", "0"}}));
        // Export shows the row as redacted, with its figures.
        const auto ex = cli({"export", "--format", "jsonl", "--db", db});
        QVERIFY2(ex.code == 0, ex.err.constData());
        const QJsonObject first = QJsonDocument::fromJson(ex.out.split('\n').value(0)).object();
        QCOMPARE(first["redacted"].toInt(), 1);
        QVERIFY(first["prompt"].isNull());
        QVERIFY(first["output_tokens"].toInt() > 0);
    }

    // log redact RUN_ID: that run's text only; an unknown run is an error
    // and the file does not change.
    void redactOneRun() {
        const QString db = dir_.filePath("redact.sqlite");
        QVERIFY(generate(db, "Once upon a time ZQXRUNONE"));
        QVERIFY(generate(db, "Once upon a time ZQXRUNTWO"));
        QVERIFY(disk_bytes(db).contains("ZQXRUNONE"));
        const auto r = cli({"log", "redact", "1", "--db", db});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.contains("removed the text of 1 responses of run 1"), r.out.constData());
        QVERIFY(!disk_bytes(db).contains("ZQXRUNONE"));
        QVERIFY(disk_bytes(db).contains("ZQXRUNTWO"));

        const QString hash = sha256sum(db);
        const auto bad = cli({"log", "redact", "99", "--db", db});
        QCOMPARE(bad.code, 1);
        QVERIFY2(bad.err.contains("no run with id 99") && bad.err.contains("nothing was changed"),
                 bad.err.constData());
        QCOMPARE(sha256sum(db), hash);
        QCOMPARE(cli({"log", "redact", "one", "--db", db}).code, 2);  // usage error
    }

    // Another program holds the write lock (python3's sqlite3, BEGIN
    // IMMEDIATE until its stdin closes): after waiting, a sentence saying
    // so, and the file's bytes (with -wal) are what they were.
    void lockedLogIsRefusedAndUnchanged() {
        const QString db = dir_.filePath("locked.sqlite");
        QVERIFY(generate(db, "Once upon a time ZQXLOCKED"));
        QProcess holder;
        holder.start("python3", {"-c",
                                 "import sqlite3, sys\n"
                                 "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                                 "c.execute('BEGIN IMMEDIATE')\n"
                                 "print('locked', flush=True)\n"
                                 "sys.stdin.read()\n"
                                 "c.execute('ROLLBACK')\n",
                                 db});
        QVERIFY(holder.waitForReadyRead(60000));
        QCOMPARE(holder.readAllStandardOutput().trimmed(), QByteArray("locked"));
        const QByteArray before = disk_bytes(db);
        const auto r = cli({"log", "retention", "--days", "0", "--db", db});
        QCOMPARE(r.code, 1);
        QVERIFY2(
            r.err.contains("locked by another program") && r.err.contains("nothing was changed"),
            r.err.constData());
        QCOMPARE(disk_bytes(db), before);
        holder.closeWriteChannel();
        QVERIFY(holder.waitForFinished(60000));
        QVERIFY(disk_bytes(db).contains("ZQXLOCKED"));
    }

    // A damaged log: a sentence naming the damage, the file's bytes unchanged.
    void damagedLogIsRefusedAndUnchanged() {
        const QString db = dir_.filePath("damaged.sqlite");
        QVERIFY(generate(db, "Once upon a time ZQXDAMAGED"));
        {
            // One file (no -wal), then garbage over its third page.
            const Raw raw(db, true);
            raw.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
        }
        {
            QFile f(db);
            QVERIFY(f.open(QIODevice::ReadWrite));
            const qint64 page = 4096;
            QVERIFY(f.size() >= 3 * page);
            QByteArray junk(int(page), '\0');
            std::mt19937 rng(7);
            for (char& c : junk) c = static_cast<char>(rng());
            QVERIFY(f.seek(2 * page));
            QCOMPARE(f.write(junk), page);
        }
        QCOMPARE(cli({"log", "check", "--db", db}).code, 1);  // SQLite agrees it is damaged
        const QString hash = sha256sum(db);
        for (const QStringList& args : {QStringList{"log", "retention", "--days", "0", "--db", db},
                                        QStringList{"log", "redact", "1", "--db", db}}) {
            const auto r = cli(args);
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains("damaged") || r.err.contains("corrupt"), r.err.constData());
            QCOMPARE(sha256sum(db), hash);
        }
    }
};

QTEST_GUILESS_MAIN(TestRunLogRetentionCli)
#include "test_runlog_retention_cli.moc"
