// The memory planner against what the Vulkan engine really allocates
// (vk::Context's accounting by purpose) on lavapipe: every tiny model of
// tests/data/golden2 and stories260K, loaded with a context and run through
// a full ubatch, must be within 5% of plan_memory for the same settings,
// purpose by purpose and in total; so must a TinyLlama-1.1B-shape Q4_K_M
// file written by the synthesizer (real matrix sizes and llama-quantize's
// tensor type mix, random values).

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/golden2.h"
#include "common/short_run.h"
#include "gguf/gguf.h"
#include "model/memory_plan.h"
#include "model/vk_model.h"
#include "quant/synth_model.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::model;

class TestMemoryPlanVk : public QObject {
    Q_OBJECT

  private:
    /// plan_memory for (m's model, cp, shape) against what `m` allocated,
    /// purpose by purpose and in total, within 5%; validation log clean.
    static void expect_plan_matches(VkModel& m, const ContextParams& cp, const PlanShape& shape) {
        const MemoryNeed plan =
            plan_memory(m.desc(), cp, shape, vk::Kernels::config_for(m.device_info()));
        const vk::MemoryReport r = m.device_memory_report();
        auto got = [&](vk::Purpose p) { return double(r.bytes[static_cast<int>(p)]); };
        const struct {
            const char* what;
            double planned, allocated;
        } rows[] = {
            {"weights", double(plan.weights), got(vk::Purpose::Weights)},
            {"kv cache", double(plan.kv_cache), got(vk::Purpose::KvCache)},
            {"activations", double(plan.activations), got(vk::Purpose::Activations)},
            {"staging", double(plan.staging), got(vk::Purpose::Staging)},
            {"total", double(plan.total()), double(r.total())},
        };
        for (const auto& row : rows) {
            const double rel = std::fabs(row.planned - row.allocated) / row.allocated;
            qInfo("%-12s planned %12.0f allocated %12.0f (%.2f%%)", row.what, row.planned,
                  row.allocated, 100.0 * rel);
            QVERIFY2(rel <= 0.05, qPrintable(QString("%1: planned %2, allocated %3")
                                                 .arg(row.what)
                                                 .arg(row.planned)
                                                 .arg(row.allocated)));
        }
        if (vk::test::validation_wanted()) {
            const vk::ValidationLog* log = m.validation();
            QVERIFY(log && log->errors() == 0);
        }
    }

  private slots:
    void plan_matches_engine_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("n_seq");
        QTest::addColumn<bool>("f16");
        for (const std::string& m : wbtest::golden2_models()) {
            QTest::newRow(m.c_str())
                << QString::fromStdString(wbtest::golden2_model(m)) << 1 << false;
        }
        const QString stories =
            QString::fromStdString(wbtest::data_dir() + "/models/stories260K.gguf");
        QTest::newRow("stories260K 4 sequences f16 KV") << stories << 4 << true;
        QTest::newRow("gemma2 2 sequences f16 KV")
            << QString::fromStdString(wbtest::golden2_model("gemma2")) << 2 << true;
    }

    void plan_matches_engine() {
        QFETCH(QString, path);
        QFETCH(int, n_seq);
        QFETCH(bool, f16);
        const gguf::File f = gguf::File::open(path.toStdString());
        ContextParams cp;
        cp.n_ctx = 512;
        cp.n_seq_max = uint32_t(n_seq);
        cp.kv_type = f16 ? KvType::F16 : KvType::F32;
        VkModelOptions o;
        o.device.validation = vk::test::validation_wanted();
        o.device.pipeline_cache = false;
        VkModel m(f, cp, o);
        // The planner's ubatch: 512 tokens (here: one sequence filling the
        // cache) with one logits row per sequence.
        Batch b;
        for (int32_t i = 0; i < 512; ++i) b.add(i % 100 + 1, i, 0, i == 511);
        std::vector<float> logits;
        m.decode(b, logits);
        m.seq_rm(0);
        b.clear();
        for (int32_t s = 0; s < n_seq; ++s)
            b.add(1, 0, s, true);  // a decode step of every sequence
        m.decode(b, logits);

        PlanShape shape;
        shape.n_ubatch = 512;
        expect_plan_matches(m, cp, shape);
    }

    void plan_matches_engine_on_tinyllama_shape() {
        // TinyLlama-1.1B's shape (n_embd 2048, n_ff 5632, 32 heads over 4
        // KV heads, 32000 tokens) in Q4_K_M: the mix puts Q6_K and Q4_K (and
        // F32 norms) side by side, as a real download. 4 of its 22 layers
        // keep synthesis and the forward pass short in CI (every per-layer
        // term is the same for each layer); WB_PLAN_FULL_SHAPE=1 runs all 22,
        // the sanitizer suite's short run one.
        const quant::SynthShape* found = quant::find_synth_shape("tinyllama-1.1b");
        QVERIFY(found != nullptr);
        quant::SynthShape s = *found;
        if (qEnvironmentVariableIntValue("WB_PLAN_FULL_SHAPE") == 0)
            s.n_layer = wbtest::short_run() ? 1 : 4;
        QTemporaryDir dir;
        const std::string path = dir.filePath("tinyllama-shape-q4_k_m.gguf").toStdString();
        quant::synth_model(s, quant::parse_target("Q4_K_M"), path);
        const gguf::File f = gguf::File::open(path);
        ContextParams cp;
        cp.n_ctx = 512;
        cp.n_seq_max = 2;
        cp.kv_type = KvType::F16;
        VkModelOptions o;
        o.device.validation = vk::test::validation_wanted();
        o.device.pipeline_cache = false;
        VkModel m(f, cp, o);
        // The plan is for 64-token ubatches while a sequence may hold every
        // cell: prefill sequence 0 in 64-token ubatches until it fills the
        // cache (the last one attends over all 512 cells), then one decode
        // step of both sequences.
        Batch b;
        std::vector<float> logits;
        for (int32_t u = 0; u < 8; ++u) {
            b.clear();
            for (int32_t i = 64 * u; i < 64 * (u + 1); ++i)
                b.add(i * 7 % 31000 + 300, i, 0, i % 64 == 63);
            m.decode(b, logits);
        }
        m.seq_rm(0);
        b.clear();
        b.add(1, 0, 0, true);
        b.add(1, 0, 1, true);
        m.decode(b, logits);
        PlanShape shape;
        shape.n_ubatch = 64;
        expect_plan_matches(m, cp, shape);
    }
};

QTEST_GUILESS_MAIN(TestMemoryPlanVk)
#include "test_memory_plan_vk.moc"
