// The run log through workbench-cli as a user runs it (QProcess on the
// built binary): a 50-request batch logs 50 responses joined to the right
// model version (sha256sum) and environment; kill -9 of a batch keeps every
// response it reported; export (CSV / JSONL) parses with python3; log
// prune / config work. Every command gets --db in a temporary folder.

#include <signal.h>
#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "common/backends.h"
#include "common/data_dir.h"
#include "common/process.h"

namespace {

const QString kCli = WB_CLI_PATH;
const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";
// Random weights: an end-of-generation token is as likely as any of 32000,
// so generate keeps going until it is stopped.
const QString kRandom =
    QString::fromStdString(wbtest::data_dir()) + "/models/llama-2-tiny-random.gguf";

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

// True once `db` holds a response row with streamed text committed (the
// file and its tables may not exist yet).
bool has_streamed_text(const QString& db) {
    if (!QFile::exists(db)) return false;
    sqlite3* h = nullptr;
    bool yes = false;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(h, 2000);
        sqlite3_stmt* st = nullptr;
        // Fails (no table yet, locked while created): not yet.
        if (sqlite3_prepare_v2(h, "SELECT count(*) FROM responses WHERE output_bytes > 0", -1, &st,
                               nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            yes = sqlite3_column_int(st, 0) > 0;
        sqlite3_finalize(st);
    }
    sqlite3_close_v2(h);
    return yes;
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
        WB_SKIP_WITHOUT_VULKAN();
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

    // export -o on a full disk (/dev/full) or to a full stdout: exit 1 and
    // a sentence naming the output and the cause; never "exported N".
    void exportToFullDiskIsAnError() {
        const QString db = dir_.filePath("full.sqlite");
        const Run g = run(kCli, {"generate", "-m", kModel, "-p", "Once", "-n", "2", "--db", db,
                                 "--backend", "cpu"});
        QCOMPARE(g.code, 0);
        const Run r = run(kCli, {"export", "--db", db, "-o", "/dev/full"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("/dev/full: cannot write the export: No space left on device"),
                 r.err.constData());
        QVERIFY(!r.err.contains("exported"));
        QVERIFY(QFileInfo("/dev/full").exists() && !QFileInfo("/dev/full").isFile());
        QProcess p;
        p.setStandardOutputFile("/dev/full");
        p.start(kCli, {"export", "--db", db});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(p.readAllStandardError().contains(
                     "standard output: cannot write the export: No space left on device"),
                 "stdout");
    }

    // batch -o on a full disk used to exit 0 with records lost and the last
    // line cut. Now: exit status 1 and a sentence saying how many records
    // were written, the file holds exactly those (whole), and every
    // response is still in the run log. /dev/full (nothing can be written)
    // and a file-size limit (ulimit -f: some records fit, then EFBIG).
    void batchOutputOnFullDiskIsAnError() {
        const QString db = dir_.filePath("batch-full.sqlite");
        const QString prompts = dir_.filePath("full6.jsonl");
        write_prompts(prompts, 6);
        const Run a = run(kCli, {"batch", "-m", kModel, "--prompts", prompts, "-n", "32", "--db",
                                 db, "-q", "--backend", "cpu", "-o", "/dev/full"});
        QCOMPARE(a.code, 1);
        QVERIFY2(a.err.contains("batch: only 0 of 6 result records were written to /dev/full "
                                "(No space left on device)"),
                 a.err.constData());
        QCOMPARE(query(db, "SELECT count(*) FROM responses WHERE finish_reason = 'length'")[0][0],
                 QString("6"));
        QVERIFY(QFileInfo("/dev/full").exists() && !QFileInfo("/dev/full").isFile());

        // The whole output's size, then a limit of about half of it.
        const QString whole = dir_.filePath("whole.jsonl");
        const QStringList args = {"batch", "-m",       kModel, "--prompts", prompts, "-n",
                                  "32",    "--no-log", "-q",   "--backend", "cpu",   "-o"};
        QCOMPARE(run(kCli, args + QStringList{whole}).code, 0);
        const qint64 size = QFileInfo(whole).size();
        QVERIFY2(size >= 4096, qPrintable(QString::number(size)));
        const QString cut = dir_.filePath("cut.jsonl");
        QStringList limited = {
            "-c", QString("ulimit -f %1 && exec \"$0\" \"$@\"").arg(size / 2 / 1024), kCli};
        limited << args << cut;
        const Run b = run("bash", limited);
        QCOMPARE(b.code, 1);
        const QRegularExpressionMatch m =
            QRegularExpression(
                "batch: only (\\d+) of 6 result records were written to .*\\(File "
                "too large\\)")
                .match(QString::fromUtf8(b.err));
        QVERIFY2(m.hasMatch(), b.err.constData());
        const int k = m.captured(1).toInt();
        QVERIFY2(k > 0 && k < 6, b.err.constData());
        QFile f(cut);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        QVERIFY2(bytes.endsWith('\n'), "the last record is cut");
        const QList<QByteArray> lines = bytes.trimmed().split('\n');
        QCOMPARE(lines.size(), k);
        for (const QByteArray& l : lines)
            QVERIFY2(QJsonDocument::fromJson(l).isObject(), l.constData());
    }

    // SIGTERM (what kill, systemd and container runtimes send) stops
    // generate like Ctrl-C: the response is logged "cancelled" with exactly
    // the text that was streamed. It used to be logged not at all.
    void generateSigtermLogsCancelledWithStreamedText() {
        WB_SKIP_WITHOUT_VULKAN();
        const QString db = dir_.filePath("sigterm.sqlite");
        QProcess p;
        p.start(kCli, {"generate", "-m", kRandom, "-p", "Once upon a time", "-n", "4000", "-c",
                       "4096", "--db", db, "--backend", "vulkan"});
        QVERIFY(p.waitForStarted());
        QByteArray out;
        while (out.size() < 40 && p.waitForReadyRead(120000)) out += p.readAllStandardOutput();
        QVERIFY2(out.size() >= 40, "no text streamed");
        ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
        QVERIFY(p.waitForFinished(120000));
        out += p.readAllStandardOutput();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 143);
        const auto rows =
            query(db, "SELECT finish_reason, output, error, finished_ms FROM responses");
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0][0], QString("cancelled"));
        QVERIFY2(QString::fromUtf8(out).startsWith(rows[0][1]) &&
                     QString::fromUtf8(out).trimmed() == rows[0][1].trimmed(),
                 qPrintable(rows[0][1].left(200)));
        QVERIFY2(rows[0][2].contains("SIGTERM"), qPrintable(rows[0][2]));
        QVERIFY(!rows[0][3].isEmpty());
    }

