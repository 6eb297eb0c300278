// Damaged and wrong run-log files: what open() says, what inspect_log()
// counts, and what salvage_log() recovers, on real SQLite files.
//
// Expected values come from outside the code under test: the rows are
// snapshotted with the raw SQLite C API before the damage, and which rows
// live on the damaged pages is read from SQLite's own dbstat table (leaf
// pages of the responses b-tree in key order, with their cell counts), so
// "rows that must survive" is known independently of the salvage code.
// Every case checks that the damaged file keeps its exact bytes and that
// no file beside it was renamed, moved or created.

#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/data_dir.h"
#include "common/process.h"
#include "common/raw_sqlite.h"
#include "runlog/environment.h"
#include "runlog/exporter.h"
#include "runlog/integrity.h"
#include "runlog/run_log.h"
#include "runlog/schema.h"
#include "runlog/scratch_copy.h"
#include "runlog/sqlite_db.h"

using namespace wb::runlog;

namespace {

const std::string kStories = wbtest::data_dir() + "/models/stories260K.gguf";
const std::string kTiny = wbtest::data_dir() + "/models/llama-2-tiny-random.gguf";
constexpr int kResponses = 84;

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

QStringList listing(const QString& dir) {
    return QDir(dir).entryList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden,
                               QDir::Name);
}

// Raw SQLite reads (independent of wb_runlog).
using Raw = wbtest::RawSqlite;

// Every response row as text, by id (the independent snapshot).
std::map<int64_t, std::vector<std::string>> snapshot(const QString& path) {
    std::map<int64_t, std::vector<std::string>> out;
    for (auto& r : Raw(path).rows("SELECT * FROM responses ORDER BY id")) out[std::stoll(r[0])] = r;
    return out;
}

// A real run log: two model versions, two environments, three runs, 84
// responses of a few hundred bytes each (about 7 per 4 KiB page), then
// checkpointed into the main file (rollback journal: no -wal beside it).
void make_log(const QString& path) {
    RunLog log = RunLog::open(path.toStdString());
    const int64_t mv[2] = {log.ensure_model_version(kStories), log.ensure_model_version(kTiny)};
    EnvironmentInfo e1 = collect_environment("cpu"), e2 = collect_environment("cpu");
    e2.cpu += " (second)";
    const int64_t env[2] = {log.ensure_environment(e1), log.ensure_environment(e2)};
    int64_t runs[3];
    for (int r = 0; r < 3; ++r)
        runs[r] = log.begin_run(RunKind::Batch, "set " + std::to_string(r), {{"n_parallel", 4}});
    std::mt19937 rng(7);
    for (int i = 0; i < kResponses; ++i) {
        ResponseRecord rec;
        rec.run_id = runs[i % 3];
        rec.model_version_id = mv[i % 2];
        rec.environment_id = env[(i / 2) % 2];
        rec.request_id = "p" + std::to_string(i);
        rec.settings = {{"seed", i}, {"max_tokens", 64}};
        rec.prompt =
            "Prompt " + std::to_string(i) + ": " + std::string(150 + rng() % 100, 'a' + i % 26);
        rec.output =
            "Output " + std::to_string(i) + ": " + std::string(200 + rng() % 150, 'A' + i % 26);
        rec.prompt_tokens = 40 + i;
        rec.output_tokens = 64;
        rec.finish_reason = i % 7 == 0 ? "stop" : "length";
        rec.ttft_ms = 10.0 + i;
        rec.e2e_ms = 100.0 + i;
        rec.started_ms = 1764460800000 + int64_t{i} * 1000;
        rec.finished_ms = rec.started_ms + 100 + i;
        log.log_response(rec);
    }
    for (int r = 0; r < 3; ++r) log.end_run(runs[r]);
}

void to_rollback_journal(const QString& path) {
    Raw raw(path, true);
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
}

// Leaf pages of the responses table in key order, each with the ids on it
// (SQLite's dbstat: leaves in path order, ids consecutive).
std::vector<std::pair<int64_t, std::vector<int64_t>>> response_leaves(const QString& path) {
    Raw raw(path);
    const auto ids = raw.rows("SELECT id FROM responses ORDER BY id");
    std::vector<std::pair<int64_t, std::vector<int64_t>>> out;
    size_t k = 0;
    for (const auto& r :
         raw.rows("SELECT pageno, ncell FROM dbstat WHERE name = 'responses' AND pagetype = "
                  "'leaf' ORDER BY path")) {
        std::vector<int64_t> on_page;
        for (int c = 0; c < std::stoi(r[1]); ++c) on_page.push_back(std::stoll(ids[k++][0]));
        out.emplace_back(std::stoll(r[0]), on_page);
    }
    if (k != ids.size()) qFatal("dbstat leaves hold %zu of %zu rows", k, ids.size());
    return out;
}

