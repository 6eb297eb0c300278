// Run-log tests on real SQLite files in a QTemporaryDir. Expected values
// come from outside the code under test: sha256sum for file hashes,
// QCryptographicHash for redacted text, python3's csv and json modules for
// the exports, raw SQLite C API queries for what is stored, and hand-worked
// numbers (parameter counts from the tensor shapes in models/MANIFEST.md,
// epoch milliseconds of known dates).

#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/process.h"
#include "runlog/db_location.h"
#include "runlog/environment.h"
#include "runlog/exporter.h"
#include "runlog/model_facts.h"
#include "runlog/run_log.h"
#include "runlog/schema.h"
#include "runlog/sqlite_db.h"
#include "runlog/time_utc.h"
#include "runlog/utf8.h"

using namespace wb::runlog;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kStories = kData + "/models/stories260K.gguf";
const QString kTiny = kData + "/models/llama-2-tiny-random.gguf";

// Independent reader: raw SQLite C API, read-only.
struct RawDb {
    sqlite3* db = nullptr;
    explicit RawDb(const QString& path, bool write = false) {
        const int flags = write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
        if (sqlite3_open_v2(path.toUtf8().constData(), &db, flags, nullptr) != SQLITE_OK)
            qFatal("raw open failed: %s", sqlite3_errmsg(db));
    }
    ~RawDb() { sqlite3_close_v2(db); }
    // All rows of `sql` as text cells (NULL -> null QString).
    QList<QStringList> rows(const QString& sql) const {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.toUtf8().constData(), -1, &st, nullptr) != SQLITE_OK)
            qFatal("raw prepare failed: %s: %s", qPrintable(sql), sqlite3_errmsg(db));
        QList<QStringList> out;
        while (sqlite3_step(st) == SQLITE_ROW) {
            QStringList row;
            for (int i = 0; i < sqlite3_column_count(st); ++i) {
                const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
                row << (t ? QString::fromUtf8(t, sqlite3_column_bytes(st, i)) : QString());
            }
            out << row;
        }
        sqlite3_finalize(st);
        return out;
    }
    QString one(const QString& sql) const {
        const auto r = rows(sql);
        return r.isEmpty() ? QString() : r[0][0];
    }
    void exec(const QString& sql) const {
        char* err = nullptr;
        if (sqlite3_exec(db, sql.toUtf8().constData(), nullptr, nullptr, &err) != SQLITE_OK)
            qFatal("raw exec failed: %s", err);
    }
};

QString sha256sum(const QString& path) {
    const wbtest::ProcessResult r = wbtest::run_process("sha256sum", {path}, 60000);
    if (r.code != 0) qFatal("sha256sum failed");
    return QString::fromLatin1(r.out).section(' ', 0, 0);
}

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

ResponseRecord make_response(int64_t run, int64_t mv, int64_t env, int i) {
    ResponseRecord r;
    r.run_id = run;
    r.model_version_id = mv;
    r.environment_id = env;
    r.request_id = "p" + std::to_string(i);
    r.settings = {{"temperature", 0.8},  {"top_k", 40},           {"top_p", 0.95},
                  {"min_p", 0.05},       {"repeat_penalty", 1.0}, {"seed", 1000 + i},
                  {"n_ctx", 2048},       {"n_parallel", 4},       {"max_tokens", 32},
                  {"prompt_mode", "raw"}};
    r.prompt = "Once upon a time " + std::to_string(i);
    r.prompt_tokens = 5 + i;
    r.output = "there was a cat number " + std::to_string(i);
    r.output_tokens = 32;
    r.finish_reason = "length";
    r.queue_wait_ms = 0.5 * i;
    r.ttft_ms = 10.25 + i;
    r.tpot_ms = 1.125;
    r.e2e_ms = 50.0 + i;
    r.prefill_tps = 1234.5;
    r.decode_tps = 888.75;
    r.started_ms = 1764460800000 + int64_t{i} * 1000;  // 2025-11-30T00:00:00Z + i s
    r.finished_ms = r.started_ms + 50 + i;
    return r;
}

}  // namespace