    // kill -9 cannot be caught: the row written when generation started,
    // updated about once a second, is what remains: "interrupted", no
    // finish time, the text streamed up to the last update.
    void generateKilledLeavesInterruptedRow() {
        WB_SKIP_WITHOUT_VULKAN();
        const QString db = dir_.filePath("generate-killed.sqlite");
        QProcess p;
        p.start(kCli, {"generate", "-m", kRandom, "-p", "Once upon a time", "-n", "4000", "-c",
                       "4096", "--db", db, "--backend", "vulkan"});
        QVERIFY(p.waitForStarted());
        QByteArray out;
        // Killed once an update with text is committed (about a second in).
        bool streamed = false;
        for (int i = 0; i < 1200 && !streamed && p.state() == QProcess::Running; ++i) {
            p.waitForReadyRead(100);
            out += p.readAllStandardOutput();
            streamed = has_streamed_text(db);
        }
        QVERIFY2(streamed && p.state() == QProcess::Running, "generate ended before an update");
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(60000));
        out += p.readAllStandardOutput();
        const auto rows = query(db, "SELECT finish_reason, output, finished_ms FROM responses");
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows[0][0], QString("interrupted"));
        QVERIFY(rows[0][2].isEmpty());
        QVERIFY2(!rows[0][1].isEmpty(), "no text was stored before the kill");
        QVERIFY2(QString::fromUtf8(out).startsWith(rows[0][1]), qPrintable(rows[0][1].left(200)));
    }

    // SIGTERM cancels a batch like Ctrl-C: every request has its record and
    // its row, none left "interrupted"; exit status 143.
    void batchSigtermCancelsAndLogsEveryRequest() {
        WB_SKIP_WITHOUT_VULKAN();
        const QString db = dir_.filePath("batch-term.sqlite");
        const QString prompts = dir_.filePath("term.jsonl");
        write_prompts(prompts, 6);
        QProcess p;
        p.start(kCli,
                {"batch", "-m", kModel, "--prompts", prompts, "-n", "2000", "-c", "2048",
                 "--ignore-eos", "--concurrency", "2", "--db", db, "-q", "--backend", "vulkan"});
        QVERIFY(p.waitForStarted());
        // Some tokens are generated (the rows exist and carry text) before SIGTERM.
        for (int i = 0; i < 600 && !has_streamed_text(db); ++i) QThread::msleep(100);
        ::kill(static_cast<pid_t>(p.processId()), SIGTERM);
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 143);
        const QList<QByteArray> records = p.readAllStandardOutput().trimmed().split('\n');
        QCOMPARE(records.size(), 6);
        const auto rows = query(db, "SELECT finish_reason, count(*) FROM responses GROUP BY 1");
        int n = 0;
        for (const auto& r : rows) {
            QVERIFY2(r[0] == "cancelled" || r[0] == "length", qPrintable(r[0]));
            n += r[1].toInt();
        }
        QCOMPARE(n, 6);
        QVERIFY(query(db,
                      "SELECT count(*) FROM responses WHERE finish_reason = 'cancelled' AND "
                      "output_bytes > 0")[0][0]
                    .toInt() > 0);
    }

    // Another program holds the run log's write lock for 8 s (past SQLite's
    // 5 s busy timeout): the write is retried, the batch goes on, and every
    // response is logged. It used to abort the batch and drop the response.
    void busyRunLogIsRetried() {
        const QString db = dir_.filePath("busy.sqlite");
        const QString prompts = dir_.filePath("busy.jsonl");
        write_prompts(prompts, 4);
        QCOMPARE(run(kCli, {"generate", "-m", kModel, "-p", "x", "-n", "1", "--db", db, "--backend",
                            "cpu"})
                     .code,
                 0);
        QProcess lock;
        lock.start("python3", {"-c",
                               "import sqlite3, sys, time\n"
                               "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                               "c.execute('BEGIN IMMEDIATE')\n"
                               "print('locked', flush=True)\n"
                               "time.sleep(8)\n"
                               "c.execute('COMMIT')\n",
                               db});
        QVERIFY(lock.waitForReadyRead(30000));
        const Run r = run(kCli, {"batch", "-m", kModel, "--prompts", prompts, "-n", "4", "--db", db,
                                 "-q", "--backend", "cpu"});
        lock.waitForFinished(60000);
        QVERIFY2(r.code == 0, r.err.constData());
        QCOMPARE(r.out.trimmed().split('\n').size(), 4);
        QCOMPARE(
            query(db, "SELECT count(*) FROM responses WHERE finish_reason != 'interrupted'")[0][0],
            QString("5"));  // 1 from generate + 4
    }

    // The cold start is logged with the model. `generate` and
    // `batch` each write one model_loads row (their run, the model version
    // and environment of their responses), completed by the first token;
    // `log loads` prints them.
    void coldStartIsLoggedWithTheModel() {
        const QString db = dir_.filePath("loads.sqlite");
        const QString prompts = dir_.filePath("loads.jsonl");
        write_prompts(prompts, 3);
        QCOMPARE(run(kCli, {"generate", "-m", kModel, "-p", "Once", "-n", "3", "--db", db,
                            "--backend", "cpu"})
                     .code,
                 0);
        QCOMPARE(run(kCli, {"batch", "-m", kModel, "--prompts", prompts, "-n", "3", "--db", db,
                            "-q", "--backend", "cpu"})
                     .code,
                 0);
        const auto loads =
            query(db,
                  "SELECT l.surface, u.kind, l.model_version_id = r.model_version_id, "
                  "l.environment_id = r.environment_id, l.pipeline_cache, "
                  "l.first_token_ms IS NOT NULL AND l.first_token_ms >= l.ready_ms, "
                  "l.upload_ms IS NOT NULL, json_extract(l.settings, '$.backend') "
                  "FROM model_loads l JOIN runs u ON u.id = l.run_id "
                  "JOIN responses r ON r.run_id = l.run_id GROUP BY l.id ORDER BY l.id");
        QCOMPARE(loads.size(), 2);
        QCOMPARE(loads[0],
                 (QStringList{"generate", "generate", "1", "1", "none", "1", "1", "cpu"}));
        QCOMPARE(loads[1], (QStringList{"batch", "batch", "1", "1", "none", "1", "1", "cpu"}));
        const Run shown = run(kCli, {"log", "loads", "--db", db});
        QVERIFY2(shown.code == 0, shown.err.constData());
        const QList<QByteArray> lines = shown.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);  // header, batch, generate (newest first)
        QVERIFY2(lines[1].contains(" batch ") && lines[2].contains(" generate "),
                 shown.out.constData());
        QVERIFY2(!lines[2].trimmed().split(' ').contains("-"), shown.out.constData());
    }

    // The run log's disk fills up mid-batch (a 200 KiB tmpfs): the batch
    // used to abort on the first failed write, dropping the response it had
    // just finished. Now it runs to the end, every result record is on
    // stdout, the rows that could not be written are kept and retried, and
    // the end says how many are not logged (exit status 1).
    void fullRunLogDiskNeverDropsAResponse() {
        const QString d = dir_.filePath("full");
        QDir().mkpath(d);
        const QString seed = d + "/seed.sqlite";
        QCOMPARE(run(kCli, {"generate", "-m", kModel, "-p", "x", "-n", "1", "--db", seed,
                            "--backend", "cpu"})
                     .code,
                 0);
        const QString prompts = d + "/p.jsonl";
        write_prompts(prompts, 30);
        const QString mnt = d + "/mnt";
        QDir().mkpath(mnt);
        const QString script =
            QString(
                "mount -t tmpfs -o size=%1 tmpfs '%2' && cp '%3' '%2/runlog.sqlite' && "
                "'%4' batch -m '%5' --prompts '%6' -n 16 --db '%2/runlog.sqlite' -q --backend cpu; "
                "rc=$?; echo \"rows=$(python3 -c \"import sqlite3; "
                "print(sqlite3.connect('%2/runlog.sqlite')"
                ".execute('select count(*) from responses where finished_ms is not "
                "null').fetchone()[0])\")\" >&2; exit $rc")
                .arg(QFileInfo(seed).size() + 96 * 1024)
                .arg(mnt, seed, kCli, kModel, prompts);
        const Run r = run("unshare", {"-rm", "sh", "-c", script});
        if (r.err.contains("unshare failed") || r.err.contains("Operation not permitted"))
            QSKIP("no user namespace to mount a small tmpfs in");
        QCOMPARE(r.code, 1);
        QVERIFY2(
            r.err.contains("responses could not be logged") && r.err.contains("the disk is full"),
            r.err.constData());
        QCOMPARE(r.out.trimmed().split('\n').size(), 30);  // every record
        const int logged = r.err.mid(r.err.lastIndexOf("rows=") + 5).trimmed().toInt();
        const QRegularExpressionMatch m =
            QRegularExpression("batch: (\\d+) responses could not be logged")
                .match(QString::fromUtf8(r.err));
        QVERIFY2(m.hasMatch(), r.err.constData());
        const int unlogged = m.captured(1).toInt();
        QVERIFY2(logged >= 1 && unlogged > 0, r.err.constData());  // the seed row + some
        QCOMPARE(logged - 1 + unlogged, 30);  // none dropped: logged or reported
    }

    // --db in a folder that does not exist: the folder is made 0700 and a
    // stderr line says so; the log is 0600 (the umask gave 0755 and 0644).
    void dbFolderIsCreatedPrivateAndSaid() {
        const QString folder = dir_.filePath("made/here");
        const QString db = folder + "/runlog.sqlite";
        const Run r = run(kCli, {"generate", "-m", kModel, "-p", "hi", "-n", "1", "--db", db,
                                 "--backend", "cpu"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(
            r.err.contains("note: created the run log's folder " + folder.toUtf8() + " (mode 0700"),
            r.err.constData());
        QCOMPARE(QFileInfo(folder).permissions(), QFile::ReadOwner | QFile::WriteOwner |
                                                      QFile::ExeOwner | QFile::ReadUser |
                                                      QFile::WriteUser | QFile::ExeUser);
        QCOMPARE(QFileInfo(db).permissions(),
                 QFile::ReadOwner | QFile::WriteOwner | QFile::ReadUser | QFile::WriteUser);
        // The second run has nothing to say about the folder.
        const Run again = run(kCli, {"generate", "-m", kModel, "-p", "hi", "-n", "1", "--db", db,
                                     "--backend", "cpu"});
        QVERIFY2(again.code == 0 && !again.err.contains("run log's folder"), again.err.constData());
    }

    // A new log on a full disk (a tmpfs filled to the last block): the open
    // failed but left an empty runlog.sqlite (and the folder it made)
    // behind. Now the error says the disk is full and nothing is left.
    void logCreationOnFullDiskLeavesNothing() {
        const QString mnt = dir_.filePath("fullmnt");
        QDir().mkpath(mnt);
        const QString script =
            QString(
                "mount -t tmpfs -o size=64k tmpfs '%1' && "
                "(dd if=/dev/zero of='%1/fill' bs=4096 2>/dev/null; true) && "
                "'%2' generate -m '%3' -p hi -n 1 --backend cpu --db '%1/logs/runlog.sqlite'; "
                "rc=$?; if [ -e '%1/logs' ]; then echo \"left: $(ls -A '%1/logs')\" >&2; fi; "
                "exit $rc")
                .arg(mnt, kCli, kModel);
        const Run r = run("unshare", {"-rm", "sh", "-c", script});
        if (r.err.contains("unshare failed") || r.err.contains("Operation not permitted"))
            QSKIP("no user namespace to mount a small tmpfs in");
        QVERIFY2(r.code == 1, r.err.constData());
        QVERIFY2(r.err.contains("/logs/runlog.sqlite: cannot set up the run log: the disk is full"),
                 r.err.constData());
        QVERIFY2(!r.err.contains("left:"), r.err.constData());
    }

    void badDatabaseIsAClearError() {
        const QString bad = dir_.filePath("notes.sqlite");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("these are my notes\n");
        f.close();
        // log loads printed SQLite's own "file is not a database"; now it
        // says what the file is, as export and generate do.
        for (const QStringList& args :
             {QStringList{"export", "--db", bad},
              QStringList{"generate", "-m", kModel, "-p", "hi", "-n", "2", "--db", bad},
              QStringList{"log", "loads", "--db", bad}}) {
            const Run r = run(kCli, args);
            QCOMPARE(r.code, 1);
            QVERIFY2(r.err.contains(bad.toUtf8() + ": not a SQLite database"), r.err.constData());
            QVERIFY2(!r.err.contains("file is not a database"), r.err.constData());
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
