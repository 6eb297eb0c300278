// The History tab on a real run-log file (written with runlog::RunLog, no
// engine): the table's filters and search select the rows worked out by
// hand from the texts below, and Export goes through the run log's exporter
// (the file is byte-identical to runlog::export_responses for the same
// filter) and writes exactly the rows the table shows.

#include <QComboBox>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSet>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <sstream>

#include "common/data_dir.h"
#include "runlog/environment.h"
#include "runlog/exporter.h"
#include "runlog/run_log.h"
#include "ui/history_view.h"

using namespace wb;

namespace {

const QString kData = QString::fromStdString(wbtest::data_dir());

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

// request_id of every line of a JSONL export, in file order.
QStringList jsonl_ids(const QByteArray& text) {
    QStringList ids;
    for (const QByteArray& line : text.split('\n')) {
        if (line.isEmpty()) continue;
        QJsonParseError err{};
        const QJsonDocument d = QJsonDocument::fromJson(line, &err);
        if (err.error != QJsonParseError::NoError) return {"<bad json>"};
        ids << d.object()["request_id"].toString();
    }
    return ids;
}

}  // namespace

class UiHistory : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void searchSelectsHandWorkedRows();
    void exportGoesThroughRunLogExporter();
    void modelAndRunFilters();
    void modelsNamedByFileQuantizationAndHash();
    void exportErrorsAreReported();
    void interruptedResponsesHaveTheirFilter();
    void damagedLogIsSaidAboveTheTable();
    void rowsByIdWithinASecondHumanHeadersFixedDecimals();
    void runEventsOfThePickedRun();

  private:
    // Exports the view's current filter as JSONL and returns the ids.
    QStringList exported_ids(const ui::HistoryView& v);

    QTemporaryDir dir_;
    QString db_;
    int64_t run_batch_ = 0;
};

void UiHistory::initTestCase() {
    QVERIFY(dir_.isValid());
    db_ = dir_.filePath("runlog.sqlite");
    runlog::RunLog log = runlog::RunLog::open(db_.toStdString());
    run_batch_ = log.begin_run(runlog::RunKind::Batch, "batch", nlohmann::json::object());
    const int64_t run_chat = log.begin_run(runlog::RunKind::Chat, "chat", nlohmann::json::object());
    const int64_t mv_s =
        log.ensure_model_version((kData + "/models/stories260K.gguf").toStdString());
    const int64_t mv_t =
        log.ensure_model_version((kData + "/models/llama-2-tiny-random.gguf").toStdString());
    const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
    struct Row {
        const char* prompt;
        const char* output;
    };
    const std::vector<Row> rows = {
        {"100% sure", "yes"},                // p0
        {"100 percent", "sure"},             // p1
        {"snake_case name", "ok"},           // p2
        {"snakeXcase", "plain"},             // p3
        {"back\\slash", "x"},                // p4
        {"say \"hi\"", "a, b"},              // p5
        {"Café au lait", "日本語"},          // p6
        {"CAFÉ NOIR", "ÉCLAIR"},             // p7
        {"line one\nline two", "tail"},      // p8
        {"100% secret snake_case", "café"},  // p9, redacted
    };
    for (size_t i = 0; i < rows.size(); ++i) {
        runlog::ResponseRecord r;
        r.run_id = i < 6 ? run_batch_ : run_chat;       // p0..p5 batch, p6..p9 chat
        r.model_version_id = i % 3 == 0 ? mv_t : mv_s;  // tiny: p0, p3, p6, p9
        r.environment_id = env;
        r.request_id = "p" + std::to_string(i);
        r.prompt = rows[i].prompt;
        r.output = rows[i].output;
        r.finish_reason = i == 1 || i == 2 ? "stop" : "length";
        r.started_ms = 1764460800000 + int64_t(i) * 1000;  // 2025-11-30T00:00:0iZ
        log.set_redact_text(i == 9);
        log.log_response(r);
    }
}

