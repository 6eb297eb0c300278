// The bad-input pass as regression tests, on the built workbench-cli
// (QProcess): the files of tests/data/repro (each stories260K.gguf with one
// thing broken, see its README) on every surface that loads a model, a FIFO
// or a device where a file is expected. Each case used to crash, hang or
// abort (noted per test); now each ends with a message naming the problem
// and a normal exit status (a crash reads as code -1, a hang as "timed
// out"). Expected messages are the product's wording, checked for what
// they must name (the file, the step, the counts), not their whole text.

#include <sys/stat.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <utility>

#include "common/backends.h"
#include "common/data_dir.h"
#include "common/process.h"

namespace {

const QString kCli = QStringLiteral(WB_BINARY_DIR "/app/cli/workbench-cli");
const QString kData = QString::fromStdString(wbtest::data_dir());
const QString kNan = kData + "/repro/nan_all_output.gguf";
const QString kShortVocab = kData + "/repro/vocab_short400.gguf";
const QString kEmbdF16 = kData + "/repro/C_type_embd_f16.gguf";
// golden2's tiny models damaged (tests/data/repro/README.md): NaN norms, a
// NaN dmin in every Q4_K block, a Q4_K tensor typed F16, a BOS id past the
// vocabulary.
const QString kNanNorms = kData + "/repro/nan-norms-q4_0.gguf";
const QString kNanDmin = kData + "/repro/nan-dmin-qwen2-q4_k_m.gguf";
const QString kTypeSwapped = kData + "/repro/type-swapped-llama3.gguf";
const QString kBosOutOfRange = kData + "/repro/bos-out-of-range-llama3.gguf";

using Run = wbtest::ProcessResult;

Run cli(const QStringList& args, int timeout_ms = 120000) {
    return wbtest::run_process(kCli, args, timeout_ms);
}

QString show(const Run& r) {
    return QString("code %1\nstderr: %2\nstdout: %3")
        .arg(r.code)
        .arg(QString::fromUtf8(r.err.left(2000)), QString::fromUtf8(r.out.left(2000)));
}

}  // namespace

