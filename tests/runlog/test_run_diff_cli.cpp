// `workbench-cli diff` on real runs: stories260K (F32) and a Q8_0 copy
// made by `workbench-cli quantize`, each answered with `generate --chat`
// on the CPU backend, greedy, the same seed and length. Run 1: F32, the
// turn as plain text (--chat-format none); run 2: Q8_0, ChatML; run 3: F32,
// ChatML. 1 vs 2 must list exactly the file's identity (SHA-256 as
// sha256sum computes it, file type, tensor types, size) and the template
// (name, SHA-256, and special tokens parsed, which plain text does not),
// nothing else; 3 vs 2 only the file, with the one prompt matched and its
// outputs identical exactly when generate printed the same text. A run
// against itself lists nothing and has 100% identical outputs. Exit status
// 0 for a comparison, 2 for bad input.

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "common/process.h"

namespace {

const QString kCli = WB_CLI_PATH;
const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

using wbtest::run_process;
using Run = wbtest::ProcessResult;

QString sha256sum(const QString& path) {
    const Run r = run_process("sha256sum", {path});
    return QString::fromLatin1(r.out).section(' ', 0, 0);
}

}  // namespace

class TestRunDiffCli : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString db_, q8_;
    QString text_[4];  // generate's output text of runs 1..3

    QJsonObject diff_json(const QString& a, const QString& b) {
        const Run r = run_process(kCli, {"diff", a, b, "--db", db_, "--json"});
        if (r.code != 0) qFatal("diff %s %s: %s", qPrintable(a), qPrintable(b), r.err.constData());
        return QJsonDocument::fromJson(r.out).object();
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        db_ = dir_.filePath("runs.sqlite");
        q8_ = dir_.filePath("stories260K-q8_0.gguf");
        const Run q = run_process(kCli, {"quantize", kModel, q8_, "--type", "Q8_0", "-q"});
        QVERIFY2(q.code == 0, q.err.constData());
        // Run 1: F32, plain text; run 2: Q8_0, ChatML; run 3: F32, ChatML.
        const std::pair<QString, QString> runs[] = {
            {kModel, "none"}, {q8_, "chatml"}, {kModel, "chatml"}};
        for (int i = 0; i < 3; ++i) {
            const Run g = run_process(
                kCli, {"generate", "-m", runs[i].first, "--chat", "-p", "Once upon a time", "-n",
                       "12", "--temp", "0", "--seed", "7", "--backend", "cpu", "--chat-format",
                       runs[i].second, "--db", db_, "--json"});
            QVERIFY2(g.code == 0, g.err.constData());
            text_[i + 1] = QJsonDocument::fromJson(g.out).object()["text"].toString();
            QVERIFY(!text_[i + 1].isEmpty());
        }
    }

    void listsExactlyTheFileAndTheTemplate() {
        const QJsonObject d = diff_json("1", "2");
        QSet<QString> keys;
        QMap<QString, QJsonObject> by_key;
        for (const QJsonValue& v : d["fields"].toArray()) {
            keys << v["key"].toString();
            by_key[v["key"].toString()] = v.toObject();
        }
        const QSet<QString> want = {"model.sha256", "model.file_type", "model.tensor_types",
                                    "model.file_size", "tokenizer.chat_template",
                                    "tokenizer.chat_template_sha256",
                                    // plain text (--chat-format none) does not parse special tokens
                                    "tokenizer.parse_special"};
        QCOMPARE(keys, want);
        for (const QString& k : want) QVERIFY(by_key[k]["changes_outputs"].toBool());
        // Every listed row changes outputs, so the order is model then tokenizer.
        QCOMPARE(d["fields"].toArray().first()["group"].toString(), QString("model"));
        QCOMPARE(d["fields"].toArray().last()["group"].toString(), QString("tokenizer"));
        QCOMPARE(by_key["model.sha256"]["a"].toArray().first().toString(), sha256sum(kModel));
        QCOMPARE(by_key["model.sha256"]["b"].toArray().first().toString(), sha256sum(q8_));
        QCOMPARE(by_key["model.file_size"]["b"].toArray().first().toString(),
                 QString::number(QFileInfo(q8_).size()));
        QVERIFY2(by_key["model.file_type"]["b"].toArray().first().toString().contains("Q8_0"),
                 qPrintable(by_key["model.file_type"]["b"].toArray().first().toString()));
        QCOMPARE(by_key["tokenizer.chat_template"]["b"].toArray().first().toString(),
                 QString("chatml"));
        QCOMPARE(d["a"]["kind"].toString(), QString("generate"));
        QCOMPARE(d["prompts"]["a_responses"].toInt(), 1);
        QCOMPARE(d["prompts"]["b_responses"].toInt(), 1);
    }

    void sameTemplateMatchesThePrompt() {
        const QJsonObject d = diff_json("3", "2");
        QSet<QString> keys;
        for (const QJsonValue& v : d["fields"].toArray()) keys << v["key"].toString();
        QCOMPARE(keys, QSet<QString>({"model.sha256", "model.file_type", "model.tensor_types",
                                      "model.file_size"}));
        const QJsonObject p = d["prompts"].toObject();
        QCOMPARE(p["matched"].toInt(), 1);
        const bool same = text_[3] == text_[2];
        QCOMPARE(p["identical"].toInt(), same ? 1 : 0);
        QCOMPARE(p["divergences"].toArray().size(), same ? 0 : 1);
        if (!same) {
            // The first differing character, counted here on code points.
            const QList<uint> a = text_[3].toUcs4(), b = text_[2].toUcs4();
            qsizetype i = 0;
            while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
            QCOMPARE(p["divergences"].toArray().first()["offset"].toInteger(), i);
        }
        QCOMPARE(p["ttft_ms"]["pairs"].toInt(), 1);
    }

    void runAgainstItself() {
        const QJsonObject d = diff_json("2", "2");
        QVERIFY(d["fields"].toArray().isEmpty());
        QCOMPARE(d["prompts"]["matched"].toInt(), 1);
        QCOMPARE(d["prompts"]["identical_share"].toDouble(), 1.0);
        QCOMPARE(d["prompts"]["ttft_ms"]["p50_delta"].toDouble(), 0.0);
    }

    void readableTable() {
        const Run r = run_process(kCli, {"diff", "1", "2", "--db", db_});
        QCOMPARE(r.code, 0);
        const QString out = QString::fromUtf8(r.out);
        QVERIFY2(out.contains("model: file SHA-256") && out.contains("tokenizer: chat template") &&
                     out.contains(sha256sum(q8_)) && out.contains("(* changes outputs)") &&
                     out.contains("Prompts both answered:"),
                 qPrintable(out));
        const Run same = run_process(kCli, {"diff", "1", "1", "--db", db_});
        QCOMPARE(same.code, 0);
        QVERIFY2(QString::fromUtf8(same.out).contains("No differences") &&
                     QString::fromUtf8(same.out).contains("Identical outputs: 1 of 1 (100.0%)"),
                 same.out.constData());
    }

    void badInputExitsTwo() {
        const Run missing = run_process(kCli, {"diff", "1", "42", "--db", db_});
        QCOMPARE(missing.code, 2);
        QVERIFY2(missing.err.contains("run 42 is not in the run log"), missing.err.constData());
        const Run word = run_process(kCli, {"diff", "one", "2", "--db", db_});
        QCOMPARE(word.code, 2);
        QVERIFY2(word.err.contains("RUN_A: 'one' is not a run id"), word.err.constData());
        const Run one = run_process(kCli, {"diff", "1", "--db", db_});
        QCOMPARE(one.code, 2);
        const Run nolog = run_process(kCli, {"diff", "1", "2", "--db", dir_.filePath("no.sqlite")});
        QCOMPARE(nolog.code, 2);
        QVERIFY2(nolog.err.contains("no.sqlite"), nolog.err.constData());
        QFile junk(dir_.filePath("junk.sqlite"));
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write(QByteArray(8192, 'x'));
        junk.close();
        const Run notlog = run_process(kCli, {"diff", "1", "2", "--db", junk.fileName()});
        QCOMPARE(notlog.code, 2);
        QVERIFY2(notlog.err.contains("not a SQLite database"), notlog.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestRunDiffCli)
#include "test_run_diff_cli.moc"