QStringList UiHistory::exported_ids(const ui::HistoryView& v) {
    const QString out = dir_.filePath("ids.jsonl");
    QString err;
    const qint64 n = v.exportTo(out, "jsonl", &err);
    if (n < 0) return {"<export failed: " + err + ">"};
    QStringList ids = jsonl_ids(file_bytes(out));
    if (n != ids.size()) ids << "<count mismatch>";
    return ids;
}

void UiHistory::searchSelectsHandWorkedRows() {
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db_));
    QCOMPARE(v.rowCount(), 10);
    struct Case {
        const char* search;
        QStringList want;  // oldest first, as the export writes them
    };
    const std::vector<Case> cases = {
        {"%", {"p0"}},           // literal, not match-all
        {"_", {"p2"}},           // literal, not any-one-character
        {"snake_case", {"p2"}},  // not p3's snakeXcase; p9 is redacted
        {"\\", {"p4"}},          // the escape character itself
        {"\"hi\"", {"p5"}},      // quotes
        {", b", {"p5"}},         // a CSV separator in the output
        {"sure", {"p0", "p1"}},  // prompt or output
        {"café", {"p6"}},        // ASCII folds (C/c), é does not match É
        {"CAFÉ", {"p7"}},        //
        {"éclair", {}},          // É vs é: no match
        {"日本語", {"p6"}},      // non-ASCII in the output
        {"one\nline", {"p8"}},   // across a newline
        {"LINE ONE", {"p8"}},    // ASCII case
        {"", {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}},
    };
    for (const Case& c : cases) {
        v.setSearchText(QString::fromUtf8(c.search));
        QCOMPARE(v.rowCount(), int(c.want.size()));
        QCOMPARE(exported_ids(v), c.want);
    }
    // With the finish reason filter too.
    v.setSearchText("100");
    QCOMPARE(exported_ids(v), QStringList({"p0", "p1"}));
    v.setFinishReason("stop");
    QCOMPARE(v.rowCount(), 1);
    QCOMPARE(exported_ids(v), QStringList({"p1"}));
}

void UiHistory::exportGoesThroughRunLogExporter() {
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db_));
    v.setSearchText("snake_case");
    const runlog::ExportFilter f = v.filter();
    QCOMPARE(f.text.value_or(""), std::string("snake_case"));
    runlog::RunLog log = runlog::RunLog::open(db_.toStdString());
    for (const char* fmt : {"csv", "jsonl"}) {
        const QString out = dir_.filePath(QString("history.") + fmt);
        std::vector<std::pair<int64_t, int64_t>> calls;
        QString err;
        QCOMPARE(v.exportTo(out, fmt, &err,
                            [&](int64_t done, int64_t total) { calls.emplace_back(done, total); }),
                 qint64(1));
        QVERIFY(!calls.empty());
        QCOMPARE(calls.back(), (std::pair<int64_t, int64_t>{1, 1}));
        std::ostringstream want;
        runlog::export_responses(
            log, f, fmt[0] == 'c' ? runlog::ExportFormat::Csv : runlog::ExportFormat::Jsonl, want);
        QCOMPARE(file_bytes(out), QByteArray::fromStdString(want.str()));
    }
    // The CSV header is the exporter's column list.
    const QByteArray csv = file_bytes(dir_.filePath("history.csv"));
    QVERIFY(csv.startsWith("response_id,run_id,run_kind,run_name,request_id,started_utc,"));
}

void UiHistory::modelAndRunFilters() {
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db_));
    QComboBox* model = nullptr;
    QComboBox* run = nullptr;
    for (QComboBox* c : v.findChildren<QComboBox*>()) {
        if (c->toolTip().contains("model")) model = c;
        if (c->toolTip().contains("run")) run = c;
    }
    QVERIFY(model && run);
    const int tiny = model->findText("llama-2-tiny-random.gguf", Qt::MatchStartsWith);
    QVERIFY2(tiny > 0, qPrintable(model->itemText(1)));
    model->setCurrentIndex(tiny);
    QCOMPARE(v.rowCount(), 4);
    QCOMPARE(exported_ids(v), QStringList({"p0", "p3", "p6", "p9"}));
    run->setCurrentIndex(run->findData(QVariant::fromValue(qlonglong(run_batch_))));
    QVERIFY(run->currentIndex() > 0);
    QCOMPARE(v.rowCount(), 2);
    QCOMPARE(exported_ids(v), QStringList({"p0", "p3"}));
    v.setSearchText("SURE");
    QCOMPARE(v.rowCount(), 1);
    QCOMPARE(exported_ids(v), QStringList({"p0"}));
}

