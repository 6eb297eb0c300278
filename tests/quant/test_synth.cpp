// Random-weight models in real shapes (quant/synth_model.h):
//  - the engine reads back the published hyperparameters of each shape
//    (the values below are copied from each model's config.json, not from
//    the code under test);
//  - a synthesized Q4_K_M file has the tensor types that `quantize` (whose
//    choices equal llama-quantize's, test_quant_mix) gives the synthesized
//    F16 file of the same shape, on a tied qwen2 shape whose 896-wide rows
//    need the K-quant fallbacks;
//  - the weights have the asked standard deviation, norms are 1, and the
//    same seed gives the same bytes whatever the thread count;
//  - the model loads and decodes on the CPU reference with finite logits.
// Shapes are shrunk (--layers, --vocab) to keep the test quick.

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "exec/ref/ref_model.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "model/hparams.h"
#include "quant/synth_model.h"

namespace quant = wb::quant;
using namespace wb;

namespace {

quant::SynthShape shrunk(const std::string& name, uint32_t layers, uint32_t vocab) {
    const quant::SynthShape* s = quant::find_synth_shape(name);
    if (!s) qFatal("no shape %s", name.c_str());
    quant::SynthShape x = *s;
    x.n_layer = layers;
    x.n_vocab = vocab;
    return x;
}

QByteArray bytes(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
    return f.readAll();
}

}  // namespace