class TestRunLog : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    int counter_ = 0;

    QString fresh_path() { return dir_.filePath(QString("log%1.sqlite").arg(counter_++)); }

    // The problem of a strict open of `path`; fails the test if it opens.
    OpenError open_error(const QString& path) {
        try {
            RunLog::open(path.toStdString());
        } catch (const OpenError& e) {
            return e;
        }
        QTest::qFail("open succeeded on a bad file", __FILE__, __LINE__);
        return OpenError(OpenProblem::CannotOpen, "");
    }

    // Python 3 reads `export_path` with its standard csv or json module and
    // prints the rows as ASCII-only JSON (a list of objects).
    QJsonArray python_rows(const QString& export_path, bool csv) {
        const char* csv_script =
            "import csv, json, sys\n"
            "with open(sys.argv[1], newline='', encoding='utf-8') as f:\n"
            "    rows = list(csv.DictReader(f))\n"
            "print(json.dumps(rows))\n";
        const char* jsonl_script =
            "import json, sys\n"
            "with open(sys.argv[1], encoding='utf-8') as f:\n"
            "    rows = [json.loads(line) for line in f]\n"
            "print(json.dumps(rows))\n";
        const wbtest::ProcessResult r = wbtest::run_process(
            "python3", {"-c", csv ? csv_script : jsonl_script, export_path}, 120000);
        if (r.code != 0) {
            qWarning() << r.err;
            QTest::qFail("python3 could not parse the export", __FILE__, __LINE__);
            return {};
        }
        QJsonParseError err{};
        const QJsonDocument doc = QJsonDocument::fromJson(r.out, &err);
        if (err.error != QJsonParseError::NoError) qFatal("bad python output");
        return doc.array();
    }

  private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void timeParsingHandWorked() {
        QCOMPARE(parse_utc_ms("1970-01-01"), int64_t{0});
        QCOMPARE(parse_utc_ms("2000-03-01T00:00:00Z"), int64_t{951868800000});
        QCOMPARE(parse_utc_ms("2000-03-01 00:00:01.5"), int64_t{951868801500});
        // 01:00 at +01:00 is midnight UTC.
        QCOMPARE(parse_utc_ms("2000-03-01T01:00:00+01:00"), int64_t{951868800000});
        QCOMPARE(parse_utc_ms("2000-02-29T23:30-00:30"), int64_t{951868800000});
        QCOMPARE(format_utc_ms(951868801042), std::string("2000-03-01T00:00:01.042Z"));
        QCOMPARE(format_utc_ms(-1), std::string("1969-12-31T23:59:59.999Z"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parse_utc_ms("2001-02-29"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parse_utc_ms("yesterday"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parse_utc_ms("2000-03-01T25:00"));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parse_utc_ms("2000-03-01T01:00:00Zjunk"));
    }

    // The default location is the folder Qt's AppDataLocation gives the app
    // (the GUI and the CLI must agree on one file).
    void defaultPathMatchesQStandardPaths() {
        const QByteArray old_xdg = qgetenv("XDG_DATA_HOME");
        const QString old_name = QCoreApplication::applicationName();
        QCoreApplication::setApplicationName("inference-workbench");
        for (const QByteArray& xdg : {QByteArray(), dir_.path().toUtf8()}) {
            if (xdg.isEmpty())
                qunsetenv("XDG_DATA_HOME");
            else
                qputenv("XDG_DATA_HOME", xdg);
            const QString want = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                                 "/runlog.sqlite";
            QCOMPARE(QString::fromStdString(default_db_path()), want);
        }
        // A relative XDG_DATA_HOME is ignored (XDG Base Directory spec; Qt
        // 6.4 would use it, so the GUI calls default_db_path() too).
        qputenv("XDG_DATA_HOME", "relative/dir");
        QCOMPARE(QString::fromStdString(default_db_path()),
                 QString::fromLocal8Bit(qgetenv("HOME")) +
                     "/.local/share/inference-workbench/runlog.sqlite");
        QCoreApplication::setApplicationName(old_name);
        if (old_xdg.isEmpty())
            qunsetenv("XDG_DATA_HOME");
        else
            qputenv("XDG_DATA_HOME", old_xdg);
    }

    void hostFactParsers() {
        QCOMPARE(
            os_pretty_name("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
            std::string("Debian GNU/Linux 12 (bookworm)"));
        QCOMPARE(os_pretty_name("PRETTY_NAME='My \"OS\"'\n"), std::string("My \"OS\""));
        QCOMPARE(os_pretty_name("PRETTY_NAME=\"A \\\"q\\\" B\"\n"), std::string("A \"q\" B"));
        QCOMPARE(os_pretty_name("ID=x\n"), std::string());
        QCOMPARE(cpu_model_name("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags: x\n"),
                 std::string("AMD EPYC 7B13"));
        const EnvironmentInfo e = collect_environment("cpu");
        QVERIFY(!e.os.empty() && !e.kernel.empty() && !e.cpu.empty());
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, collect_environment("cuda"));
    }

    void modelFactsFromGguf() {
        // Parameter counts worked out from the tensor shapes (MANIFEST.md):
        // stories260K: 5 layers x (2*64 norms + 64*64*2 (q,o) + 64*32*2 (k,v)
        // + 3*64*172 ffn) = 5 * 45440, + token_embd 64*512 + output 64*512
        // + output_norm 64 = 292800.
        const ModelFacts s = read_model_facts(kStories.toStdString());
        QCOMPARE(s.n_params, int64_t{292800});
        QCOMPARE(s.file_size, uint64_t{1185376});
        QCOMPARE(s.architecture.value_or(""), std::string("llama"));
        QCOMPARE(s.context_length.value_or(0), int64_t{2048});
        QCOMPARE(s.tokenizer_model.value_or(""), std::string("llama"));
        QCOMPARE(s.tensor_types.size(), size_t{1});
        QCOMPARE(s.tensor_types.at("f32"), int64_t{48});
        // llama-2-tiny-random: token_embd and output 8*32000 each, 4 attn
        // 8*8, 3 ffn 8*32, 3 norms 8: 512000 + 256 + 768 + 24 = 513048.
        const ModelFacts t = read_model_facts(kTiny.toStdString());
        QCOMPARE(t.n_params, int64_t{513048});
        QCOMPARE(t.name.value_or(""), std::string("LLaMA v2"));
        QCOMPARE(t.file_type.value_or(-1), int64_t{1});
        QCOMPARE(t.file_type_name.value_or(""), std::string("MOSTLY_F16"));
        QCOMPARE(t.context_length.value_or(0), int64_t{4096});
        QCOMPARE(t.tensor_types.at("f16"), int64_t{9});
        QCOMPARE(t.tensor_types.at("f32"), int64_t{3});
        QCOMPARE(file_type_name(15), std::string("MOSTLY_Q4_K_M"));
        QCOMPARE(file_type_name(1024 + 7), std::string("MOSTLY_Q8_0 (guessed)"));
        QCOMPARE(file_type_name(5), std::string("FTYPE_5"));
        // llama.h spells the two ends ALL_F32 and MOSTLY_MXFP4_MOE, and keeps
        // id 4 (MOSTLY_Q4_1_SOME_F16) as a comment old files still carry.
        QCOMPARE(file_type_name(0), std::string("ALL_F32"));
        QCOMPARE(file_type_name(4), std::string("MOSTLY_Q4_1_SOME_F16"));
        QCOMPARE(file_type_name(38), std::string("MOSTLY_MXFP4_MOE"));
        QCOMPARE(file_type_name(39), std::string("FTYPE_39"));
    }

    // Must show: 50 responses, each joined to the right model version (its
    // SHA-256 equals sha256sum of the file) and environment.
    void fiftyResponsesJoinedToModelAndEnvironment() {
        const QString path = fresh_path();
        RunLog log = RunLog::open(path.toStdString());
        const int64_t run = log.begin_run(RunKind::Batch, "fifty", {{"n_parallel", 4}});
        const int64_t mv[2] = {log.ensure_model_version(kStories.toStdString()),
                               log.ensure_model_version(kTiny.toStdString())};
        QVERIFY(mv[0] != mv[1]);
        const wb::model::DeviceFacts dev{
            "vulkan", "llvmpipe (LLVM 15.0.6, 256 bits)", "cpu", "llvmpipe", "0.0.1", "1.3.255"};
        const int64_t env[2] = {log.ensure_environment(collect_environment("cpu")),
                                log.ensure_environment(collect_environment(dev))};
        QVERIFY(env[0] != env[1]);
        // Same facts again: same rows.
        QCOMPARE(log.ensure_environment(collect_environment(dev)), env[1]);
        QCOMPARE(log.ensure_model_version(kTiny.toStdString()), mv[1]);
        for (int i = 0; i < 50; ++i)
            log.log_response(make_response(run, mv[i % 2], env[i % 3 == 0], i));
        log.end_run(run);

        const QString want_sha[2] = {sha256sum(kStories), sha256sum(kTiny)};
        RawDb raw(path);
        QCOMPARE(raw.one("PRAGMA foreign_keys"), QString("0"));  // per connection; ours sets it
        QCOMPARE(raw.one("PRAGMA journal_mode"), QString("wal"));
        const auto rows = raw.rows(
            "SELECT r.request_id, m.sha256, m.path, e.backend, e.vk_device_name, e.cpu, "
            "json_extract(r.settings, '$.seed'), u.kind, u.ended_ms IS NOT NULL "
            "FROM responses r JOIN model_versions m ON m.id = r.model_version_id "
            "JOIN environments e ON e.id = r.environment_id JOIN runs u ON u.id = r.run_id "
            "ORDER BY r.id");
        QCOMPARE(rows.size(), 50);
        const std::string cpu = collect_environment("cpu").cpu;
        for (int i = 0; i < 50; ++i) {
            const QStringList& r = rows[i];
            QCOMPARE(r[0], QString("p%1").arg(i));
            QCOMPARE(r[1], want_sha[i % 2]);
            QCOMPARE(QFileInfo(r[2]).canonicalFilePath(),
                     QFileInfo(i % 2 ? kTiny : kStories).canonicalFilePath());
            const bool vulkan = i % 3 == 0;
            QCOMPARE(r[3], QString(vulkan ? "vulkan" : "cpu"));
            QCOMPARE(r[4], QString(vulkan ? "llvmpipe (LLVM 15.0.6, 256 bits)" : ""));
            QCOMPARE(r[5], QString::fromStdString(cpu));
            QCOMPARE(r[6], QString::number(1000 + i));
            QCOMPARE(r[7], QString("batch"));
            QCOMPARE(r[8], QString("1"));
        }
        // Both model files hashed exactly once.
        QCOMPARE(log.sha256_computations(), int64_t{2});
        QCOMPARE(
            raw.one("SELECT tensor_types FROM model_versions WHERE id = " + QString::number(mv[1])),
            QString(R"({"f16":9,"f32":3})"));
    }

    void hashCachedByPathSizeMtime() {
        const QString model = dir_.filePath("copy.gguf");
        QVERIFY(QFile::copy(kStories, model));
        const QString path = fresh_path();
        int64_t id = 0;
        {
            RunLog log = RunLog::open(path.toStdString());
            id = log.ensure_model_version(model.toStdString());
            QCOMPARE(log.ensure_model_version(model.toStdString()), id);
            QCOMPARE(log.sha256_computations(), int64_t{1});
        }
        {
            // The cache lives in the database: a new process does not rehash.
            RunLog log = RunLog::open(path.toStdString());
            QCOMPARE(log.ensure_model_version(model.toStdString()), id);
            QCOMPARE(log.sha256_computations(), int64_t{0});
            // A new mtime rehashes; the same bytes are the same model version.
            struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
            QCOMPARE(utimensat(AT_FDCWD, model.toUtf8().constData(), times, 0), 0);
            QCOMPARE(log.ensure_model_version(model.toStdString()), id);
            QCOMPARE(log.sha256_computations(), int64_t{1});
            // Another copy: another path, hashed, same version.
            const QString copy2 = dir_.filePath("copy2.gguf");
            QVERIFY(QFile::copy(kStories, copy2));
            QCOMPARE(log.ensure_model_version(copy2.toStdString()), id);
            QCOMPARE(log.sha256_computations(), int64_t{2});
            // A different file is a different version.
            QVERIFY(log.ensure_model_version(kTiny.toStdString()) != id);
            // Not a GGUF: a clear error, nothing stored.
            const QString bogus = dir_.filePath("bogus.gguf");
            QFile f(bogus);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("definitely not gguf");
            f.close();
            QVERIFY_THROWS_EXCEPTION(std::runtime_error,
                                     log.ensure_model_version(bogus.toStdString()));
            QVERIFY_THROWS_EXCEPTION(
                std::runtime_error,
                log.ensure_model_version(dir_.filePath("missing.gguf").toStdString()));
        }
    }

    // Must show: kill -9 mid-run keeps every response reported finished.
    void crashSafetyUnderSigkill() {
        const QString path = fresh_path();
        QProcess p;
        p.start(WB_RUNLOG_WRITER, {"crash", path, kStories});
        QVERIFY(p.waitForStarted());
        QList<qint64> reported;
        QByteArray pending;
        auto drain = [&] {
            pending += p.readAllStandardOutput();
            int nl;
            while ((nl = pending.indexOf('\n')) >= 0) {
                const QByteArray line = pending.left(nl);
                pending.remove(0, nl + 1);
                if (line.startsWith("committed ")) reported << line.mid(10).toLongLong();
            }
        };
        while (reported.size() < 40) {
            if (!p.waitForReadyRead(30000)) break;
            drain();
        }
        QVERIFY2(reported.size() >= 40, p.readAllStandardError().constData());
        ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitStatus(), QProcess::CrashExit);
        drain();  // lines written before the kill
        RawDb raw(path);
        QCOMPARE(raw.one("PRAGMA integrity_check"), QString("ok"));
        QSet<qint64> stored;
        for (const QStringList& r : raw.rows("SELECT id FROM responses"))
            stored << r[0].toLongLong();
        for (qint64 id : reported) QVERIFY2(stored.contains(id), qPrintable(QString::number(id)));
        QVERIFY(stored.size() >= reported.size());
        // The killed run is still open (no end time), and the log reopens.
        QCOMPARE(raw.one("SELECT count(*) FROM runs WHERE ended_ms IS NULL"), QString("1"));
        RunLog again = RunLog::open(path.toStdString());
        QCOMPARE(RawDb(path).one("PRAGMA quick_check"), QString("ok"));
    }

    // Must show: CSV with commas, quotes, newlines and non-ASCII parses with
    // python3's csv module and round-trips; JSONL with python3's json.
    void exportRoundTripsThroughPython() {
        const QString path = fresh_path();
        RunLog log = RunLog::open(path.toStdString());
        const int64_t run =
            log.begin_run(RunKind::Chat, "naïve, \"quoted\"", nlohmann::json::object());
        const int64_t mv = log.ensure_model_version(kStories.toStdString());
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        const std::vector<std::string> texts = {
            "plain",
            "a, b, c",
            "she said \"hi\"",
            "line one\nline two\r\nline three\r",
            "naïve café — 日本語 😀",
            "  leading and trailing  ",
            "",
            "\"",
            ",\n\"",
            "tab\there\x01 control",
        };
        for (size_t i = 0; i < texts.size(); ++i) {
            ResponseRecord r = make_response(run, mv, env, int(i));
            r.prompt = texts[i];
            r.output = texts[texts.size() - 1 - i];
            r.settings["chat_template"] = texts[i];
            r.finish_reason = i % 2 ? "stop" : "error";
            r.error = i % 2 ? "" : "boom, \"bad\"\n" + texts[i];
            if (i == 3) r.ttft_ms.reset();  // NULL timing
            log.log_response(r);
        }
        for (bool csv : {true, false}) {
            const QString out = dir_.filePath(csv ? "export.csv" : "export.jsonl");
            {
                std::ofstream f(out.toStdString(), std::ios::binary);
                const int64_t n =
                    export_responses(log, {}, csv ? ExportFormat::Csv : ExportFormat::Jsonl, f);
                QCOMPARE(n, int64_t(texts.size()));
            }
            const QJsonArray rows = python_rows(out, csv);
            QCOMPARE(rows.size(), qsizetype(texts.size()));
            const QString want_sha = sha256sum(kStories);
            for (size_t i = 0; i < texts.size(); ++i) {
                const QJsonObject o = rows[qsizetype(i)].toObject();
                QCOMPARE(o.keys().size(), qsizetype(export_columns().size()));
                QCOMPARE(o["prompt"].toString(), QString::fromStdString(texts[i]));
                QCOMPARE(o["output"].toString(),
                         QString::fromStdString(texts[texts.size() - 1 - i]));
                QCOMPARE(o["run_name"].toString(), QString("naïve, \"quoted\""));
                QCOMPARE(o["model_sha256"].toString(), want_sha);
                QCOMPARE(o["started_utc"].toString(),
                         QString("2025-11-30T00:00:%1.000Z").arg(i, 2, 10, QChar('0')));
                QCOMPARE(o["error"].toString(),
                         i % 2 ? QString() : QString::fromStdString("boom, \"bad\"\n" + texts[i]));
                // Settings: JSON text in CSV, a nested object in JSONL.
                const QJsonObject settings =
                    csv ? QJsonDocument::fromJson(o["settings"].toString().toUtf8()).object()
                        : o["settings"].toObject();
                QCOMPARE(settings["chat_template"].toString(), QString::fromStdString(texts[i]));
                QCOMPARE(settings["seed"].toInt(), 1000 + int(i));
                auto num = [&](const char* k) {
                    return csv ? o[k].toString().toDouble() : o[k].toDouble();
                };
                QCOMPARE(num("e2e_ms"), 50.0 + double(i));
                QCOMPARE(num("tpot_ms"), 1.125);
                QCOMPARE(num("prompt_tokens"), 5.0 + double(i));
                if (i == 3)
                    QVERIFY(csv ? o["ttft_ms"].toString().isEmpty() : o["ttft_ms"].isNull());
                else
                    QCOMPARE(num("ttft_ms"), 10.25 + double(i));
            }
        }
        // CSV header is exactly the documented column list.
        QFile f(dir_.filePath("export.csv"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray header = f.readLine();
        std::string want;
        for (const std::string& c : export_columns()) want += (want.empty() ? "" : ",") + c;
        QCOMPARE(header, QByteArray::fromStdString(want + "\r\n"));
    }

    // Invalid UTF-8 in a stored text (e.g. a Latin-1 prompt file) still
    // gives exports that python3 reads as UTF-8, with U+FFFD in its place.
    void exportReplacesInvalidUtf8() {
        QVERIFY(is_valid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
        QVERIFY(!is_valid_utf8("caf\xE9"));           // Latin-1
        QVERIFY(!is_valid_utf8("\xC0\xAF"));          // overlong '/'
        QVERIFY(!is_valid_utf8("\xED\xA0\x80"));      // surrogate
        QVERIFY(!is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
        const QString path = fresh_path();
        RunLog log = RunLog::open(path.toStdString());
        const int64_t run = log.begin_run(RunKind::Batch, "latin1", nlohmann::json::object());
        const int64_t mv = log.ensure_model_version(kStories.toStdString());
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        ResponseRecord r = make_response(run, mv, env, 0);
        r.prompt = "caf\xE9, \"ok\"";
        r.output = "fine \xC3\xA9 then \xFF";
        log.log_response(r);
        for (bool csv : {true, false}) {
            const QString out = dir_.filePath(csv ? "latin1.csv" : "latin1.jsonl");
            {
                std::ofstream f(out.toStdString(), std::ios::binary);
                export_responses(log, {}, csv ? ExportFormat::Csv : ExportFormat::Jsonl, f);
            }
            const QJsonArray rows = python_rows(out, csv);
            QCOMPARE(rows.size(), 1);
            QCOMPARE(rows[0].toObject()["prompt"].toString(),
                     QString::fromUtf8("caf\uFFFD, \"ok\""));
            QCOMPARE(rows[0].toObject()["output"].toString(),
                     QString::fromUtf8("fine \u00E9 then \uFFFD"));
        }
    }

    void exportFilters() {
        const QString path = fresh_path();
        RunLog log = RunLog::open(path.toStdString());
        const int64_t run1 = log.begin_run(RunKind::Batch, "one", nlohmann::json::object());
        const int64_t run2 = log.begin_run(RunKind::Compare, "two", nlohmann::json::object());
        const int64_t mv_s = log.ensure_model_version(kStories.toStdString());
        const int64_t mv_t = log.ensure_model_version(kTiny.toStdString());
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        for (int i = 0; i < 20; ++i) {
            ResponseRecord r =
                make_response(i < 12 ? run1 : run2, i % 4 == 0 ? mv_t : mv_s, env, i);
            r.finish_reason = i % 5 == 0 ? "stop" : "length";
            log.log_response(r);
        }
        auto count = [&](const ExportFilter& f) {
            std::ostringstream s;
            return export_responses(log, f, ExportFormat::Jsonl, s);
        };
        auto with = [](auto set) {
            ExportFilter f;
            set(f);
            return f;
        };
        QCOMPARE(count({}), int64_t{20});
        QCOMPARE(count(with([&](ExportFilter& f) { f.run_id = run2; })), int64_t{8});
        QCOMPARE(count(with([](ExportFilter& f) { f.model = "LLaMA v2"; })), int64_t{5});
        const std::string sha = sha256sum(kTiny).toStdString();
        QCOMPARE(count(with([&](ExportFilter& f) { f.model = sha.substr(0, 8); })), int64_t{5});
        const std::string upper = QString::fromStdString(sha.substr(0, 10)).toUpper().toStdString();
        QCOMPARE(count(with([&](ExportFilter& f) { f.model = upper; })), int64_t{5});
        // A LIKE wildcard in the argument is escaped, not a match-all.
        QCOMPARE(count(with([](ExportFilter& f) { f.model = "%"; })), int64_t{0});
        // started_ms = 2025-11-30T00:00:00Z + i s; [5 s, 9 s) holds i = 5..8.
        QCOMPARE(count(with([](ExportFilter& f) {
                     f.since_ms = parse_utc_ms("2025-11-30T00:00:05Z");
                     f.until_ms = parse_utc_ms("2025-11-30T00:00:09Z");
                 })),
                 int64_t{4});
        QCOMPARE(count(with([](ExportFilter& f) { f.finish_reason = "stop"; })), int64_t{4});
        QCOMPARE(count(with([&](ExportFilter& f) {
                     f.run_id = run1;
                     f.finish_reason = "stop";
                 })),
                 int64_t{3});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 count(with([](ExportFilter& f) { f.finish_reason = "done"; })));
    }

    // The text filter (History's search box): substring of prompt OR
    // output, ASCII case-insensitive, every other character exact, LIKE
    // wildcards and the escape character literal, redacted rows never
    // matching. The expected request ids are worked out by hand from the
    // texts below and SQLite's documented LIKE rules
    // (https://sqlite.org/lang_expr.html#like: 'a' LIKE 'A' is true,
    // 'æ' LIKE 'Æ' is false).
    void exportTextFilter() {
        const QString path = fresh_path();
        RunLog log = RunLog::open(path.toStdString());
        const int64_t run = log.begin_run(RunKind::Batch, "search", nlohmann::json::object());
        const int64_t mv = log.ensure_model_version(kStories.toStdString());
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        struct Row {
            const char* prompt;
            const char* output;
        };
        const std::vector<Row> texts = {
            {"100% sure", "yes"},                          // p0
            {"100 percent", "sure"},                       // p1
            {"snake_case name", "ok"},                     // p2
            {"snakeXcase", "no underscore here"},          // p3
            {"back\\slash", "x"},                          // p4
            {"say \"hi\" and 'bye'", "quoted"},            // p5
            {"Café au lait", "日本語のテキスト"},          // p6
            {"CAFÉ NOIR", "ÉCLAIR"},                       // p7
            {"line one\nline two", "tail\r\nend"},         // p8
            {"100% secret snake_case", "\\ café 日本語"},  // p9, logged redacted
            {"Hello World", "HELLO again"},                // p10
        };
        for (size_t i = 0; i < texts.size(); ++i) {
            ResponseRecord r = make_response(run, mv, env, int(i));
            r.prompt = texts[i].prompt;
            r.output = texts[i].output;
            r.finish_reason = i == 1 ? "stop" : "length";
            log.set_redact_text(i == 9);
            log.log_response(r);
        }
        log.set_redact_text(false);

        // Request ids of the JSONL export for `text` (plus `finish`), read
        // back with QJsonDocument; also checks every line is valid JSON.
        auto ids = [&](std::optional<std::string> text,
                       std::optional<std::string> finish = std::nullopt) {
            ExportFilter f;
            f.text = std::move(text);
            f.finish_reason = std::move(finish);
            std::ostringstream s;
            const int64_t n = export_responses(log, f, ExportFormat::Jsonl, s);
            QStringList got;
            std::istringstream lines(s.str());
            for (std::string line; std::getline(lines, line);) {
                QJsonParseError err{};
                const QJsonDocument d =
                    QJsonDocument::fromJson(QByteArray::fromStdString(line), &err);
                if (err.error != QJsonParseError::NoError) return QStringList{"<bad json>"};
                got << d.object()["request_id"].toString();
            }
            if (n != got.size()) got << "<count mismatch>";
            return got;
        };
        const QStringList all = {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10"};
        QCOMPARE(ids(std::nullopt), all);
        QCOMPARE(ids(""), all);  // an empty search box is no filter
        // Wildcards and the escape character are literal.
        QCOMPARE(ids("%"), QStringList({"p0"}));
        QCOMPARE(ids("_"), QStringList({"p2"}));
        QCOMPARE(ids("snake_case"), QStringList({"p2"}));
        QCOMPARE(ids("0%"), QStringList({"p0"}));
        QCOMPARE(ids("\\"), QStringList({"p4"}));
        QCOMPARE(ids("k\\s"), QStringList({"p4"}));
        QCOMPARE(ids("\\%"), QStringList());
        // Prompt or output.
        QCOMPARE(ids("sure"), QStringList({"p0", "p1"}));
        QCOMPARE(ids("100"), QStringList({"p0", "p1"}));
        QCOMPARE(ids("100", "stop"), QStringList({"p1"}));
        // Quotes are ordinary characters; text is bound, never spliced.
        QCOMPARE(ids("\"hi\""), QStringList({"p5"}));
        QCOMPARE(ids("'bye'"), QStringList({"p5"}));
        QCOMPARE(ids("'); DROP TABLE responses; --"), QStringList());
        QCOMPARE(ids(std::nullopt).size(), all.size());
        {
            ExportFilter f;
            f.text = "'); DROP TABLE responses; --";
            const FilterSql q = filter_sql(f);
            QVERIFY(q.condition.find("DROP") == std::string::npos);
            QCOMPARE(q.binds.size(), size_t{2});
        }
        // ASCII letters fold case; other characters do not.
        QCOMPARE(ids("hello"), QStringList({"p10"}));
        QCOMPARE(ids("WORLD"), QStringList({"p10"}));
        QCOMPARE(ids("café"), QStringList({"p6"}));
        QCOMPARE(ids("CAFÉ"), QStringList({"p7"}));
        QCOMPARE(ids("cafÉ"), QStringList({"p7"}));
        QCOMPARE(ids("éclair"), QStringList());
        QCOMPARE(ids("日本語"), QStringList({"p6"}));
        // Newlines (LF and CRLF) inside the text and the search.
        QCOMPARE(ids("one\nline"), QStringList({"p8"}));
        QCOMPARE(ids("\r\nend"), QStringList({"p8"}));
        QCOMPARE(ids("one line"), QStringList());
        QCOMPARE(ids("line"), QStringList({"p8"}));

        // The same filter in CSV, parsed by python3: the matching row's
        // text comes out whole.
        {
            ExportFilter f;
            f.text = "one\nline";
            const QString out = dir_.filePath("search.csv");
            {
                std::ofstream file(out.toStdString(), std::ios::binary);
                QCOMPARE(export_responses(log, f, ExportFormat::Csv, file), int64_t{1});
            }
            const QJsonArray rows = python_rows(out, true);
            QCOMPARE(rows.size(), 1);
            QCOMPARE(rows[0].toObject()["prompt"].toString(), QString("line one\nline two"));
            QCOMPARE(rows[0].toObject()["output"].toString(), QString("tail\r\nend"));
        }

        // The read-only path (the History tab's export) gives the same rows
        // and reports progress ending at done == total.
        {
            ExportFilter f;
            f.text = "100";
            std::ostringstream s;
            std::vector<std::pair<int64_t, int64_t>> calls;
            const int64_t n = export_responses_readonly(
                path.toStdString(), f, ExportFormat::Jsonl, s,
                [&](int64_t done, int64_t total) { calls.emplace_back(done, total); });
            QCOMPARE(n, int64_t{2});
            QVERIFY(!calls.empty());
            QCOMPARE(calls.back(), (std::pair<int64_t, int64_t>{2, 2}));
        }
    }

    // export_responses_readonly never creates or touches a file that is not
    // a run log, and says why.
    void readonlyExportRejectsBadFiles() {
        std::ostringstream s;
        const std::string missing = dir_.filePath("missing.sqlite").toStdString();
        try {
            export_responses_readonly(missing, {}, ExportFormat::Csv, s);
            QFAIL("no error for a missing file");
        } catch (const OpenError& e) {
            QCOMPARE(e.problem(), OpenProblem::CannotOpen);
        }
        QVERIFY(!QFile::exists(QString::fromStdString(missing)));
        // Another program's SQLite file (application_id 0).
        const QString foreign = dir_.filePath("foreign.sqlite");
        sqlite3* db = nullptr;
        QCOMPARE(sqlite3_open_v2(foreign.toUtf8().constData(), &db,
                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr),
                 SQLITE_OK);
        QCOMPARE(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", nullptr, nullptr,
                              nullptr),
                 SQLITE_OK);
        sqlite3_close_v2(db);
        const QByteArray before = file_bytes(foreign);
        try {
            export_responses_readonly(foreign.toStdString(), {}, ExportFormat::Csv, s);
            QFAIL("no error for a foreign SQLite file");
        } catch (const OpenError& e) {
            QCOMPARE(e.problem(), OpenProblem::Foreign);
            QVERIFY(std::string(e.what()).find(foreign.toStdString()) != std::string::npos);
        }
        QCOMPARE(file_bytes(foreign), before);
    }

    void redactionStoresHashAndLengthOnly() {
        const QString path = fresh_path();
        RunLog log = RunLog::open(path.toStdString());
        QVERIFY(!log.redact_text());
        log.set_redact_text(true);
        const int64_t run = log.begin_run(RunKind::Chat, "secret", nlohmann::json::object());
        const int64_t mv = log.ensure_model_version(kStories.toStdString());
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        ResponseRecord r = make_response(run, mv, env, 1);
        r.prompt = "my password is hunter2 — ça va";
        r.output = "I will not repeat it";
        log.log_response(r);
        RunLog reopened = RunLog::open(path.toStdString());
        QVERIFY(reopened.redact_text());  // stored in the database
        RawDb raw(path);
        const auto row = raw.rows(
            "SELECT prompt IS NULL, output IS NULL, prompt_sha256, prompt_bytes, output_sha256, "
            "output_bytes, redacted FROM responses")[0];
        QCOMPARE(row[0], QString("1"));
        QCOMPARE(row[1], QString("1"));
        const QByteArray p = QByteArray::fromStdString(r.prompt);
        QCOMPARE(row[2], QString::fromLatin1(
                             QCryptographicHash::hash(p, QCryptographicHash::Sha256).toHex()));
        QCOMPARE(row[3], QString::number(p.size()));
        QCOMPARE(row[4],
                 QString::fromLatin1(QCryptographicHash::hash(QByteArray::fromStdString(r.output),
                                                              QCryptographicHash::Sha256)
                                         .toHex()));
        QCOMPARE(row[5], QString::number(r.output.size()));
        QCOMPARE(row[6], QString("1"));
        // Nothing of the text is anywhere in the file.
        reopened.set_redact_text(false);
        QVERIFY(!file_bytes(path).contains("hunter2"));
        QVERIFY(!file_bytes(path + "-wal").contains("hunter2"));
    }

    void retentionPrunesOldResponses() {
        const QString path = fresh_path();
        const int64_t now = now_utc_ms();
        const int64_t day = 86400000;
        {
            RunLog log = RunLog::open(path.toStdString());
            const int64_t old_run = log.begin_run(RunKind::Batch, "old", nlohmann::json::object());
            const int64_t mv = log.ensure_model_version(kStories.toStdString());
            const int64_t env = log.ensure_environment(collect_environment("cpu"));
            for (int i = 0; i < 6; ++i) {
                ResponseRecord r = make_response(old_run, mv, env, i);
                r.started_ms = now - (i + 1) * 2 * day;  // 2, 4, 6, 8, 10, 12 days ago
                log.log_response(r);
            }
            log.end_run(old_run);
            // Older than 7 days: 8, 10, 12 days ago.
            QCOMPARE(log.prune_older_than_days(7, now), int64_t{3});
            QCOMPARE(log.prune_older_than_days(7, now), int64_t{0});
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.set_retention_days(0));
            log.set_retention_days(3);
            QCOMPARE(log.retention_days().value_or(0), 3);
        }
        // Reopening applies the stored retention: only "2 days ago" remains.
        RunLog log = RunLog::open(path.toStdString());
        QCOMPARE(RawDb(path).one("SELECT count(*) FROM responses"), QString("1"));
        QCOMPARE(log.prune_older_than_days(0, now + day), int64_t{1});
        // The ended run without responses is gone too.
        QCOMPARE(RawDb(path).one("SELECT count(*) FROM runs"), QString("0"));
    }

    void badRecordsAreRejected() {
        RunLog log = RunLog::open(fresh_path().toStdString());
        const int64_t run = log.begin_run(RunKind::Generate, "g", nlohmann::json::object());
        const int64_t mv = log.ensure_model_version(kStories.toStdString());
        const int64_t env = log.ensure_environment(collect_environment("cpu"));
        ResponseRecord r = make_response(run, mv, env, 0);
        r.finish_reason = "done";
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.log_response(r));
        r = make_response(run, mv, env, 0);
        r.settings = nlohmann::json::array();
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.log_response(r));
        r = make_response(run + 100, mv, env, 0);  // foreign key
        try {
            log.log_response(r);
            QFAIL("unknown run accepted");
        } catch (const DbError& e) {
            QVERIFY2(QString(e.what()).contains("FOREIGN KEY"), e.what());
        }
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.end_run(run + 100));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, log.begin_run(RunKind::Chat, "x", 3));
        // A good record still goes in after the failures.
        QVERIFY(log.log_response(make_response(run, mv, env, 1)) > 0);
    }

    void emptyFileMigratesToCurrentSchema() {
        const QString path = fresh_path();
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();  // 0 bytes: a SQLite database at user_version 0
        { RunLog log = RunLog::open(path.toStdString()); }
        RawDb raw(path);
        QCOMPARE(raw.one("PRAGMA user_version"), QString::number(schema_version()));
        QCOMPARE(raw.one("PRAGMA application_id"), QString::number(kApplicationId));
        // model_versions, file_hash_cache, environments, runs, responses,
        // settings, model_loads (4), run_events (6).
        QCOMPARE(raw.one("SELECT count(*) FROM sqlite_schema WHERE type = 'table'"), QString("8"));
    }

    // Schema 3 (the KV pool): a version-1 log keeps its rows and indexes,
    // and then takes finish reason "context" and the prefix-cache columns,
    // which versions 1 and 2 refused.
    void version1LogTakesContextAndCacheColumns() {
        const QString path = fresh_path();
        const char* seed = R"sql(
INSERT INTO model_versions (id, sha256, path, file_size, tensor_types, n_params, first_seen_ms)
    VALUES (1, printf('%064d', 0), 'm.gguf', 1, '{}', 1, 0);
INSERT INTO environments (id, app_version, git_commit, os, kernel, cpu, backend, first_seen_ms)
    VALUES (1, 'a', 'b', 'c', 'd', 'e', 'cpu', 0);
INSERT INTO runs (id, kind, name, started_ms, settings) VALUES (1, 'batch', 'r', 0, '{}');
INSERT INTO responses (run_id, model_version_id, environment_id, settings, redacted, prompt,
    prompt_sha256, prompt_bytes, output, output_sha256, output_bytes, finish_reason, started_ms)
    VALUES (1, 1, 1, '{}', 0, 'p', 'x', 1, 'o', 'y', 1, 'length', 5);)sql";
        {
            Db db(path.toStdString(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
            migrate(db, migrations().subspan(0, 1));
            db.exec(seed, "seed a version-1 log");
            QVERIFY_THROWS_EXCEPTION(
                DbError, db.exec("UPDATE responses SET finish_reason = 'context'", "v1 check"));
        }
        RunLog log = RunLog::open(path.toStdString());
        ResponseRecord r = make_response(1, 1, 1, 7);
        r.finish_reason = "context";
        r.prompt_cached_tokens = 192;
        r.preemptions = 2;
        log.log_response(r);
        RawDb raw(path);
        QCOMPARE(raw.one("PRAGMA user_version"), QString::number(schema_version()));
        QCOMPARE(raw.one("SELECT finish_reason || ',' || started_ms || ',' || "
                         "coalesce(prompt_cached_tokens, 'null') FROM responses WHERE id = 1"),
                 QString("length,5,null"));
        QCOMPARE(raw.one("SELECT prompt_cached_tokens || ',' || preemptions FROM responses "
                         "WHERE finish_reason = 'context'"),
                 QString("192,2"));
        QCOMPARE(raw.one("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND "
                         "tbl_name = 'responses' AND name LIKE 'responses_%'"),
                 QString("3"));
    }

    // The mechanism future versions use: steps after the current one keep
    // every row; a failing step rolls back to the previous version.
    void migrationStepsKeepRows() {
        const QString path = fresh_path();
        {
            RunLog log = RunLog::open(path.toStdString());
            const int64_t run = log.begin_run(RunKind::Batch, "m", nlohmann::json::object());
            const int64_t mv = log.ensure_model_version(kStories.toStdString());
            const int64_t env = log.ensure_environment(collect_environment("cpu"));
            for (int i = 0; i < 7; ++i) log.log_response(make_response(run, mv, env, i));
        }
        std::vector<Migration> steps(migrations().begin(), migrations().end());
        const int v = schema_version();
        steps.push_back({v,
                         "ALTER TABLE responses ADD COLUMN note TEXT DEFAULT 'n';"
                         "CREATE TABLE extra (x INTEGER);"});
        {
            Db db(path.toStdString(), SQLITE_OPEN_READWRITE);
            migrate(db, steps);
            migrate(db, steps);  // idempotent
        }
        {
            RawDb raw(path);
            QCOMPARE(raw.one("PRAGMA user_version"), QString::number(v + 1));
            QCOMPARE(raw.one("SELECT count(*) FROM responses WHERE note = 'n'"), QString("7"));
        }
        steps.push_back({v + 1, "CREATE TABLE y (a); INSERT INTO no_such_table VALUES (1);"});
        {
            Db db(path.toStdString(), SQLITE_OPEN_READWRITE);
            try {
                migrate(db, steps);
                QFAIL("bad step applied");
            } catch (const DbError& e) {
                QVERIFY2(QString(e.what()).contains(
                             QString("migrate schema %1 -> %2").arg(v + 1).arg(v + 2)),
                         e.what());
            }
        }
        RawDb raw(path);
        QCOMPARE(raw.one("PRAGMA user_version"), QString::number(v + 1));
        QCOMPARE(raw.one("SELECT count(*) FROM sqlite_schema WHERE name = 'y'"), QString("0"));
        QCOMPARE(raw.one("SELECT count(*) FROM responses"), QString("7"));
        // And this build now refuses the (for it) newer file, untouched.
        const QByteArray before = file_bytes(path);
        const OpenError e = open_error(path);
        QCOMPARE(e.problem(), OpenProblem::NewerSchema);
        QCOMPARE(file_bytes(path), before);
    }

    void newerSchemaIsRejectedUntouched() {
        const QString path = fresh_path();
        { RunLog log = RunLog::open(path.toStdString()); }
        {
            RawDb raw(path, true);
            raw.exec("PRAGMA user_version = 99; PRAGMA journal_mode = DELETE;");
        }
        const QByteArray before = file_bytes(path);
        const OpenError e = open_error(path);
        QCOMPARE(e.problem(), OpenProblem::NewerSchema);
        QVERIFY2(QString(e.what()).contains("schema version 99 is newer than this build supports"),
                 e.what());
        QVERIFY(QString(e.what()).contains(path));
        QCOMPARE(file_bytes(path), before);
        QVERIFY(!QFile::exists(path + "-wal"));
    }

    void badFilesGiveClearMessages() {
        // Not SQLite at all.
        const QString text = fresh_path();
        {
            QFile f(text);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("id,prompt\n1,hello\n").repeated(300));
        }
        const QByteArray text_bytes = file_bytes(text);
        OpenError e = open_error(text);
        QCOMPARE(e.problem(), OpenProblem::NotSqlite);
        QVERIFY2(QString(e.what()).contains(text + ": not a SQLite database"), e.what());
        QCOMPARE(file_bytes(text), text_bytes);

        // Corrupt: a real run log whose schema page is overwritten after
        // the 100-byte header.
        const QString corrupt = fresh_path();
        {
            RunLog log = RunLog::open(corrupt.toStdString());
            log.begin_run(RunKind::Batch, "x", nlohmann::json::object());
        }
        {
            RawDb raw(corrupt, true);
            raw.exec("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;");
        }
        {
            QFile f(corrupt);
            QVERIFY(f.open(QIODevice::ReadWrite));
            f.seek(100);
            f.write(QByteArray(3000, '\xA5'));
        }
        const QByteArray corrupt_bytes = file_bytes(corrupt);
        e = open_error(corrupt);
        QCOMPARE(e.problem(), OpenProblem::Corrupt);
        QVERIFY2(QString(e.what()).contains("damaged"), e.what());
        QCOMPARE(file_bytes(corrupt), corrupt_bytes);

        // Another application's SQLite file.
        const QString foreign = fresh_path();
        {
            sqlite3* db = nullptr;
            QCOMPARE(sqlite3_open(foreign.toUtf8().constData(), &db), SQLITE_OK);
            QCOMPARE(
                sqlite3_exec(db, "CREATE TABLE contacts (name TEXT)", nullptr, nullptr, nullptr),
                SQLITE_OK);
            sqlite3_close(db);
        }
        const QByteArray foreign_bytes = file_bytes(foreign);
        e = open_error(foreign);
        QCOMPARE(e.problem(), OpenProblem::Foreign);
        QVERIFY2(QString(e.what()).contains("not an Inference Workbench run log"), e.what());
        QCOMPARE(file_bytes(foreign), foreign_bytes);

        // A folder.
        e = open_error(dir_.path());
        QCOMPARE(e.problem(), OpenProblem::CannotOpen);
    }

    void readOnlyFileIsRejected() {
        // A separate folder that the unprivileged helper can enter (the
        // helper drops root, since root ignores file permissions).
        QTemporaryDir ro;
        QVERIFY(ro.isValid());
        QVERIFY(QFile::setPermissions(
            ro.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadOther |
                           QFile::ExeOther | QFile::ReadGroup | QFile::ExeGroup));
        const QString path = ro.filePath("ro.sqlite");
        { RunLog log = RunLog::open(path.toStdString()); }
        {
            RawDb raw(path, true);
            raw.exec("PRAGMA journal_mode = DELETE;");
        }
        QVERIFY(
            QFile::setPermissions(path, QFile::ReadOwner | QFile::ReadOther | QFile::ReadGroup));
        const QByteArray before = file_bytes(path);
        QProcess p;
        p.start(WB_RUNLOG_WRITER, {"open", path});
        QVERIFY(p.waitForFinished(30000));
        const QString out = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(out.startsWith("error ReadOnly: " + path + ": the run log is read-only"),
                 qPrintable(out));
        QCOMPARE(file_bytes(path), before);
    }

    // The log holds prompts and outputs: with the common umask 022 a new
    // log was 0644 (and so its -wal and -shm) in a 0755 folder, readable by
    // every user. Now the file, -wal and -shm are 0600 and each folder made
    // 0700, each made folder a note; an existing wider folder is left as it
    // is, with a warning naming it and its mode.
    void newLogIsPrivateWhateverTheUmask() {
        struct UmaskGuard {  // restored however the test ends
            mode_t old;
            ~UmaskGuard() { ::umask(old); }
        } guard{::umask(022)};
        auto mode_of = [](const QString& p) -> unsigned {
            struct stat st {};
            if (::stat(p.toUtf8().constData(), &st) != 0) return 0xFFFF;
            return static_cast<unsigned>(st.st_mode & 07777);
        };
        const QString top = dir_.filePath("private/data");  // two levels missing
        const QString path = top + "/runlog.sqlite";
        {
            RunLog log = RunLog::open(path.toStdString());
            log.begin_run(RunKind::Batch, "x", nlohmann::json::object());
            // Open and written: SQLite's -wal and -shm exist now.
            QCOMPARE(mode_of(path), 0600u);
            QCOMPARE(mode_of(path + "-wal"), 0600u);
            QCOMPARE(mode_of(path + "-shm"), 0600u);
            QCOMPARE(mode_of(dir_.filePath("private")), 0700u);
            QCOMPARE(mode_of(top), 0700u);
            QCOMPARE(log.open_notices().size(), size_t{1});
            QVERIFY(!log.open_notices()[0].warning);
            QVERIFY2(QString::fromStdString(log.open_notices()[0].text)
                         .contains("created the run log's folder " + top + " (mode 0700"),
                     log.open_notices()[0].text.c_str());
        }
        {
            RunLog again = RunLog::open(path.toStdString());  // nothing to say now
            QVERIFY(again.open_notices().empty());
        }

        const QString wide = dir_.filePath("wide");
        QVERIFY(::mkdir(wide.toUtf8().constData(), 0755) == 0);
        const QString wide_log = wide + "/runlog.sqlite";
        {
            RunLog log = RunLog::open(wide_log.toStdString());
            log.begin_run(RunKind::Batch, "x", nlohmann::json::object());
            QCOMPARE(mode_of(wide), 0755u);  // left as it is
            QCOMPARE(mode_of(wide_log), 0600u);
            QCOMPARE(mode_of(wide_log + "-wal"), 0600u);
            QCOMPARE(mode_of(wide_log + "-shm"), 0600u);
            QCOMPARE(log.open_notices().size(), size_t{1});
            QVERIFY(log.open_notices()[0].warning);
            QVERIFY2(QString::fromStdString(log.open_notices()[0].text)
                         .contains(wide + ": the run log's folder is open to other users (mode "
                                          "0755)"),
                     log.open_notices()[0].text.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestRunLog)
#include "test_runlog.moc"