// Models are named by file name, quantization and the SHA-256's first 8 hex
// digits in the table, the model filter and exports; the F32 file without
// general.file_type is labelled F32. Expected from tests/data/models
// (MANIFEST.md: stories260K F32 x48, no file type; llama-2-tiny-random
// file_type 1, MOSTLY_F16; SHA256SUMS).
void UiHistory::modelsNamedByFileQuantizationAndHash() {
    const QString stories = QString::fromUtf8("stories260K.gguf · F32 · 270cba1b");
    const QString tiny = QString::fromUtf8("llama-2-tiny-random.gguf · F16 · 81f226c6");
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db_));
    QComboBox* model = nullptr;
    for (QComboBox* c : v.findChildren<QComboBox*>())
        if (c->toolTip().contains("model")) model = c;
    QVERIFY(model);
    QStringList items;
    for (int i = 1; i < model->count(); ++i) items << model->itemText(i);
    QCOMPARE(items, QStringList({stories, tiny}));
    QVERIFY(model->itemData(2, Qt::ToolTipRole).toString().contains("LLaMA v2"));

    auto* table = v.findChild<QTableView*>();
    QVERIFY(table);
    const QAbstractItemModel* m = table->model();
    int col = -1;
    for (int c = 0; c < m->columnCount(); ++c)
        if (m->headerData(c, Qt::Horizontal).toString() == "Model") col = c;
    QVERIFY(col >= 0);
    QSet<QString> shown;
    for (int r = 0; r < m->rowCount(); ++r) shown << m->index(r, col).data().toString();
    QCOMPARE(shown, QSet<QString>({stories, tiny}));

    const QString out = dir_.filePath("labels.jsonl");
    QString err;
    QCOMPARE(v.exportTo(out, "jsonl", &err), qint64(10));
    QSet<QString> exported;
    for (const QByteArray& line : file_bytes(out).split('\n'))
        if (!line.isEmpty())
            exported << QJsonDocument::fromJson(line).object()["model_label"].toString();
    QCOMPARE(exported, QSet<QString>({stories, tiny}));
}

void UiHistory::exportErrorsAreReported() {
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db_));
    QString err;
    QCOMPARE(v.exportTo(dir_.filePath("no/such/folder/x.csv"), "csv", &err), qint64(-1));
    QVERIFY2(err.contains("no/such/folder/x.csv"), qPrintable(err));
    // A SQLite file that is not a run log: the exporter's message, and no
    // partial output left behind.
    const QString other = dir_.filePath("other.sqlite");
    {
        std::ofstream f(other.toStdString(), std::ios::binary);
        f << "not a database at all, just text that is long enough to be a header.....";
    }
    const QString out = dir_.filePath("bad.csv");
    err.clear();
    QCOMPARE(ui::HistoryView::exportFile(other, {}, out, "csv", &err), qint64(-1));
    QVERIFY2(err.contains(other), qPrintable(err));
    QVERIFY(!QFile::exists(out));
    // A full disk (/dev/full): a sentence with the file and the cause (it
    // used to say only "writing ... failed"), and the device is left alone
    // (as root, the failed export used to delete /dev/full).
    err.clear();
    QCOMPARE(v.exportTo("/dev/full", "csv", &err), qint64(-1));
    // The same sentence as `workbench-cli export -o /dev/full` (one writer).
    QVERIFY2(err.startsWith("/dev/full: cannot write the export: No space left on device"),
             qPrintable(err));
    QVERIFY2(!err.contains("removed"), qPrintable(err));
    QVERIFY(QFileInfo::exists("/dev/full") && !QFileInfo("/dev/full").isFile());
}

