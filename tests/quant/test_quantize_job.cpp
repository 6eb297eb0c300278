// The quantize job (app/quantize), the one path the GUI's quantize dialog
// and `workbench-cli quantize` take: its output equals the files llama.cpp's
// tooling wrote (SHA-256 of tests/data/golden/quant's stories260K Q8_0 and
// Q4_0 copies, from gguf-py's plain quantization, so --pure), progress
// reports every tensor in order with its fraction and name, cancel stops it
// leaving no file, and each failure has its kind.

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/file_hash.h"
#include "quantize/quantize_job.h"

using wb::quantize::Error;
using wb::quantize::ErrorKind;
using wb::quantize::Progress;
using wb::quantize::QuantizeJob;
using wb::quantize::Request;

namespace {

using wbtest::file_sha256;

const std::string kGolden = wbtest::data_dir() + "/golden/quant/";
const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";

// The SHA-256 llama.cpp's copy `name` has (golden/quant/SHA256SUMS).
QByteArray golden_sha256(const char* name) {
    QFile sums(QString::fromStdString(kGolden + "SHA256SUMS"));
    if (!sums.open(QIODevice::ReadOnly)) return {};
    for (const QByteArray& l : sums.readAll().split('\n'))
        if (l.endsWith(QByteArray("  ") + name)) return l.left(64);
    return {};
}

Request request(const std::string& out, wb::quant::Target t) {
    Request r;
    r.input = kModel;
    r.output = out;
    r.target = t;
    r.options.pure = true;
    return r;
}

// The kind `job` fails with (-1 when it does not fail).
int failure_kind(QuantizeJob& job, const wb::quantize::ProgressFn& progress = {}) {
    try {
        job.run(progress);
    } catch (const Error& e) {
        return static_cast<int>(e.kind());
    }
    return -1;
}

}  // namespace

class QuantizeJobTest : public QObject {
    Q_OBJECT
  private slots:
    void writesLlamaCppBytes_data();
    void writesLlamaCppBytes();
    void cancelLeavesNoFile();
    void failuresAreTyped();
    void nonFiniteSourceIsRefused();
};

void QuantizeJobTest::writesLlamaCppBytes_data() {
    QTest::addColumn<int>("target");
    QTest::addColumn<QString>("golden");
    QTest::newRow("q8_0") << int(wb::quant::Target::Q8_0) << "stories260K-q8_0.gguf";
    QTest::newRow("q4_0") << int(wb::quant::Target::Q4_0) << "stories260K-q4_0.gguf";
}

void QuantizeJobTest::writesLlamaCppBytes() {
    QFETCH(int, target);
    QFETCH(QString, golden);
    const QByteArray want = golden_sha256(golden.toUtf8().constData());
    QCOMPARE(want.size(), 64);
    QTemporaryDir d;
    const std::string out = d.filePath("copy.gguf").toStdString();
    QuantizeJob job(request(out, static_cast<wb::quant::Target>(target)));
    std::vector<Progress> seen;
    const wb::quant::QuantizeReport rep = job.run([&](const Progress& p) { seen.push_back(p); });
    QCOMPARE(file_sha256(out), want);
    // One report per tensor, in output order, before it is written.
    QCOMPARE(seen.size(), rep.tensors.size());
    QCOMPARE(seen.size(), size_t(48));
    for (size_t i = 0; i < seen.size(); ++i) {
        QCOMPARE(seen[i].index, i);
        QCOMPARE(seen[i].count, seen.size());
        QCOMPARE(seen[i].fraction, double(i) / double(seen.size()));
        QCOMPARE(seen[i].plan.name, rep.tensors[i].name);
    }
    QCOMPARE(rep.output_bytes, uint64_t(std::filesystem::file_size(out)));
}