class TestSynth : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string path(const char* name) const { return dir_.filePath(name).toStdString(); }

  private slots:
    void published_hyperparameters_data() {
        QTest::addColumn<QString>("shape");
        QTest::addColumn<QString>("arch");
        QTest::addColumn<int>("n_embd");
        QTest::addColumn<int>("n_head");
        QTest::addColumn<int>("n_head_kv");
        QTest::addColumn<int>("n_ff");
        QTest::addColumn<double>("rope_base");
        QTest::addColumn<bool>("tied");
        // config.json: hidden_size, num_attention_heads, num_key_value_heads,
        // intermediate_size, rope_theta, tie_word_embeddings.
        QTest::newRow("TinyLlama-1.1B") << "tinyllama"
                                        << "llama" << 2048 << 32 << 4 << 5632 << 10000.0 << false;
        QTest::newRow("Llama-2-7B") << "7b"
                                    << "llama" << 4096 << 32 << 32 << 11008 << 10000.0 << false;
        QTest::newRow("Mistral-7B") << "mistral"
                                    << "llama" << 4096 << 32 << 8 << 14336 << 10000.0 << false;
        QTest::newRow("Llama-3-8B") << "8b"
                                    << "llama" << 4096 << 32 << 8 << 14336 << 500000.0 << false;
        QTest::newRow("Qwen2.5-0.5B") << "qwen2.5-0.5b"
                                      << "qwen2" << 896 << 14 << 2 << 4864 << 1000000.0 << true;
        QTest::newRow("Qwen2.5-1.5B") << "1.5b"
                                      << "qwen2" << 1536 << 12 << 2 << 8960 << 1000000.0 << true;
    }

    void published_hyperparameters() {
        QFETCH(QString, shape);
        QFETCH(QString, arch);
        QFETCH(int, n_embd);
        QFETCH(int, n_head);
        QFETCH(int, n_head_kv);
        QFETCH(int, n_ff);
        QFETCH(double, rope_base);
        QFETCH(bool, tied);
        // One layer and a small vocabulary: the F16 file stays small.
        const quant::SynthShape s = shrunk(shape.toStdString(), 1, 300);
        const std::string out = path("hp.gguf");
        quant::synth_model(s, quant::Target::F16, out);
        const gguf::File f = gguf::File::open(out);
        const model::HParams hp = model::HParams::from_gguf(f);
        QCOMPARE(QString::fromStdString(hp.arch), arch);
        QCOMPARE(int(hp.n_embd), n_embd);
        QCOMPARE(int(hp.n_head), n_head);
        QCOMPARE(int(hp.n_head_kv), n_head_kv);
        QCOMPARE(int(hp.n_ff), n_ff);
        QCOMPARE(double(hp.rope_freq_base), rope_base);
        QCOMPARE(hp.tied_embeddings, tied);
        QCOMPARE(int(hp.n_vocab), 300);
        QCOMPARE(f.get_int("general.file_type").value_or(-1), int64_t{1});
    }

    void q4_k_m_types_equal_quantize_of_f16() {
        const quant::SynthShape s = shrunk("qwen2.5-0.5b", 2, 512);
        const std::string f16 = path("q-f16.gguf"), q = path("q-q4km.gguf");
        quant::synth_model(s, quant::Target::F16, f16);
        const quant::QuantizeReport synth = quant::synth_model(s, quant::Target::Q4_K_M, q);
        const std::vector<quant::TensorPlan> want = quant::plan_file(f16, quant::Target::Q4_K_M);
        QCOMPARE(synth.tensors.size(), want.size());
        const gguf::File f = gguf::File::open(q);
        QCOMPARE(f.tensors().size(), want.size());
        bool saw_fallback = false;
        for (size_t i = 0; i < want.size(); ++i) {
            const gguf::TensorInfo& t = f.tensor(want[i].name);
            QVERIFY2(t.type == want[i].dst_type,
                     qPrintable(QString::fromStdString(want[i].name + ": " +
                                                       ggml::type_name(t.type) + ", quantize " +
                                                       ggml::type_name(want[i].dst_type))));
            saw_fallback |= t.type == static_cast<uint32_t>(ggml::Type::Q5_0);
        }
        QVERIFY2(saw_fallback, "896-wide rows should fall back from Q4_K to Q5_0");
        QCOMPARE(f.get_int("general.file_type").value_or(-1), int64_t{15});
        QCOMPARE(uint64_t(bytes(q).size()), synth.output_bytes);
    }

    void values_and_determinism() {
        const quant::SynthShape s = shrunk("tinyllama", 1, 300);
        quant::SynthOptions one, two, other;
        one.threads = 1;
        two.threads = 2;
        other.seed = 7;
        const std::string a = path("d1.gguf"), b = path("d2.gguf"), c = path("d3.gguf");
        quant::synth_model(s, quant::Target::Q8_0, a, {}, one);
        quant::synth_model(s, quant::Target::Q8_0, b, {}, two);
        quant::synth_model(s, quant::Target::Q8_0, c, {}, other);
        QVERIFY(bytes(a) == bytes(b));
        QVERIFY(bytes(a) != bytes(c));

        const gguf::File f = gguf::File::open(a);
        const gguf::TensorInfo& w = f.tensor("blk.0.ffn_up.weight");
        std::vector<float> v(w.n_elements());
        ggml::dequantize_row(w.type, w.data, v.data(), v.size());
        double sum = 0, sq = 0;
        for (float x : v) {
            sum += double(x);
            sq += double(x) * double(x);
        }
        const double mean = sum / double(v.size());
        const double sd = std::sqrt(sq / double(v.size()) - mean * mean);
        QVERIFY2(std::fabs(mean) < 1e-4, qPrintable(QString::number(mean)));
        QVERIFY2(std::fabs(sd - 0.02) < 0.02 * 0.02, qPrintable(QString::number(sd)));
        const gguf::TensorInfo& n = f.tensor("blk.0.attn_norm.weight");
        QCOMPARE(n.type, uint32_t(ggml::Type::F32));
        std::vector<float> ones(n.n_elements());
        ggml::dequantize_row(n.type, n.data, ones.data(), ones.size());
        for (float x : ones) QCOMPARE(x, 1.0f);
    }

    void decodes_on_the_cpu_reference() {
        const quant::SynthShape s = shrunk("qwen2.5-0.5b", 2, 512);
        const std::string out = path("run.gguf");
        quant::synth_model(s, quant::Target::Q4_0, out);
        const gguf::File f = gguf::File::open(out);
        model::ContextParams cp;
        cp.n_ctx = 64;
        model::RefModel m(f, cp);
        model::Batch batch;
        for (int32_t i = 0; i < 8; ++i) batch.add(3 + i * 40, i, 0, i == 7);
        std::vector<float> logits;
        m.decode(batch, logits);
        QCOMPARE(logits.size(), size_t{512});
        for (float x : logits) QVERIFY(std::isfinite(x));
    }

    void bad_shapes() {
        QVERIFY(quant::find_synth_shape("gpt-5") == nullptr);
        QVERIFY(quant::find_synth_shape("TinyLlama") != nullptr);
        quant::SynthShape s = shrunk("tinyllama", 1, 300);
        s.n_head = 30;  // does not divide 2048
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 quant::synth_model(s, quant::Target::F16, path("bad.gguf")));
        QVERIFY(!QFile::exists(QString::fromStdString(path("bad.gguf"))));
    }
};

QTEST_GUILESS_MAIN(TestSynth)
#include "test_synth.moc"