// A response whose program was killed mid-stream has finish "interrupted"
// (run-log schema v2): the finish filter offers it and selects exactly it.
void UiHistory::interruptedResponsesHaveTheirFilter() {
    const QString db = dir_.filePath("interrupted.sqlite");
    {
        runlog::RunLog log = runlog::RunLog::open(db.toStdString());
        const int64_t run = log.begin_run(runlog::RunKind::Batch, "b", nlohmann::json::object());
        const int64_t mv =
            log.ensure_model_version((kData + "/models/stories260K.gguf").toStdString());
        const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
        const char* reasons[] = {"length", "interrupted", "stop", "interrupted"};
        for (int i = 0; i < 4; ++i) {
            runlog::ResponseRecord r;
            r.run_id = run;
            r.model_version_id = mv;
            r.environment_id = env;
            r.request_id = "i" + std::to_string(i);
            r.prompt = "p";
            r.output = "o";
            r.finish_reason = reasons[i];
            r.started_ms = 1764460800000 + i * 1000;
            log.log_response(r);
        }
    }
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db));
    const QComboBox* reason = nullptr;
    for (const QComboBox* c : v.findChildren<QComboBox*>())
        if (c->findData(QString("error")) >= 0) reason = c;
    QVERIFY(reason);
    QVERIFY(reason->findData(QString("interrupted")) >= 0);
    v.setFinishReason("interrupted");
    QCOMPARE(v.rowCount(), 2);
    QCOMPARE(exported_ids(v), QStringList({"i1", "i3"}));
}

// A damaged log opened read-only: History shows the readable rows and says,
// above the table, that it is damaged and how many rows may be missing.
// A healthy inspection or another database clears the warning.
void UiHistory::damagedLogIsSaidAboveTheTable() {
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db_));
    QVERIFY(v.damageWarning().isEmpty());
    runlog::LogInspection insp;
    insp.path = "/data/runlog.sqlite";
    insp.state = runlog::LogState::Damaged;
    insp.readable_responses = 80;
    insp.unreadable_responses = 4;
    v.setDamage(insp);
    const QString w = v.damageWarning();
    QVERIFY2(w.contains("/data/runlog.sqlite is damaged") && w.contains("80 responses") &&
                 w.contains("up to 4 more") && w.contains("log salvage"),
             qPrintable(w));
    bool shown = false;
    for (const QLabel* l : v.findChildren<QLabel*>()) shown = shown || l->text() == w;
    QVERIFY(shown);
    insp.state = runlog::LogState::Healthy;
    v.setDamage(insp);
    QVERIFY(v.damageWarning().isEmpty());
    insp.state = runlog::LogState::Damaged;
    v.setDamage(insp);
    QVERIFY(v.setDatabase(db_));
    QVERIFY(v.damageWarning().isEmpty());
}

