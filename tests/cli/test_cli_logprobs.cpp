// `workbench-cli generate --top-logprobs N` as a user runs it (QProcess on
// the built binary, "cpu" backend, F32 KV cache): the --json "logprobs"
// array against llama.cpp's golden first-step logits (tests/data/golden,
// log-softmax computed here in float64), the stderr table of the plain
// output, nothing extra without the option, and a bad N refused.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/data_dir.h"
#include "common/json_fixtures.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kModel = kData + "/models/stories260K.gguf";

wbtest::ProcessResult run_cli(const QStringList& args) {
    return wbtest::run_process(kCli, args, 120000);
}

QStringList generate_args(const QString& prompt) {
    return {"generate", "-m",   kModel, "--backend", "cpu",    "--kv-type", "f32",
            "-p",       prompt, "-n",   "4",         "--temp", "0",         "--no-log"};
}

}  // namespace

class TestCliLogprobs : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kCli), qPrintable(kCli)); }

    // Each generated token has {id, text, logprob, top: [{id, text,
    // logprob}]}; greedy: the token is top[0]; the pieces spell the text;
    // step 0 is llama.cpp's log-softmax (2e-3: our logits are within 1e-3
    // of llama.cpp's, see test_ref_model full_first_logits).
    void json_has_the_golden_logprobs() {
        const QJsonObject g =
            wbtest::read_json(wbtest::data_dir() + "/golden/stories260K_first_logits_0.json");
        QStringList args = generate_args(g["prompt"].toString());
        args << "--json"
             << "--top-logprobs"
             << "3";
        const wbtest::ProcessResult r = run_cli(args);
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        const QJsonArray ids = j["generated_token_ids"].toArray();
        const QJsonArray lp = j["logprobs"].toArray();
        QCOMPARE(ids.size(), qsizetype{4});
        QCOMPARE(lp.size(), ids.size());
        QString spelled;
        for (qsizetype i = 0; i < lp.size(); ++i) {
            const QJsonObject s = lp[i].toObject();
            QCOMPARE(s["id"].toInt(), ids[i].toInt());
            QVERIFY(s["logprob"].toDouble() <= 0.0);
            const QJsonArray top = s["top"].toArray();
            QCOMPARE(top.size(), qsizetype{3});
            QCOMPARE(top[0].toObject()["id"].toInt(), s["id"].toInt());
            QCOMPARE(top[0].toObject()["logprob"].toDouble(), s["logprob"].toDouble());
            QCOMPARE(top[0].toObject()["text"].toString(), s["text"].toString());
            spelled += s["text"].toString();
        }
        QCOMPARE(spelled, j["text"].toString());

        std::vector<double> logits;
        for (const QJsonValue& v : g["logits_f32_kv"].toArray()) logits.push_back(v.toDouble());
        const double mx = *std::max_element(logits.begin(), logits.end());
        double sum = 0;
        for (double x : logits) sum += std::exp(x - mx);
        const double lse = mx + std::log(sum);
        const QJsonArray top0 = lp[0].toObject()["top"].toArray();
        for (const QJsonValue& t : top0) {
            const int id = t.toObject()["id"].toInt();
            const double want = logits[size_t(id)] - lse;
            QVERIFY2(std::fabs(t.toObject()["logprob"].toDouble() - want) <= 2e-3,
                     qPrintable(QString("id %1: %2 vs llama.cpp %3")
                                    .arg(id)
                                    .arg(t.toObject()["logprob"].toDouble())
                                    .arg(want)));
        }
        // The top ids are llama.cpp's three most likely (no near-ties there).
        std::vector<int> order(logits.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return logits[size_t(a)] > logits[size_t(b)]; });
        for (qsizetype k = 0; k < 3; ++k)
            QCOMPARE(top0[k].toObject()["id"].toInt(), order[size_t(k)]);
    }

    // Without the option: no "logprobs" key and no table; with it, the plain
    // output keeps stdout as it was and adds the table to stderr.
    void only_when_asked() {
        const wbtest::ProcessResult j = run_cli(generate_args("Once upon a time") << "--json");
        QVERIFY2(j.code == 0, j.err.constData());
        QVERIFY(!QJsonDocument::fromJson(j.out).object().contains("logprobs"));
        const wbtest::ProcessResult plain = run_cli(generate_args("Once upon a time"));
        QVERIFY2(plain.code == 0, plain.err.constData());
        QVERIFY(!plain.err.contains("logprob"));
        const wbtest::ProcessResult table =
            run_cli(generate_args("Once upon a time") << "--top-logprobs"
                                                      << "2");
        QVERIFY2(table.code == 0, table.err.constData());
        QCOMPARE(table.out, plain.out);
        QVERIFY2(table.err.contains("logprob") && table.err.contains("top"), table.err.constData());
    }

    void bad_value_is_refused() {
        for (const char* bad : {"21", "-1", "x"}) {
            const wbtest::ProcessResult r =
                run_cli(generate_args("Once upon a time") << "--top-logprobs" << bad);
            QCOMPARE(r.code, 2);
            QVERIFY2(r.err.contains("--top-logprobs"), r.err.constData());
        }
    }
};

QTEST_GUILESS_MAIN(TestCliLogprobs)
#include "test_cli_logprobs.moc"
