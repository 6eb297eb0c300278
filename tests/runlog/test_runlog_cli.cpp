// The run log through workbench-cli as a user runs it (QProcess on the
// built binary): a 50-request batch logs 50 responses joined to the right
// model version (sha256sum) and environment; kill -9 of a batch keeps every
// response it reported; export (CSV / JSONL) parses with python3; log
// prune / config work. Every command gets --db in a temporary folder.

#include <signal.h>
#include <sqlite3.h>

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include "common/process.h"
#include "common/data_dir.h"

namespace {

const QString kCli = WB_CLI_PATH;
const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

using Run = wbtest::ProcessResult;
using wbtest::run_process;

Run run(const QString& program, const QStringList& args, int timeout_ms = 300000) {
    return run_process(program, args, timeout_ms);
}

// Rows of `sql` on a read-only raw connection, cells as text.
QList<QStringList> query(const QString& db_path, const QString& sql) {
    sqlite3* db = nullptr;
    QList<QStringList> rows;
    if (sqlite3_open_v2(db_path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr) !=
        SQLITE_OK)
        qFatal("open %s failed", qPrintable(db_path));
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.toUtf8().constData(), -1, &st, nullptr) != SQLITE_OK)
        qFatal("prepare failed: %s", sqlite3_errmsg(db));
    while (sqlite3_step(st) == SQLITE_ROW) {
        QStringList row;
        for (int i = 0; i < sqlite3_column_count(st); ++i) {
            const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
            row << (t ? QString::fromUtf8(t) : QString());
        }
        rows << row;
    }
    sqlite3_finalize(st);
    sqlite3_close_v2(db);
    return rows;
}

QString sha256sum(const QString& path) {
    const Run r = run("sha256sum", {path});
    return QString::fromLatin1(r.out).section(' ', 0, 0);
}

void write_prompts(const QString& path, int n) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write prompts");
    for (int i = 0; i < n; ++i) {
        QJsonObject o{{"id", QString("q%1").arg(i)},
                      {"prompt", QString("Once upon a time, \"number\" %1,\nthere was").arg(i)}};
        f.write(QJsonDocument(o).toJson(QJsonDocument::Compact) + "\n");
    }
}

}  // namespace

class TestRunLogCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // Must show: 50 requests -> 50 responses, each joined to the model
    // version whose SHA-256 is sha256sum's, and to this machine's environment.
    void batchOfFiftyIsLogged() {
        const QString db = dir_.filePath("batch.sqlite");
        const QString prompts = dir_.filePath("fifty.jsonl");
        write_prompts(prompts, 50);
        const Run r = run(kCli, {"batch", "-m", kModel, "--prompts", prompts, "--concurrency", "4",
                                 "-n", "8", "--temp", "0", "--backend", "vulkan", "--db", db, "-q",
                                 "-o", dir_.filePath("fifty.out.jsonl")});
        QVERIFY2(r.code == 0, r.err.constData());
        const auto rows = query(
            db,
            "SELECT r.request_id, m.sha256, e.backend || ':' || e.vk_device_name, e.os, e.cpu, "
            "e.app_version, u.kind, r.prompt, r.output_tokens "
            "FROM responses r JOIN model_versions m ON m.id = r.model_version_id "
            "JOIN environments e ON e.id = r.environment_id "
            "JOIN runs u ON u.id = r.run_id ORDER BY r.id");
        QCOMPARE(rows.size(), 50);
        const QString want = sha256sum(kModel);
        QSet<QString> ids;
        for (const QStringList& row : rows) {
            ids << row[0];
            QCOMPARE(row[1], want);
            // The Vulkan device (lavapipe without a GPU) is named.
            QVERIFY2(row[2].startsWith("vulkan:") && row[2].size() > 7, qPrintable(row[2]));
            QVERIFY(!row[3].isEmpty() && !row[4].isEmpty());
            QCOMPARE(row[5], QString(WB_APP_VERSION));
            QCOMPARE(row[6], QString("batch"));
            const int i = row[0].mid(1).toInt();
            QCOMPARE(row[7], QString("Once upon a time, \"number\" %1,\nthere was").arg(i));
        }
        QCOMPARE(ids.size(), 50);
        QCOMPARE(query(db, "SELECT count(*) FROM environments")[0][0], QString("1"));
        // Vulkan facts as vulkaninfo (an independent reader) reports them for
        // the device the batch ran on.
        const auto env = query(db,
                               "SELECT vk_device_name, vk_device_type, vk_driver_name, "
                               "vk_driver_version, vk_api_version FROM environments")[0];
        const QString summary = QString::fromUtf8(run("vulkaninfo", {"--summary"}).out);
        auto field = [&](const QString& key) {
            // Values of `key = value` lines, in device order.
            QStringList v;
            for (const QString& line : summary.split('\n'))
                if (line.trimmed().startsWith(key + " ")) v << line.section('=', 1).trimmed();
            return v;
        };
        const int dev = int(field("deviceName").indexOf(env[0]));
        QVERIFY2(dev >= 0, qPrintable(env[0]));
        QCOMPARE(env[2], field("driverName").value(dev));
        QCOMPARE(env[4], field("apiVersion").value(dev));
        QVERIFY2(env[3].contains(field("driverInfo").value(dev)), qPrintable(env[3]));
        const QString vk_type = field("deviceType").value(dev);  // PHYSICAL_DEVICE_TYPE_CPU
        QCOMPARE(env[1], vk_type.section("TYPE_", 1).toLower().replace('_', '-'));
        QCOMPARE(query(db, "SELECT count(*) FROM runs WHERE ended_ms IS NOT NULL")[0][0],
                 QString("1"));

        // Export: python3's csv and json modules read every row back.
        for (const char* fmt : {"csv", "jsonl"}) {
            const QString out = dir_.filePath(QString("fifty.") + fmt);
            const Run e = run(kCli, {"export", "--db", db, "--format", fmt, "-o", out});
            QVERIFY2(e.code == 0, e.err.constData());
            const char* script =
                fmt[0] == 'c'
                    ? "import csv,sys\nrows=list(csv.DictReader(open(sys.argv[1],newline='',"
                      "encoding='utf-8')))\nassert all(r['model_sha256']==sys.argv[2] for r in "
                      "rows)\n"
                      "assert all(r['prompt'].startswith('Once upon a time, \"number\" ') for r in "
                      "rows)\n"
                      "print(len(rows))\n"
                    : "import json,sys\nrows=[json.loads(l) for l in "
                      "open(sys.argv[1],encoding='utf-8')]\n"
                      "assert all(r['model_sha256']==sys.argv[2] for r in rows)\n"
                      "assert all(isinstance(r['settings'], dict) for r in "
                      "rows)\nprint(len(rows))\n";
            const Run py = run("python3", {"-c", script, out, want});
            QVERIFY2(py.code == 0, py.err.constData());
            QCOMPARE(py.out.trimmed(), QByteArray("50"));
        }
        // Filters on the command line.
        const Run one = run(kCli, {"export", "--db", db, "--format", "jsonl", "--model",
                                   want.left(12), "--finish-reason", "length"});
        QCOMPARE(one.code, 0);
        QVERIFY(one.out.count('\n') > 0);
        const Run none =
            run(kCli, {"export", "--db", db, "--format", "jsonl", "--until", "2000-01-01"});
        QCOMPARE(none.code, 0);
        QCOMPARE(none.out, QByteArray());
        // --search: prompt i is 'Once upon a time, "number" i,\nthere was', so
        // this (quote, other case, newline) matches i = 7 only, not 17 or 27.
        const Run seven = run(
            kCli, {"export", "--db", db, "--format", "jsonl", "--search", "\"NUMBER\" 7,\nthere"});
        QVERIFY2(seven.code == 0, seven.err.constData());
        QCOMPARE(seven.out.count('\n'), 1);
        QCOMPARE(QJsonDocument::fromJson(seven.out).object()["request_id"].toString(),
                 QString("q7"));

        // --no-log writes nothing.
        const Run quiet =
            run(kCli, {"batch", "-m", kModel, "--prompts", prompts, "-n", "2", "--backend", "cpu",
                       "--db", db, "--no-log", "-q", "-o", dir_.filePath("nolog.jsonl")});
        QVERIFY2(quiet.code == 0, quiet.err.constData());
        QCOMPARE(query(db, "SELECT count(*) FROM responses")[0][0], QString("50"));

        // Retention: prune everything older than 0 days.
        const Run prune = run(kCli, {"log", "prune", "--db", db, "--days", "0"});
        QVERIFY2(prune.code == 0, prune.err.constData());
        QVERIFY(prune.out.startsWith("deleted 50 responses"));
        QCOMPARE(query(db, "SELECT count(*) FROM responses")[0][0], QString("0"));
    }

    // Must show: kill -9 of `workbench-cli batch` mid-run keeps every
    // response it reported finished; integrity_check says ok.
    void killedBatchKeepsReportedResponses() {
        const QString db = dir_.filePath("killed.sqlite");
        const QString prompts = dir_.filePath("many.jsonl");
        write_prompts(prompts, 3000);
        QProcess p;
        p.start(kCli, {"batch", "-m", kModel, "--prompts", prompts, "--concurrency", "2", "-n",
                       "64", "--ignore-eos", "--backend", "cpu", "--db", db, "-q"});
        QVERIFY(p.waitForStarted());
        QStringList reported;
        QByteArray pending;
        auto drain = [&] {
            pending += p.readAllStandardOutput();
            int nl;
            while ((nl = pending.indexOf('\n')) >= 0) {
                const QJsonObject o = QJsonDocument::fromJson(pending.left(nl)).object();
                pending.remove(0, nl + 1);
                reported << o["id"].toString();
            }
        };
        while (reported.size() < 20 && p.state() == QProcess::Running) {
            if (!p.waitForReadyRead(60000)) break;
            drain();
        }
        QVERIFY2(reported.size() >= 20, p.readAllStandardError().constData());
        QVERIFY2(p.state() == QProcess::Running, "the batch finished before the kill");
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);
        drain();
        QCOMPARE(query(db, "PRAGMA integrity_check")[0][0], QString("ok"));
        QSet<QString> stored;
        for (const QStringList& r : query(db, "SELECT request_id FROM responses")) stored << r[0];
        for (const QString& id : reported) QVERIFY2(stored.contains(id), qPrintable(id));
        QVERIFY(stored.size() < 3000);  // really killed mid-run
        QCOMPARE(query(db, "SELECT count(*) FROM runs WHERE ended_ms IS NULL")[0][0], QString("1"));
    }

    void badDatabaseIsAClearError() {
        const QString bad = dir_.filePath("notes.sqlite");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("these are my notes\n");
        f.close();
        for (const QStringList& args :
             {QStringList{"export", "--db", bad},
              QStringList{"generate", "-m", kModel, "-p", "hi", "-n", "2", "--db", bad}}) {
            const Run r = run(kCli, args);
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains(bad.toUtf8() + ": not a SQLite database"), r.err.constData());
        }
        QCOMPARE(QFile(bad).size(), qint64(19));  // untouched
        const Run missing = run(kCli, {"export", "--db", dir_.filePath("none.sqlite")});
        QCOMPARE(missing.code, 1);
        QVERIFY(missing.err.contains("no run log here"));
        QVERIFY(!QFile::exists(dir_.filePath("none.sqlite")));
    }
};

QTEST_GUILESS_MAIN(TestRunLogCli)
#include "test_runlog_cli.moc"