// Rows started within one second (the table's resolution) are listed by
// id, newest first, not by their milliseconds (which interleave the ids);
// the headers are words with units, and each time column has a fixed
// number of decimals (TTFT and E2E 1, TPOT 2).
void UiHistory::rowsByIdWithinASecondHumanHeadersFixedDecimals() {
    const QString db = dir_.filePath("order.sqlite");
    {
        runlog::RunLog log = runlog::RunLog::open(db.toStdString());
        const int64_t run = log.begin_run(runlog::RunKind::Batch, "b", nlohmann::json::object());
        const int64_t mv =
            log.ensure_model_version((kData + "/models/stories260K.gguf").toStdString());
        const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
        // Written in this order (ids 1..4); the first three in one second.
        const int64_t started[] = {500, 200, 900, 1100};
        const double ttft[] = {12.0, 3.24, 7.5, 100.0};
        for (int i = 0; i < 4; ++i) {
            runlog::ResponseRecord r;
            r.run_id = run;
            r.model_version_id = mv;
            r.environment_id = env;
            r.request_id = "o" + std::to_string(i);
            r.prompt = "p";
            r.output = "o";
            r.finish_reason = "length";
            r.started_ms = 1764460800000 + started[i];
            r.ttft_ms = ttft[i];
            r.tpot_ms = ttft[i] / 2;
            r.e2e_ms = ttft[i] * 2;
            log.log_response(r);
        }
    }
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db));
    auto* table = v.findChild<QTableView*>();
    QVERIFY(table);
    const QAbstractItemModel* m = table->model();
    QStringList headers;
    for (int c = 0; c < m->columnCount(); ++c)
        headers << m->headerData(c, Qt::Horizontal).toString();
    QVERIFY2(headers.contains("TTFT (ms)") && headers.contains("TPOT (ms)") &&
                 headers.contains("E2E (ms)"),
             qPrintable(headers.join(", ")));
    for (const QString& h : headers) QVERIFY2(!h.contains('_'), qPrintable(h));
    auto column = [&](const QString& name) {
        QStringList out;
        const int c = static_cast<int>(headers.indexOf(name));
        for (int r = 0; r < m->rowCount(); ++r) out << m->index(r, c).data().toString();
        return out;
    };
    QCOMPARE(column("ID"), QStringList({"4", "3", "2", "1"}));
    QCOMPARE(column("TTFT (ms)"), QStringList({"100.0", "7.5", "3.2", "12.0"}));
    QCOMPARE(column("TPOT (ms)"), QStringList({"50.00", "3.75", "1.62", "6.00"}));
    QCOMPARE(column("E2E (ms)"), QStringList({"200.0", "15.0", "6.5", "24.0"}));
}

QTEST_MAIN(UiHistory)
// A server run's decisions (run_events) show under the table when the run
// filter picks that run, oldest first with their details; a run without
// events (or no run picked) shows none.
void UiHistory::runEventsOfThePickedRun() {
    const QString db = dir_.filePath("events.sqlite");
    int64_t server = 0, batch = 0;
    {
        runlog::RunLog log = runlog::RunLog::open(db.toStdString());
        server = log.begin_run("server", "stories260K", nlohmann::json::object());
        batch = log.begin_run(runlog::RunKind::Batch, "b", nlohmann::json::object());
        const std::pair<const char*, const char*> events[] = {
            {"server_start", R"({"port": 8080})"},
            {"canary_step", R"({"step": 1, "weight": 0.1})"},
            {"rollback", R"({"why": "ttft p99 412 ms > 300 ms"})"}};
        int64_t t = 1764979200000;  // 2025-12-06 00:00:00 UTC
        for (const auto& [kind, details] : events) {
            runlog::RunEvent e;
            e.run_id = server;
            e.t_ms = t += 1500;
            e.kind = kind;
            e.details = nlohmann::json::parse(details);
            log.log_event(e);
        }
    }
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db));
    auto* box = v.findChild<QWidget*>("runEventsBox");
    auto* table = v.findChild<QTableWidget*>("runEvents");
    QVERIFY(box && table);
    QVERIFY(box->isHidden());  // no run picked
    QComboBox* run = nullptr;
    for (QComboBox* c : v.findChildren<QComboBox*>())
        if (c->toolTip().contains("run")) run = c;
    QVERIFY(run);
    run->setCurrentIndex(run->findData(QVariant::fromValue(qlonglong(server))));
    QVERIFY(run->currentIndex() > 0);
    QVERIFY(!box->isHidden());
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->item(0, 1)->text(), QString("server_start"));
    QCOMPARE(table->item(1, 1)->text(), QString("canary_step"));
    QCOMPARE(table->item(2, 1)->text(), QString("rollback"));
    QVERIFY2(table->item(2, 2)->text().contains("ttft p99 412 ms > 300 ms"),
             qPrintable(table->item(2, 2)->text()));
    // Local time of the stored UTC ms, to the millisecond.
    QCOMPARE(table->item(0, 0)->text(),
             QDateTime::fromMSecsSinceEpoch(1764979201500).toString("yyyy-MM-dd HH:mm:ss.zzz"));
    run->setCurrentIndex(run->findData(QVariant::fromValue(qlonglong(batch))));
    QVERIFY(box->isHidden());
    QCOMPARE(table->rowCount(), 0);
}

#include "test_ui_history.moc"
