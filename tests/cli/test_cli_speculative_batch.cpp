// `workbench-cli batch --draft ngram --temp 0 --concurrency 1` as a user
// runs it (QProcess on the built binary, CPU backend, stories260K): every
// record's output and token ids equal plain batch's; each record's
// "speculative" has the stats (null without --draft), and the run log's
// response rows carry the same stats in their settings (a real SQLite file).

#include <sqlite3.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

/// Records of one batch run, by id.
QMap<QString, QJsonObject> batch(const QString& prompts, const QStringList& extra) {
    QStringList args{"batch", "-m", kModel,   "--backend", "cpu",           "--prompts", prompts,
                     "-n",    "40", "--temp", "0",         "--concurrency", "1",         "-q"};
    args << extra;
    const wbtest::ProcessResult r = wbtest::run_process(kCli, args, 240000);
    if (r.code != 0) qFatal("batch failed: %s", r.err.constData());
    QMap<QString, QJsonObject> out;
    for (const QByteArray& line : r.out.split('\n')) {
        if (line.trimmed().isEmpty()) continue;
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        out.insert(o["id"].toString(), o);
    }
    return out;
}

/// The settings JSON of every response row, in row order.
QList<QJsonObject> logged_settings(const QString& db) {
    QList<QJsonObject> rows;
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK)
        qFatal("cannot open %s", qPrintable(db));
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, "SELECT settings FROM responses ORDER BY id", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW)
        rows.append(
            QJsonDocument::fromJson(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)))
                .object());
    sqlite3_finalize(st);
    sqlite3_close(h);
    return rows;
}

}  // namespace

class TestCliSpeculativeBatch : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kCli), qPrintable(kCli)); }

    void ngram_outputs_equal_plain_batch() {
        QTemporaryDir dir;
        const QString prompts = dir.filePath("prompts.jsonl");
        QFile f(prompts);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "{\"id\": \"repeat\", \"prompt\": \"Lily had a red ball. Lily had a red ball. Lily had "
            "a red ball. Lily had\"}\n"
            "{\"id\": \"story\", \"prompt\": \"Once upon a time\"}\n"
            "{\"id\": \"dog\", \"prompt\": \"The dog ran to the park. The dog ran\"}\n");
        f.close();

        const QMap<QString, QJsonObject> plain = batch(prompts, {"--no-log"});
        const QString db = dir.filePath("runlog.sqlite");
        const QMap<QString, QJsonObject> spec = batch(prompts, {"--draft", "ngram", "--db", db});
        QCOMPARE(plain.size(), 3);
        QCOMPARE(spec.size(), 3);
        int verified = 0;
        for (auto it = plain.begin(); it != plain.end(); ++it) {
            const QJsonObject& s = spec[it.key()];
            QCOMPARE(s["output"].toString(), it.value()["output"].toString());
            QCOMPARE(s["token_ids"], it.value()["token_ids"]);
            QVERIFY(it.value()["speculative"].isNull());
            const QJsonObject st = s["speculative"].toObject();
            QCOMPARE(st["drafter"].toString(), QString("ngram"));
            // Alone in the engine (concurrency 1): no pass was shared.
            QCOMPARE(st["shared_passes"].toInt(), 0);
            QVERIFY(st["accepted"].toInt() <= st["drafted"].toInt());
            // Each decode pass emits its kept draft tokens and one of its
            // own; the first token comes from the prefill.
            QCOMPARE(s["generated_tokens"].toInt() - 1,
                     st["target_passes"].toInt() + st["accepted"].toInt());
            if (st["drafted"].toInt() > 0)
                QCOMPARE(st["acceptance_rate"].toDouble(),
                         double(st["accepted"].toInt()) / st["drafted"].toInt());
            verified += st["verify_passes"].toInt() > 0 ? 1 : 0;
        }
        QVERIFY(spec["repeat"]["speculative"].toObject()["accepted"].toInt() > 0);
        QVERIFY(verified >= 1);

        // The run log's rows: the request's speculative settings and the
        // stats of the record with the same id.
        const QList<QJsonObject> rows = logged_settings(db);
        QCOMPARE(rows.size(), 3);
        for (const QJsonObject& row : rows) {
            QCOMPARE(row["speculative"].toObject()["kind"].toString(), QString("ngram"));
            const QJsonObject st = row["speculative_stats"].toObject();
            QCOMPARE(st["drafter"].toString(), QString("ngram"));
            bool matched = false;
            for (const QJsonObject& rec : spec)
                matched |=
                    rec["speculative"]["drafted"].toInt() == st["drafted"].toInt() &&
                    rec["speculative"]["accepted"].toInt() == st["accepted"].toInt() &&
                    rec["speculative"]["target_passes"].toInt() == st["target_passes"].toInt();
            QVERIFY(matched);
        }
    }
};

QTEST_GUILESS_MAIN(TestCliSpeculativeBatch)
#include "test_cli_speculative_batch.moc"
