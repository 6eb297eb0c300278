// The memory planner against what the Vulkan engine really allocates
// (vk::Context's accounting by purpose) on lavapipe: every tiny model of
// tests/data/golden2 and stories260K, loaded with a context and run through
// a full ubatch, must be within 5% of plan_memory for the same settings,
// purpose by purpose and in total.

#include <QtTest>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/golden2.h"
#include "gguf/gguf.h"
#include "model/memory_plan.h"
#include "model/vk_model.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::model;

class TestMemoryPlanVk : public QObject {
    Q_OBJECT

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
        PlanShape shape;
        shape.n_ubatch = 512;
        Batch b;
        for (int32_t i = 0; i < 512; ++i) b.add(i % 100 + 1, i, 0, i == 511);
        std::vector<float> logits;
        m.decode(b, logits);
        m.seq_rm(0);
        b.clear();
        for (int32_t s = 0; s < n_seq; ++s)
            b.add(1, 0, s, true);  // a decode step of every sequence
        m.decode(b, logits);

        const MemoryNeed plan =
            plan_memory(m.desc(), cp, shape, vk::Kernels::config_for(m.device_info()));
        const vk::MemoryReport r = m.memory_report();
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
};

QTEST_GUILESS_MAIN(TestMemoryPlanVk)
#include "test_memory_plan_vk.moc"
