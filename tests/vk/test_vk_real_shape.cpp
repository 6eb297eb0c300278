// Greedy decoding of a model in TinyLlama-1.1B's layer shape (n_embd 2048,
// 32 heads, 4 KV heads, head_dim 64, n_ff 5632) on lavapipe (validation
// layer on) against the CPU reference: 16 greedy tokens identical, in F16,
// Q8_0, Q4_0 and Q4_K_M. The model is written by the test with
// quant::synth_model (random weights, llama-quantize's tensor types); one
// layer and an 8192-token vocabulary keep CI time low while every matrix
// has the real model's row lengths (the shapes the CPU-device mat x vec
// kernels are tuned for). The prompt is one 8-token prefill ubatch, then
// 15 single-token decode steps.

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "model/cpu_model.h"
#include "model/vk_model.h"
#include "quant/synth_model.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::model;

namespace {

constexpr uint32_t kVocab = 8192;

int argmax(const std::vector<float>& v, size_t first, size_t n) {
    return static_cast<int>(std::max_element(v.begin() + first, v.begin() + first + n) - v.begin() -
                            first);
}

/// The prompt as one batch, then greedy decode steps: `n` ids in all.
std::vector<int32_t> greedy(Model& m, const std::vector<int32_t>& prompt, int n,
                            std::vector<float>* all_logits) {
    Batch b;
    for (size_t i = 0; i < prompt.size(); ++i)
        b.add(prompt[i], int32_t(i), 0, i + 1 == prompt.size());
    std::vector<float> logits;
    std::vector<int32_t> out;
    int32_t pos = int32_t(prompt.size());
    for (int s = 0; s < n; ++s) {
        m.decode(b, logits);
        all_logits->insert(all_logits->end(), logits.begin(), logits.end());
        const int32_t tok = argmax(logits, logits.size() - kVocab, kVocab);
        out.push_back(tok);
        b.clear();
        b.add(tok, pos++, 0, true);
    }
    return out;
}

}  // namespace

class TestVkRealShape : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

  private slots:
    void greedy_matches_cpu_reference_data() {
        QTest::addColumn<int>("target");  // quant::Target
        QTest::newRow("f16") << int(quant::Target::F16);
        QTest::newRow("q8_0") << int(quant::Target::Q8_0);
        QTest::newRow("q4_0") << int(quant::Target::Q4_0);
        QTest::newRow("q4_k_m") << int(quant::Target::Q4_K_M);
    }

    void greedy_matches_cpu_reference() {
        QFETCH(int, target);
        QVERIFY(dir_.isValid());
        const quant::SynthShape* tiny = quant::find_synth_shape("tinyllama-1.1b");
        QVERIFY(tiny);
        quant::SynthShape shape = *tiny;
        QCOMPARE(shape.n_embd, 2048u);
        QCOMPARE(shape.n_ff, 5632u);
        shape.n_layer = 1;
        shape.n_vocab = kVocab;
        const uint64_t seed = vk::test::test_seed();
        qInfo("random seed %llu (rerun with WB_TEST_SEED=<seed>)",
              static_cast<unsigned long long>(seed));
        quant::SynthOptions so;
        so.seed = seed;
        const std::string path = dir_.filePath(QString("m%1.gguf").arg(target)).toStdString();
        quant::synth_model(shape, quant::Target(target), path, {}, so);

        const gguf::File file = gguf::File::open(path);
        ContextParams cp;
        cp.n_ctx = 64;
        VkModelOptions o;
        o.device.validation = vk::test::validation_wanted();
        o.device.pipeline_cache = false;
        VkModel gpu(file, cp, o);
        CpuModel cpu(file, cp);
        QCOMPARE(gpu.hparams().n_vocab, kVocab);

        std::mt19937 rng{static_cast<uint32_t>(seed)};
        std::uniform_int_distribution<int32_t> tok(0, int32_t(kVocab) - 1);
        std::vector<int32_t> prompt(8);
        for (int32_t& t : prompt) t = tok(rng);

        std::vector<float> lg, lc;
        const auto ids_gpu = greedy(gpu, prompt, 16, &lg);
        const auto ids_cpu = greedy(cpu, prompt, 16, &lc);
        QCOMPARE(lg.size(), lc.size());
        const double err = vk::test::rel_error(lg, std::vector<double>(lc.begin(), lc.end()));
        qInfo("max rel. logit error vs CPU reference: %g", err);
        QCOMPARE(ids_gpu, ids_cpu);
        QVERIFY2(err <= 1e-3, qPrintable(QString("rel error %1").arg(err)));
        if (vk::test::validation_wanted()) {
            const vk::ValidationLog* log = gpu.validation();
            QVERIFY(log);
            QCOMPARE(log->errors(), size_t(0));
        }
    }
};

QTEST_GUILESS_MAIN(TestVkRealShape)
#include "test_vk_real_shape.moc"