void overwrite(const QString& path, qint64 offset, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::ReadWrite) || !f.seek(offset) || f.write(bytes) != bytes.size())
        qFatal("cannot damage %s", qPrintable(path));
}

QByteArray garbage(int n, unsigned seed) {
    std::mt19937 rng(seed);
    QByteArray b(n, '\0');
    for (char& c : b) c = static_cast<char>(rng());
    return b;
}

}  // namespace

class TestRunLogIntegrity : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    int n_ = 0;

    // A fresh folder holding one healthy log "runlog.sqlite" (rollback journal).
    QString fresh_log() {
        const QString d = dir_.filePath(QString("case%1").arg(n_++));
        QDir().mkpath(d);
        const QString path = d + "/runlog.sqlite";
        make_log(path);
        to_rollback_journal(path);
        return path;
    }

  private slots:
    // Cold starts (model_loads, schema 4) and run events (schema 6) are
    // salvaged with the rest, and one whose run cannot be kept is counted
    // as lost, never dropped without a word.
    void salvageCountsModelLoads() {
        const QString path = fresh_log();
        {
            RunLog log = RunLog::open(path.toStdString());
            const int64_t mv = log.ensure_model_version(kStories);
            const int64_t env = log.ensure_environment(collect_environment("cpu"));
            const int64_t kept_run = log.begin_run("generate", "kept", nlohmann::json::object());
            const int64_t gone_run = log.begin_run("generate", "gone", nlohmann::json::object());
            for (const int64_t run : {kept_run, gone_run}) {
                ModelLoadRecord l;
                l.model_version_id = mv;
                l.environment_id = env;
                l.run_id = run;
                l.surface = "generate";
                l.settings = {{"backend", "cpu"}};
                l.opened_ms = 1796207000000;
                l.ready_ms = 5.0;
                log.log_model_load(l);
                // A run event each (schema 6), kept or lost with its run.
                RunEvent e;
                e.run_id = run;
                e.t_ms = 1796207000000;
                e.kind = "server_start";
                e.details = {{"port", 8080}};
                log.log_event(e);
            }
        }
        {
            // Another program deletes a run that has no responses: its
            // load now refers to nothing.
            const Raw raw(path, true);
            raw.exec("PRAGMA foreign_keys = OFF; DELETE FROM runs WHERE name = 'gone';");
        }
        to_rollback_journal(path);
        const QString out = QFileInfo(path).path() + "/salvaged.sqlite";
        const SalvageReport rep = salvage_log(path.toStdString(), out.toStdString());
        QCOMPARE(rep.model_loads, int64_t(1));
        QCOMPARE(rep.model_loads_lost, int64_t(1));
        QCOMPARE(rep.responses, int64_t(kResponses));
        QVERIFY2(QString::fromStdString(rep.summary()).contains("1 model loads could not be read"),
                 rep.summary().c_str());
        QCOMPARE(Raw(out).rows("SELECT count(*) FROM model_loads")[0][0], std::string("1"));
        QCOMPARE(rep.run_events, int64_t(1));
        QCOMPARE(rep.run_events_lost, int64_t(1));
        QVERIFY2(QString::fromStdString(rep.summary()).contains("1 run events lost"),
                 rep.summary().c_str());
        QCOMPARE(
            Raw(out).rows("SELECT r.name FROM run_events e JOIN runs r ON r.id = e.run_id")[0][0],
            std::string("kept"));
    }

    // The checks that read a log's bytes before SQLite does (a second
    // strict open, the export's header check) run in the process that keeps
    // the log open. They must not drop that connection's POSIX locks (a
    // close() of any descriptor of the file drops them all): another
    // program closing the log last would then checkpoint and delete the
    // WAL under the open connection (https://sqlite.org/howtocorrupt.html
    // section 2.2).
    void header_checks_keep_the_open_connections_locks() {
        const QString path = fresh_log();
        RunLog log = RunLog::open(path.toStdString());  // WAL, kept open
        const int64_t run = log.begin_run(RunKind::Batch, "kept", nlohmann::json::object());
        QVERIFY(run > 0);
        QVERIFY(QFile::exists(path + "-wal"));
        QVERIFY(has_sqlite_header(path.toStdString()));
        { RunLog second = RunLog::open(path.toStdString()); }
        // Another program opens the log and closes it: it is not the last
        // connection, so the WAL stays.
        const wbtest::ProcessResult r =
            wbtest::run_process("python3",
                                {"-c",
                                 "import sqlite3, sys\n"
                                 "c = sqlite3.connect(sys.argv[1])\n"
                                 "print(c.execute('SELECT count(*) FROM runs').fetchone()[0])\n"
                                 "c.close()\n",
                                 path},
                                60000);
        QCOMPARE(r.code, 0);
        QVERIFY2(QFile::exists(path + "-wal"), "another program deleted the WAL of an open log");
        QVERIFY(log.begin_run(RunKind::Batch, "after", nlohmann::json::object()) > run);
    }

    // 8 KiB of garbage over two leaf pages of responses in the middle of
    // the file. It used to open silently (History showed what it could,
    // new rows went into the damaged file, export failed with raw SQL).
    void damaged_middle_is_refused_counted_and_salvaged() {
        const QString path = fresh_log();
        const auto before = snapshot(path);
        QCOMPARE(int(before.size()), kResponses);
        const auto leaves = response_leaves(path);
        QVERIFY2(leaves.size() >= 6, "the responses should span several pages");
        // Two consecutive pages in the file, both responses leaves, mid-table.
        size_t pick = leaves.size();
        for (size_t i = leaves.size() / 3; i + 1 < leaves.size(); ++i)
            if (leaves[i + 1].first == leaves[i].first + 1) {
                pick = i;
                break;
            }
        QVERIFY(pick < leaves.size());
        std::set<int64_t> lost(leaves[pick].second.begin(), leaves[pick].second.end());
        lost.insert(leaves[pick + 1].second.begin(), leaves[pick + 1].second.end());
        overwrite(path, (leaves[pick].first - 1) * 4096, garbage(8192, 1));
        const QByteArray damaged = file_bytes(path);
        const QStringList files = listing(QFileInfo(path).path());

        // open(): refused, counted, with what to do; nothing touched.
        try {
            RunLog::open(path.toStdString());
            QFAIL("a damaged log opened");
        } catch (const OpenError& e) {
            QCOMPARE(e.problem(), OpenProblem::Corrupt);
            const QString w = e.what();
            const int readable = kResponses - int(lost.size());
            QVERIFY2(w.startsWith(path + ": the run log is damaged (SQLite's integrity check"),
                     e.what());
            QVERIFY2(w.contains(QString("%1 responses can still be read").arg(readable)), e.what());
            QVERIFY2(w.contains("workbench-cli log salvage --db " + path), e.what());
            QVERIFY2(w.contains("--no-log"), e.what());
            QVERIFY(e.inspection());
            QCOMPARE(e.inspection()->readable_responses, int64_t(readable));
            QVERIFY(e.inspection()->unreadable_responses >= int64_t(lost.size()));
        }
        QCOMPARE(file_bytes(path), damaged);
        QCOMPARE(listing(QFileInfo(path).path()), files);

        // inspect_log(): the same, without touching anything.
        const LogInspection insp = inspect_log(path.toStdString());
        QCOMPARE(insp.state, LogState::Damaged);
        QVERIFY(!insp.header_damaged);
        QCOMPARE(insp.readable_responses, int64_t(kResponses - int(lost.size())));

        // salvage: every row not on the damaged pages, byte for byte.
        const QString out = QFileInfo(path).path() + "/salvaged.sqlite";
        const SalvageReport rep = salvage_log(path.toStdString(), out.toStdString());
        QCOMPARE(rep.responses, int64_t(kResponses - int(lost.size())));
        QCOMPARE(rep.runs, int64_t(3));
        QCOMPARE(rep.model_versions, int64_t(2));
        QCOMPARE(rep.environments, int64_t(2));
        QCOMPARE(rep.placeholders, int64_t(0));
        // Only the new file beside it (read before SQLite readers add -wal/-shm).
        QCOMPARE(listing(QFileInfo(path).path()).join(" "),
                 (files + QStringList{"salvaged.sqlite"}).join(" "));
        const auto after = snapshot(out);
        for (const auto& [id, row] : before) {
            if (lost.count(id)) {
                QVERIFY(!after.count(id));
                continue;
            }
            QVERIFY2(after.count(id), qPrintable(QString("response %1 lost").arg(id)));
            QCOMPARE(after.at(id), row);
        }
        QCOMPARE(file_bytes(path), damaged);
        // The salvaged log is a healthy run log that takes new responses.
        RunLog again = RunLog::open(out.toStdString());
        again.begin_run(RunKind::Chat, "after salvage", nlohmann::json::object());
        // Salvage never overwrites.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 salvage_log(path.toStdString(), out.toStdString()));
    }

    // The 100-byte header overwritten: SQLite says "not a database", and
    // the log was set aside as if it were a stranger's file. It is a
    // damaged run log: every row is still there and salvage gets them all.
    void damaged_header_is_recognised_and_fully_salvaged() {
        const QString path = fresh_log();
        const auto before = snapshot(path);
        overwrite(path, 0, garbage(100, 2));
        const QByteArray damaged = file_bytes(path);
        const QStringList files = listing(QFileInfo(path).path());
        try {
            RunLog::open(path.toStdString());
            QFAIL("opened");
        } catch (const OpenError& e) {
            QCOMPARE(e.problem(), OpenProblem::Corrupt);
            QVERIFY2(QString(e.what()).contains("header (its first 100 bytes) is damaged"),
                     e.what());
            QVERIFY2(QString(e.what()).contains("84 responses can still be read"), e.what());
        }
        const LogInspection insp = inspect_log(path.toStdString());
        QCOMPARE(insp.state, LogState::Damaged);
        QVERIFY(insp.header_damaged);
        QCOMPARE(insp.readable_responses, int64_t(kResponses));
        const QString out = QFileInfo(path).path() + "/salvaged.sqlite";
        const SalvageReport rep = salvage_log(path.toStdString(), out.toStdString());
        QVERIFY(rep.header_rebuilt);
        QCOMPARE(rep.responses, int64_t(kResponses));
        QCOMPARE(listing(QFileInfo(path).path()).join(" "),
                 (files + QStringList{"salvaged.sqlite"}).join(" "));
        QCOMPARE(snapshot(out), before);
        QCOMPARE(file_bytes(path), damaged);
    }

    // A file that is not SQLite (`--db ~/notes.txt`): it used to be renamed
    // to *.unusable-<time> and replaced by a new log. Refused, untouched.
    void not_sqlite_is_refused_and_left_alone() {
        const QString d = dir_.filePath("notes");
        QDir().mkpath(d);
        const QString path = d + "/notes.txt";
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray("shopping: eggs, milk\n").repeated(400));
        f.close();
        const QByteArray bytes = file_bytes(path);
        try {
            RunLog::open(path.toStdString());
            QFAIL("opened");
        } catch (const OpenError& e) {
            QCOMPARE(e.problem(), OpenProblem::NotSqlite);
            QVERIFY2(QString(e.what()).startsWith(path + ": not a SQLite database"), e.what());
            QVERIFY2(QString(e.what()).contains("nothing was changed"), e.what());
        }
        QCOMPARE(inspect_log(path.toStdString()).state, LogState::NotSqlite);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                 salvage_log(path.toStdString(), (d + "/x.sqlite").toStdString()));
        QCOMPARE(file_bytes(path), bytes);
        QCOMPARE(listing(d), QStringList{"notes.txt"});
    }

    // /dev/null read as an empty database and swallowed every write; a
    // FIFO blocked the open; a folder. Each refused by what it is.
    void devices_fifos_and_folders_are_refused() {
        const QString fifo = dir_.filePath("log.fifo");
        QCOMPARE(::mkfifo(fifo.toUtf8().constData(), 0600), 0);
        for (const auto& [path, kind] : std::vector<std::pair<QString, QString>>{
                 {"/dev/null", "a character device"}, {fifo, "a FIFO"}}) {
            try {
                RunLog::open(path.toStdString());
                QFAIL("opened");
            } catch (const OpenError& e) {
                QCOMPARE(e.problem(), OpenProblem::CannotOpen);
                QVERIFY2(
                    QString(e.what()).contains(path + ": is not a regular file (it is " + kind),
                    e.what());
            }
            QCOMPARE(inspect_log(path.toStdString()).state, LogState::NotRegular);
        }
        QVERIFY_THROWS_EXCEPTION(OpenError, RunLog::open(dir_.path().toStdString()));
    }

    // A healthy log that cannot be written: open() refuses it (tested with
    // permissions in test_runlog); open_readonly() reads it and refuses
    // every write in a sentence.
    void read_only_use_reads_and_never_writes() {
        const QString path = fresh_log();
        const QByteArray bytes = file_bytes(path);
        RunLog ro = RunLog::open_readonly(path.toStdString());
        QVERIFY(ro.read_only());
        std::ostringstream csv;
        QCOMPARE(export_responses(ro, {}, ExportFormat::Csv, csv), int64_t(kResponses));
        try {
            ro.begin_run(RunKind::Chat, "x", nlohmann::json::object());
            QFAIL("wrote");
        } catch (const DbError& e) {
            QVERIFY2(QString(e.what()).contains("open read-only"), e.what());
        }
        QCOMPARE(file_bytes(path), bytes);
    }

    // Export checks the log first: a damaged log is a sentence naming the
    // file, the damage and the way out, not a raw, truncated SQL error.
    void export_of_damaged_log_says_what_to_do() {
        const QString path = fresh_log();
        const auto leaves = response_leaves(path);
        overwrite(path, (leaves[leaves.size() / 2].first - 1) * 4096, garbage(4096, 3));
        std::ostringstream out;
        try {
            export_responses_readonly(path.toStdString(), {}, ExportFormat::Csv, out);
            QFAIL("exported");
        } catch (const std::runtime_error& e) {
            const QString w = e.what();
            QVERIFY2(w.startsWith(path + ": cannot export: the run log is damaged"), e.what());
            QVERIFY2(w.contains("responses can still be read") && w.contains("salvage"), e.what());
            QVERIFY2(!w.contains("SELECT"), e.what());
        }
    }

    // Another program holds the write lock for longer than SQLite's busy
    // timeout: the write used to fail at once (and batch aborted, dropping
    // the response it had just finished). Now it is retried; when the lock
    // outlasts every try, the error is a sentence naming the file, the
    // cause and the response, nothing is half written, and the caller's
    // later try succeeds.
    void busy_log_is_retried_then_reported() {
        const QString d = dir_.filePath("busy");
        QDir().mkpath(d);
        const QString path = d + "/runlog.sqlite";
        RunLog log = RunLog::open(path.toStdString());
        const int64_t run = log.begin_run(RunKind::Batch, "busy", nlohmann::json::object());
        const int64_t mv = log.ensure_model_version(kStories);
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        ResponseRecord r;
        r.run_id = run;
        r.model_version_id = mv;
        r.environment_id = env;
        r.request_id = "p1";
        r.output = "once";
        r.started_ms = 1764460800000;

        Raw holder(path, true);
        holder.exec("BEGIN IMMEDIATE");  // the write lock, as another writer holds it
        // The lock is released after about 1 s; 4 tries of 1 s wait long enough.
        log.set_write_retry(4, 1000);
        std::thread release([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(1000));
            holder.exec("COMMIT");
        });
        const int64_t id = log.log_response(r);
        release.join();
        QVERIFY(id > 0);

        // Held past every try: a sentence, and nothing written.
        holder.exec("BEGIN IMMEDIATE");
        log.set_write_retry(2, 100);
        r.request_id = "p2";
        try {
            log.log_response(r);
            QFAIL("wrote through a held lock");
        } catch (const DbError& e) {
            const QString w = e.what();
            QVERIFY2(w.startsWith(path + ": the run log stayed locked by another program"),
                     e.what());
            QVERIFY2(w.contains("response \"p2\" is not logged yet"), e.what());
        }
        holder.exec("COMMIT");
        QCOMPARE(log.log_response(r) > id, true);  // the caller's later try
        QCOMPARE(Raw(path).rows("SELECT count(*) FROM responses")[0][0], std::string("2"));
    }

    // A response's row is written when it starts and kept up to date, so a
    // process killed mid-response (kill -9: nothing can be caught) leaves an
    // honest record: finish "interrupted", no finish time, and the text up
    // to the last committed update. It used to leave no row at all.
    void killed_writer_leaves_an_interrupted_row() {
        const QString d = dir_.filePath("killed");
        QDir().mkpath(d);
        const QString path = d + "/runlog.sqlite";
        QProcess p;
        p.start(WB_RUNLOG_WRITER, {"stream", path, QString::fromStdString(kStories)});
        QVERIFY(p.waitForStarted());
        int last = 0;
        while (last < 20 && p.waitForReadyRead(30000)) {
            while (p.canReadLine()) {
                const QByteArray line = p.readLine().trimmed();
                if (line.startsWith("updated ")) last = line.mid(8).toInt();
            }
        }
        QVERIFY2(last >= 20, "the writer did not stream");
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        p.waitForFinished();
        const auto rows = Raw(path).rows(
            "SELECT finish_reason, finished_ms, error, output, output_tokens FROM responses");
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(rows[0][0], std::string("interrupted"));
        QCOMPARE(rows[0][1], std::string("<null>"));
        QCOMPARE(rows[0][2], std::string(kInterruptedError));
        const int stored = std::stoi(rows[0][4]);
        QVERIFY2(stored >= last, "an update reported committed is missing");
        std::string want;
        for (int n = 1; n <= stored; ++n) want += "piece" + std::to_string(n) + " ";
        QCOMPARE(rows[0][3], want);
    }

    // The same row finished normally: every field is the final one.
    void started_row_is_finished_in_place() {
        const QString d = dir_.filePath("finished");
        QDir().mkpath(d);
        RunLog log = RunLog::open((d + "/runlog.sqlite").toStdString());
        ResponseRecord r;
        r.run_id = log.begin_run(RunKind::Chat, "c", nlohmann::json::object());
        r.model_version_id = log.ensure_model_version(kStories);
        r.environment_id = log.ensure_environment(collect_environment("cpu"));
        r.request_id = "chat-1";
        r.prompt = "Hi";
        r.started_ms = 1764460800000;
        const int64_t id = log.begin_response(r);
        log.update_response(id, "Hello", 1);
        r.output = "Hello there";
        r.output_tokens = 2;
        r.finish_reason = "cancelled";
        r.error = "cancelled by the user";
        r.finished_ms = r.started_ms + 500;
        log.finish_response(id, r);
        log.update_response(id, "late", 9);  // a finished row is not changed any more
        const auto rows = Raw(d + "/runlog.sqlite")
                              .rows(
                                  "SELECT id, finish_reason, output, output_tokens, error, "
                                  "finished_ms FROM responses");
        QCOMPARE(rows.size(), size_t(1));
        QCOMPARE(rows[0], (std::vector<std::string>{std::to_string(id), "cancelled", "Hello there",
                                                    "2", "cancelled by the user",
                                                    std::to_string(r.started_ms + 500)}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.finish_response(id + 100, r));
    }

    // A version 1 log (finish reasons without "interrupted") migrates to
    // version 2 with every row kept, and then takes interrupted rows.
    void version_1_log_migrates_keeping_rows() {
        const QString path = fresh_log();
        const auto before = snapshot(path);
        {
            // Back to version 1: the responses table as version 1 made it.
            Raw raw(path, true);
            raw.exec(
                "PRAGMA foreign_keys = OFF; BEGIN;"
                "CREATE TABLE r1 AS SELECT * FROM responses;");
            // Tables later versions added go too (model_loads: version 4,
            // run_events: version 6).
            raw.exec("DROP TABLE responses; DROP TABLE model_loads; DROP TABLE run_events;");
            const std::string v1 = migrations()[0].sql;
            const size_t a = v1.find("CREATE TABLE responses");
            const size_t b = v1.find(");", a) + 2;
            raw.exec(v1.substr(a, b - a).c_str());
            // Version 1's columns only (later versions added some).
            std::string cols;
            for (const auto& row : raw.rows("SELECT name FROM pragma_table_info('responses')"))
                cols += (cols.empty() ? "" : ", ") + row[0];
            raw.exec(("INSERT INTO responses (" + cols + ") SELECT " + cols +
                      " FROM r1; DROP TABLE r1; PRAGMA user_version = 1; COMMIT;")
                         .c_str());
        }
        QVERIFY(Raw(path).rows("SELECT sql FROM sqlite_schema WHERE name = 'responses'")[0][0].find(
                    "interrupted") == std::string::npos);
        RunLog log = RunLog::open(path.toStdString());
        QCOMPARE(Raw(path).rows("PRAGMA user_version")[0][0], std::to_string(schema_version()));
        QCOMPARE(snapshot(path), before);
        ResponseRecord r;
        r.run_id = 1;
        r.model_version_id = 1;
        r.environment_id = 1;
        r.started_ms = 1;
        QVERIFY(log.begin_response(r) > 0);
    }
};

QTEST_GUILESS_MAIN(TestRunLogIntegrity)
#include "test_runlog_integrity.moc"