void QuantizeJobTest::cancelLeavesNoFile() {
    QTemporaryDir d;
    const std::string out = d.filePath("cancelled.gguf").toStdString();
    QuantizeJob job(request(out, wb::quant::Target::Q4_0));
    size_t calls = 0;
    // Cancelled from inside the run (as the dialog's Cancel does from the
    // GUI thread): it stops before the next tensor.
    QCOMPARE(failure_kind(job,
                          [&](const Progress& p) {
                              ++calls;
                              if (p.index == 2) job.cancel();
                          }),
             int(ErrorKind::Cancelled));
    QCOMPARE(calls, size_t(3));
    QVERIFY(!std::filesystem::exists(out));
    // Cancelled before it starts: nothing is read or written.
    QuantizeJob early(request(out, wb::quant::Target::Q4_0));
    early.cancel();
    QCOMPARE(failure_kind(early), int(ErrorKind::Cancelled));
    QVERIFY(!std::filesystem::exists(out));
}

void QuantizeJobTest::failuresAreTyped() {
    QTemporaryDir d;
    const std::string out = d.filePath("out.gguf").toStdString();
    {
        Request r = request(out, wb::quant::Target::Q8_0);
        r.input = d.filePath("missing.gguf").toStdString();
        QuantizeJob job(r);
        QCOMPARE(failure_kind(job), int(ErrorKind::InputFile));
    }
    {
        // A real GGUF cut short inside its tensor infos: malformed input.
        const std::string cut = d.filePath("cut.gguf").toStdString();
        QFile in(QString::fromStdString(kModel));
        QVERIFY(in.open(QIODevice::ReadOnly));
        QFile f(QString::fromStdString(cut));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(in.read(4096));
        f.close();
        Request r = request(out, wb::quant::Target::Q8_0);
        r.input = cut;
        QuantizeJob job(r);
        QCOMPARE(failure_kind(job), int(ErrorKind::InputFormat));
    }
    {
        QuantizeJob job(
            request(d.filePath("no/such/folder/out.gguf").toStdString(), wb::quant::Target::Q8_0));
        QCOMPARE(failure_kind(job), int(ErrorKind::Output));
    }
    {
        // Over its own input: a private copy, so a broken guard overwrites
        // the copy, never the fixture every other test reads.
        const std::string self = d.filePath("self.gguf").toStdString();
        QVERIFY(QFile::copy(QString::fromStdString(kModel), QString::fromStdString(self)));
        Request r = request(self, wb::quant::Target::Q8_0);
        r.input = self;
        QuantizeJob job(r);
        QCOMPARE(failure_kind(job), int(ErrorKind::Request));
        QCOMPARE(file_sha256(self), file_sha256(kModel));  // the input is untouched
    }
    QVERIFY(!std::filesystem::exists(out));
}

// Sources whose values or block scales are NaN or infinite (tests/data/repro:
// NaN norms, a NaN dmin in every Q4_K block, a Q4_K tensor whose type field
// says F16) were quantized into models that compute nothing but NaN. Now
// the job fails as malformed input, naming the tensor, its type, the first
// bad block and its row, and leaves no output.
void QuantizeJobTest::nonFiniteSourceIsRefused() {
    QTemporaryDir d;
    const std::string out = d.filePath("out.gguf").toStdString();
    const std::string repro = wbtest::data_dir() + "/repro/";
    struct Case {
        const char* file;
        const char* expect;
    };
    const Case cases[] = {
        {"nan-norms-q4_0.gguf", "tensor 'output_norm.weight': F32 block 0 (row 0, value 0) is NaN"},
        {"nan-dmin-qwen2-q4_k_m.gguf",
         "tensor 'blk.0.attn_k.weight': Q4_K block 0 (row 0, values 0..255) decodes to NaN: its "
         "values or scales are damaged"},
        {"type-swapped-llama3.gguf",
         "tensor 'blk.0.attn_q.weight': F16 block 23 (row 0, value 23)"},
    };
    for (const Case& c : cases) {
        Request r = request(out, wb::quant::Target::Q8_0);
        r.input = repro + c.file;
        QuantizeJob job(r);
        try {
            job.run();
            QFAIL(c.file);
        } catch (const Error& e) {
            QCOMPARE(int(e.kind()), int(ErrorKind::InputFormat));
            QVERIFY2(QString(e.what()).contains(c.expect), e.what());
            QVERIFY2(QString(e.what()).contains("nothing was written"), e.what());
        }
        QVERIFY(!std::filesystem::exists(out));
    }
}

QTEST_MAIN(QuantizeJobTest)
#include "test_quantize_job.moc"