class TestBadInput : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    QString prompts_;

  private slots:
    void initTestCase() {
        QVERIFY2(QFile::exists(kCli), qPrintable(kCli));
        prompts_ = dir_.filePath("prompts.txt");
        QFile f(prompts_);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("Once upon a time\nLily and Ben\n");
    }

    // All-NaN logits: the sampler segfaulted in generate (min-p kept no
    // candidate). Now generate stops with the step and the counts, on the
    // CPU reference and on Vulkan alike.
    void nan_logits_generate_names_the_step() {
        for (const char* backend : wbtest::built_backends({"cpu", "vulkan"})) {
            const Run r = cli({"generate", "-m", kNan, "-p", "Once upon a time", "-n", "4",
                               "--no-log", "--backend", backend});
            QVERIFY2(r.code == 1, qPrintable(show(r)));
            QVERIFY2(r.err.contains("sampling output token 0 (from the prefill of 5 prompt "
                                    "tokens): logits are not finite: 512 of 512 values are NaN"),
                     qPrintable(show(r)));
        }
    }

    // Non-finite weights in a quantized model (NaN norms, NaN Q4_K dmin, a
    // tensor whose type field does not match its data): the CPU backend's
    // int8 activation quantizer dropped the NaN and generate printed tokens,
    // while cpu-ref and Vulkan said the logits are not finite. Now --backend
    // cpu fails with exactly the reference's message line, as Vulkan does,
    // and prints no token.
    void non_finite_weights_are_the_reference_error_on_cpu() {
        for (const QString& model : {kNanNorms, kNanDmin, kTypeSwapped}) {
            auto error_line = [&](const char* backend) {
                const Run r = cli({"generate", "-m", model, "-p", "Once upon a time", "-n", "4",
                                   "--temp", "0", "--backend", backend, "--no-log"});
                const int at = r.err.indexOf("logits are not finite");
                const int from = r.err.lastIndexOf('\n', at) + 1;
                const int to = r.err.indexOf('\n', at);
                return std::make_pair(r, at < 0 ? QByteArray() : r.err.mid(from, to - from));
            };
            const auto [ref, ref_line] = error_line("cpu-ref");
            QVERIFY2(ref.code == 1 && !ref_line.isEmpty(), qPrintable(model + "\n" + show(ref)));
            QVERIFY2(ref_line.contains("sampling output token 0 (from the prefill of"),
                     ref_line.constData());
            for (const char* backend : wbtest::built_backends({"cpu", "vulkan"})) {
                const auto [r, line] = error_line(backend);
                QVERIFY2(r.code == 1, qPrintable(model + " " + backend + "\n" + show(r)));
                QCOMPARE(line, ref_line);
                QVERIFY2(r.out.isEmpty(), qPrintable(model + "\n" + show(r)));  // no tokens
            }
        }
    }

    // quantize of a source with NaN values or scales wrote a model of NaN;
    // now it is refused, naming the tensor and the block, and no output is
    // left.
    void quantize_refuses_non_finite_source() {
        const QString out = dir_.filePath("nan-q8.gguf");
        const Run r = cli({"quantize", kNanDmin, out, "--type", "q8_0", "-q"});
        QVERIFY2(r.code == 1, qPrintable(show(r)));
        QVERIFY2(r.err.contains("tensor 'blk.0.attn_k.weight': Q4_K block 0 (row 0, values "
                                "0..255) decodes to NaN"),
                 qPrintable(show(r)));
        QVERIFY(!QFile::exists(out));
    }

    // tokenizer.ggml.bos_token_id one past the vocabulary: token 11 (",",
    // BPE's default BOS) was put before every prompt while info said "bos:
    // none". Now a warning names the key, and no BOS is added, the same in
    // tokenize, info and generate.
    void out_of_range_bos_is_a_warning_and_no_bos() {
        const QByteArray warning =
            "warning: " + kBosOutOfRange.toUtf8() +
            ": tokenizer.ggml.bos_token_id = 2304 is not a token id of this vocabulary (2304 "
            "tokens, ids 0..2303); read as no such token, so no BOS is put before prompts";
        const Run t = cli({"tokenize", "-m", kBosOutOfRange, "-p", "Hello", "--pieces"});
        QVERIFY2(t.code == 0, qPrintable(show(t)));
        QVERIFY2(t.err.contains(warning), qPrintable(show(t)));
        // "Hello" in the tiny Llama-3-style vocabulary, nothing before it.
        QCOMPARE(t.out, QByteArray("39\t\"H\"\n301\t\"el\"\n385\t\"lo\"\n"));
        const Run i = cli({"info", kBosOutOfRange});
        QVERIFY2(i.code == 0, qPrintable(show(i)));
        QVERIFY2(i.err.contains(warning), qPrintable(show(i)));
        QVERIFY2(
            i.out.contains("bos:             none\n") && i.out.contains("add_bos:         no\n"),
            qPrintable(show(i)));
        const Run g = cli({"generate", "-m", kBosOutOfRange, "-p", "Hello", "-n", "0", "--json",
                           "--backend", "cpu", "--no-log"});
        QVERIFY2(g.code == 0, qPrintable(show(g)));
        QVERIFY2(g.err.contains(warning), qPrintable(show(g)));
        QCOMPARE(QJsonDocument::fromJson(g.out).object()["prompt_token_ids"].toArray(),
                 (QJsonArray{39, 301, 385}));
    }

    // The same model in batch: each record ends with "error" and the step;
    // the run itself finishes (it used to take the process down).
    void nan_logits_batch_records_the_error() {
        const QString out = dir_.filePath("nan.jsonl");
        const Run r = cli({"batch", "-m", kNan, "--prompts", prompts_, "-n", "4", "--no-log",
                           "--backend", "cpu", "-q", "-o", out});
        // Every request failed, so the run did (its status was 0).
        QVERIFY2(r.code == 1, qPrintable(show(r)));
        QVERIFY2(r.err.contains("batch: 2 of 2 requests failed (error 2), 0 completed"),
                 qPrintable(show(r)));
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = f.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        for (const QByteArray& line : lines) {
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            QCOMPARE(o["finish_reason"].toString(), QString("error"));
            QVERIFY2(o["message"].toString().contains("output token 0") &&
                         o["message"].toString().contains("not finite"),
                     line.constData());
        }
        const Run b = cli({"bench", "--concurrency", "1", "-p", "8", "-n", "4", "--requests", "2",
                           "--backend", "cpu", "-m", kNan});
        QVERIFY2(b.code == 1, qPrintable(show(b)));
        QVERIFY2(b.err.contains("not finite"), qPrintable(show(b)));
    }

    // The embedding read as F16 over F32 data: NaN logits, then the same
    // sampler crash. Now the same clean error.
    void embedding_type_changed_is_an_error_not_a_crash() {
        const Run r = cli({"generate", "-m", kEmbdF16, "-p", "Once upon a time", "-n", "4",
                           "--no-log", "--backend", "cpu"});
        QVERIFY2(r.code == 1, qPrintable(show(r)));
        QVERIFY2(r.err.contains("not finite"), qPrintable(show(r)));
    }

    // 400 tokenizer tokens, 512 embedding rows: generate refused it, but
    // batch, bench --concurrency and compare aborted with an uncaught
    // std::out_of_range. Now every surface refuses it at load, by key.
    void short_vocabulary_is_refused_everywhere() {
        const QList<QStringList> runs = {
            {"generate", "-m", kShortVocab, "-p", "hi", "-n", "2", "--no-log"},
            {"batch", "-m", kShortVocab, "--prompts", prompts_, "-n", "2", "--no-log", "-q"},
            {"bench", "--concurrency", "1,2", "-p", "8", "-n", "2", "--requests", "2", "-m",
             kShortVocab},
            {"bench", "-p", "8", "-n", "2", "-r", "1", "-m", kShortVocab},
            {"compare", "-m", kData + "/models/stories260K.gguf", "-m", kShortVocab, "-n", "2",
             "-q"},
        };
        for (const QStringList& args : runs) {
            for (const char* backend : wbtest::built_backends({"cpu", "vulkan"})) {
                const Run r = cli(args + QStringList{"--backend", backend});
                QVERIFY2(r.code == 1, qPrintable(args.join(' ') + "\n" + show(r)));
                QVERIFY2(r.err.contains("tokenizer has 400 tokens but token_embd.weight has 512 "
                                        "rows"),
                         qPrintable(args.join(' ') + "\n" + show(r)));
                QVERIFY(!r.err.contains("out_of_range"));
            }
        }
    }

    // A FIFO as the model used to hang forever (open() waits for a writer);
    // a FIFO or /dev/zero as the prompt set hung or grew memory without
    // bound. Each is refused at once, naming what the path is.
    void fifo_and_devices_are_refused_at_once() {
        const QString fifo = dir_.filePath("model.fifo");
        QCOMPARE(::mkfifo(fifo.toUtf8().constData(), 0600), 0);
        const QList<QStringList> model_runs = {
            {"generate", "-m", fifo, "-p", "hi", "--no-log"},
            {"info", fifo},
            {"tokenize", "-m", fifo, "-p", "hi"},
            {"batch", "-m", fifo, "--prompts", prompts_, "--no-log", "-q"},
        };
        for (const QStringList& args : model_runs) {
            const Run r = cli(args, 20000);
            QVERIFY2(r.code == 1, qPrintable(args.join(' ') + "\n" + show(r)));
            QVERIFY2(r.err.contains((fifo + ": not a regular file (it is a FIFO").toUtf8()),
                     qPrintable(show(r)));
        }
        for (const QString& prompts : {fifo, QString("/dev/zero")}) {
            const Run r = cli({"batch", "--prompts", prompts, "--no-log", "-q"}, 20000);
            QVERIFY2(r.code == 1, qPrintable(show(r)));
            QVERIFY2(
                r.err.contains((prompts + ": the prompts file is not a regular file").toUtf8()),
                qPrintable(show(r)));
        }
        const Run t = cli({"compare", "-m", kData + "/models/stories260K.gguf", "-m",
                           kData + "/models/stories260K.gguf", "--text", fifo, "-q"},
                          20000);
        QVERIFY2(t.code == 1 && t.err.contains("not a regular file"), qPrintable(show(t)));
    }

    // stdout on a full disk (/dev/full: every write fails with ENOSPC):
    // generate, info and tokenize exited 0 with their output lost. Now exit
    // status 1 and a sentence naming standard output and the cause.
    void full_stdout_is_an_error() {
        const QList<QStringList> runs = {
            {"generate", "-p", "Once upon a time", "-n", "4", "--no-log", "--backend", "cpu"},
            {"generate", "-p", "Once upon a time", "-n", "4", "--no-log", "--backend", "cpu",
             "--json"},
            {"info", kData + "/models/stories260K.gguf"},
            {"tokenize", "-p", "Hello world"},
        };
        for (const QStringList& args : runs) {
            QProcess p;
            p.setStandardOutputFile("/dev/full");
            p.start(kCli, args);
            QVERIFY(p.waitForFinished(120000));
            const QByteArray err = p.readAllStandardError();
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 1,
                     qPrintable(args.join(' ') + ": code " + QString::number(p.exitCode()) + "\n" +
                                err));
            QVERIFY2(err.contains("standard output: cannot write: No space left on device"),
                     qPrintable(args.join(' ') + "\n" + err));
        }
    }
};

QTEST_GUILESS_MAIN(TestBadInput)
#include "test_bad_input.moc"
