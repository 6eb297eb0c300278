// `workbench-cli generate --draft ngram|FILE --temp 0` as a user runs it
// (QProcess on the built binary, "cpu" backend): the text and token ids
// equal plain generate's, and llama.cpp's greedy text for the prompt
// (tests/data/golden); the speculative stats are printed (--json) and
// consistent; a draft whose vocabulary differs is refused, naming the token.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

#include "common/data_dir.h"
#include "common/greedy_golden.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kModel = kData + "/models/stories260K.gguf";

QJsonObject generate(const QString& prompt, const QStringList& extra) {
    QStringList args{"generate", "-m", kModel, "--backend", "cpu", "--kv-type", "f32",     "-p",
                     prompt,     "-n", "48",   "--temp",    "0",   "--json",    "--no-log"};
    args << extra;
    const wbtest::ProcessResult r = wbtest::run_process(kCli, args, 120000);
    if (r.code != 0) qFatal("generate failed: %s", r.err.constData());
    return QJsonDocument::fromJson(r.out).object();
}

}  // namespace

class TestCliSpeculative : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kCli), qPrintable(kCli)); }

    void same_text_as_plain_generate() {
        for (const auto& g : wbtest::read_greedy_golden()) {
            const QString prompt = QString::fromStdString(g.prompt);
            const QJsonObject plain = generate(prompt, {});
            QVERIFY(!plain.contains("speculative"));
            for (const QStringList& draft : {QStringList{"--draft", "ngram"},
                                             QStringList{"--draft", kModel, "--draft-k", "3"}}) {
                const QJsonObject spec = generate(prompt, draft);
                QCOMPARE(spec["text"].toString(), plain["text"].toString());
                QCOMPARE(spec["generated_token_ids"], plain["generated_token_ids"]);
                const QJsonObject st = spec["speculative"].toObject();
                QVERIFY2(!st.isEmpty(), qPrintable(draft.join(' ')));
                QVERIFY(st["accepted"].toInt() <= st["drafted"].toInt());
                QVERIFY(st["target_passes"].toInt() >= 1);
            }
            // llama.cpp's greedy text for the same prompt (ignore_eos there;
            // these prompts do not reach an EOS within 48 tokens).
            QCOMPARE(plain["text"].toString().toStdString(), g.text);
        }
    }

    void other_vocabulary_is_refused() {
        const wbtest::ProcessResult r = wbtest::run_process(
            kCli,
            {"generate", "-m", kModel, "--backend", "cpu", "-p", "Hi", "-n", "4", "--temp", "0",
             "--no-log", "--draft", kData + "/models/llama-2-tiny-random.gguf"},
            120000);
        QVERIFY(r.code != 0);
        QVERIFY2(r.err.contains("draft vocabulary differs from the target's at token"),
                 r.err.constData());
    }

    void draft_k_without_draft_is_a_usage_error() {
        const wbtest::ProcessResult r = wbtest::run_process(
            kCli, {"generate", "-m", kModel, "-p", "Hi", "--draft-k", "3", "--no-log"}, 60000);
        QVERIFY(r.code != 0);
        QVERIFY2(r.err.contains("--draft-k needs --draft"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliSpeculative)
#include "test_cli_speculative.moc"
