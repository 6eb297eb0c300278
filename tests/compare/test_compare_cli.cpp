// `workbench-cli quantize` and `workbench-cli compare` as a user runs them
// (QProcess on the built binary). Expected bytes and figures come from
// llama.cpp's files and the float64 reference in tests/data/golden/quant.

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "common/data_dir.h"
#include "common/file_hash.h"
#include "common/json_fixtures.h"
#include "common/process.h"

namespace {

using wbtest::file_sha256;

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kF32 = kData + "/models/stories260K.gguf";

using Result = wbtest::ProcessResult;

Result run(const QStringList& args) {
    return wbtest::run_process(kCli, args);
}

}  // namespace

class TestCompareCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

  private slots:
    void quantize_writes_llama_cpp_identical_files() {
        const QJsonObject files =
            wbtest::read_json(
                (kData + "/golden/quant/stories260K_quant_files.json").toStdString())["files"]
                .toObject();
        for (const QString type : {"f16", "q8_0", "q4_0"}) {
            const QString out = dir_.filePath("s-" + type + ".gguf");
            // The stories260K copies were written without llama.cpp's mix
            // rules (gguf-py): --pure.
            const Result r = run({"quantize", kF32, out, "--type", type, "--pure"});
            QVERIFY2(r.code == 0, r.err.constData());
            QVERIFY(r.out.isEmpty());
            QVERIFY2(r.err.contains("[ 48/48]"), r.err.constData());  // progress
            if (type != "f16") {
                QVERIFY(r.err.contains("blk.0.ffn_down.weight") &&
                        r.err.contains(("row length 172 is not a multiple of " + type.toUpper() +
                                        "'s block of 32, written as F16")
                                           .toUtf8()));
            }
            QVERIFY(r.err.contains("1-D tensor, kept as stored (f32)"));
            QCOMPARE(
                file_sha256(out),
                files["stories260K-" + type + ".gguf"].toObject()["sha256"].toString().toLatin1());
        }
    }

    void quantize_bad_input() {
        Result r = run({"quantize", kF32, dir_.filePath("x.gguf"), "--type", "q3_k"});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("accepted: f16, q8_0, q6_k, q5_k_m"));
        r = run({"quantize", kF32, dir_.filePath("x.gguf")});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("--type is required"));
        const QString broken = dir_.filePath("broken.gguf");
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("GGUF\x03\0\0\0", 8);
        }
        r = run({"quantize", broken, dir_.filePath("y.gguf"), "-t", "q8_0"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("broken.gguf"), r.err.constData());
        QVERIFY(!QFile::exists(dir_.filePath("y.gguf")));
    }

    // tests/data/repro/nan_all_output.gguf: every logit NaN. compare used
    // to print KLD 0.000000 for it (NaN clamped by `kl > 0 ? kl : 0`), i.e.
    // "identical to A"; now the table says NaN and the JSON has null.
    void compare_shows_nan_for_nan_logits() {
        const QString nan_model = kData + "/repro/nan_all_output.gguf";
        const QString text = kData + "/golden/stories260K_ppl_text.txt";
        Result r = run({"compare", "-m", kF32, "-m", nan_model, "--text", text, "--ctx", "128",
                        "-n", "4", "-q", "--backend", "cpu"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString table = QString::fromUtf8(r.out);
        const QStringList lines = table.split('\n');
        auto row = [&](const QString& name) {
            for (const QString& l : lines)
                if (l.startsWith(name)) return l;
            return QString();
        };
        const QString mean = row("KLD vs A mean");
        QVERIFY2(!mean.isEmpty(), r.out.constData());
        QVERIFY2(mean.contains("NaN ± NaN"), qPrintable(mean));
        QVERIFY2(row("KLD vs A max").contains("NaN"), qPrintable(row("KLD vs A max")));
        QVERIFY2(row("PPL (").count("NaN") == 2, qPrintable(row("PPL (")));  // B: NaN ± NaN

        r = run({"compare", "-m", kF32, "-m", nan_model, "--text", text, "--ctx", "128", "-n", "4",
                 "-q", "--backend", "cpu", "--json"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject b =
            QJsonDocument::fromJson(r.out).object()["models"].toArray()[1].toObject();
        QVERIFY2(b["kld"].toObject()["mean"].isNull(), r.out.constData());
        QVERIFY(b["kld"].toObject()["max"].isNull());
        QVERIFY(b["perplexity"].toObject()["ppl"].isNull());
    }

    // `compare -m M -m M` (a model against itself) as the issue ran it: one
    // set of speed figures per model, median (min-max) of -r timed passes
    // after one untimed warm-up pass, said so in the table and --help; the
    // default is llama-bench's 5 repetitions. Structure only (no timing
    // asserts): counts, keys and the wording.
    void compare_speed_is_warm_and_repeated() {
        Result r = run({"compare", "-m", kF32, "-m", kF32, "-n", "4", "-r", "2", "--json", "-q",
                        "--backend", "cpu", "--no-log"});
        QVERIFY2(r.code == 0, r.err.constData());
        QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["repetitions"].toInt(), 2);
        QCOMPARE(j["warmup_passes"].toInt(), 1);
        QVERIFY(j["speed_method"].toString().startsWith(
            "median (min-max) of 2 timed passes after 1 untimed warm-up pass"));
        for (const QJsonValue v : j["models"].toArray()) {
            const QJsonObject m = v.toObject();
            QCOMPARE(m["warmup_runs"].toArray().size(), 3);  // the 3 built-in prompts, once
            QCOMPARE(m["timed_runs"].toArray().size(), 2);
            for (const char* fig :
                 {"prefill_tokens_per_s", "decode_tokens_per_s", "ttft_ms", "e2e_ms"}) {
                const QJsonObject f = m[fig].toObject();
                QCOMPARE(f["samples"].toArray().size(), 2);
                QVERIFY2(f["min"].toDouble() <= f["median"].toDouble() &&
                             f["median"].toDouble() <= f["max"].toDouble(),
                         fig);
            }
            QCOMPARE(m["runs"].toArray().size(), 3);  // outputs: the first timed pass
        }

        r = run(
            {"compare", "-m", kF32, "-m", kF32, "-n", "4", "-q", "--backend", "cpu", "--no-log"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QString table = QString::fromUtf8(r.out);
        QVERIFY2(table.contains("Speed: median (min-max) of 5 timed passes after 1 untimed "
                                "warm-up pass; one request at a time"),
                 r.out.constData());
        const QRegularExpression cell(
            QStringLiteral("^decode tokens/s +[0-9.]+ \\([0-9.]+-[0-9.]+\\) +[0-9.]+ "
                           "\\([0-9.]+-[0-9.]+\\)$"),
            QRegularExpression::MultilineOption);
        QVERIFY2(cell.match(table).hasMatch(), r.out.constData());
        QVERIFY(!table.contains("p50"));  // no second, cold set of figures

        r = run({"compare", "--help"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("--repetitions N") && r.out.contains("(default: 5)"));
        QVERIFY(r.out.contains("untimed warm-up pass"));
        r = run({"compare", "-m", kF32, "-m", kF32, "-r", "0"});
        QCOMPARE(r.code, 2);
    }

    // Cost per pane at a per-token price, worked from the pane's own runs:
    // one pass of the prompts, (prompt tokens + 2 x generated tokens) / 1e6
    // at 1 USD/M input and 2 USD/M output. Per hour: a line per pane.
    void compare_prices_each_pane() {
        Result r = run({"compare", "-m", kF32, "-m", kF32, "-n", "4", "-r", "1", "--json", "-q",
                        "--backend", "cpu", "--no-log", "--price-per-m-input", "1",
                        "--price-per-m-output", "2"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(j["price"].toObject()["basis"].toString(), QString("per_m_tokens"));
        for (const QJsonValue v : j["models"].toArray()) {
            const QJsonObject m = v.toObject();
            double in = 0, out = 0;
            const QJsonArray runs = m["runs"].toArray();
            for (const QJsonValue run : runs) {
                in += run.toObject()["prompt_tokens"].toDouble();
                out += run.toObject()["tokens"].toArray().size();
            }
            const QJsonObject c = m["cost"].toObject();
            const double want = (in + 2 * out) / 1e6;
            QVERIFY2(want > 0 && std::abs(c["total"].toDouble() - want) < 1e-12,
                     qPrintable(QJsonDocument(c).toJson()));
            QVERIFY(std::abs(c["per_request"].toDouble() - want / runs.size()) < 1e-12);
        }
        r = run({"compare", "-m", kF32, "-m", kF32, "-n", "4", "-r", "1", "-q", "--backend", "cpu",
                 "--no-log", "--price-per-hour", "2"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.contains("cost of A: ") && r.out.contains("cost of B: ") &&
                     r.out.contains("2 USD/h x "),
                 r.out.constData());
        r = run({"compare", "-m", kF32, "-m", kF32, "--price-per-hour", "2", "--price-per-m-input",
                 "1"});
        QCOMPARE(r.code, 2);
    }

    void compare_json_and_table() {
        const QString q8 = kData + "/golden/quant/stories260K-q8_0.gguf";
        const QString text = kData + "/golden/stories260K_ppl_text.txt";
        const QString prompts = dir_.filePath("prompts.txt");
        {
            QFile f(prompts);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("Once upon a time\nLily and Ben\n");
        }
        Result r = run({"compare", "-m", kF32, "-m", q8, "--text", text, "--ctx", "128",
                        "--prompts", prompts, "-n", "16", "--json", "-q", "--backend", "cpu"});
        QVERIFY2(r.code == 0, r.err.constData());
        const QJsonObject j = QJsonDocument::fromJson(r.out).object();
        const QJsonArray models = j["models"].toArray();
        QCOMPARE(models.size(), 2);
        const QJsonObject f64 =
            wbtest::read_json((kData + "/golden/quant/stories260K_quant_ppl_kld.json")
                                  .toStdString())["independent_float64_ppl"]
                .toObject();
        const double ppl_b = models[1].toObject()["perplexity"].toObject()["ppl"].toDouble();
        QVERIFY(std::abs(ppl_b / f64["q8_0"].toObject()["exact_f32kv"].toDouble() - 1) < 1e-3);
        QCOMPARE(models[0].toObject()["kld"].toObject()["mean"].toDouble(), 0.0);
        QCOMPARE(models[1].toObject()["kld"].toObject()["n"].toInt(), 882);
        QCOMPARE(models[1].toObject()["runs"].toArray().size(), 2);

        r = run({"compare", "-m", kF32, "-m", q8, "-n", "8", "--backend", "vulkan"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(r.out.contains("teacher-forced agreement"));
        QVERIFY(r.err.contains("compare: loading B"));
        QVERIFY2(r.out.contains("backend") && !r.out.contains("n/a (cpu)"),
                 r.out.constData());  // on Vulkan

        r = run({"compare", "-m", kF32});
        QCOMPARE(r.code, 2);
        QVERIFY(r.err.contains("at least two models"));
        const QString empty = dir_.filePath("empty.jsonl");
        {
            QFile f(empty);
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        r = run({"compare", "-m", kF32, "-m", q8, "--testset", empty});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("test set has no items"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCompareCli)
#include "test_compare_cli.moc"
