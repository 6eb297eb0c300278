// The quantized variant files on the Vulkan engine (lavapipe in CI): they
// load, their first-step logits match the independent float64 pass on the
// dequantized weights (golden `logits_f64_dequant`) within 1e-3 with an F32
// KV cache, and they generate that pass's 48 greedy tokens. Then a compare
// run on Vulkan scores perplexity within 0.1% of the float64 figures.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <cmath>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/json_fixtures.h"
#include "compare/compare.h"
#include "compare/generation.h"
#include "loader/load.h"

namespace {

const std::string kData = wbtest::data_dir();
const std::string kQuant = kData + "/golden/quant/";

using wbtest::ids;
using wbtest::read_json;
using wbtest::read_jsonl;

std::unique_ptr<wb::model::Model> load_vk(const std::string& path,
                                          const wb::model::ContextParams& cp) {
    wb::model::LoadOptions o;
    o.backend = "vulkan";
    o.context = cp;
    return wb::model::load_model(path, o);
}

}  // namespace

class TestCompareVk : public QObject {
    Q_OBJECT

  private slots:
    void variants_on_vulkan_data() {
        QTest::addColumn<QString>("variant");
        QTest::newRow("f16") << "f16";
        QTest::newRow("q8_0") << "q8_0";
        QTest::newRow("q4_0") << "q4_0";
    }
    void variants_on_vulkan() {
        QFETCH(QString, variant);
        const std::string base = kQuant + "stories260K-" + variant.toStdString();
        wb::model::ContextParams cp;
        cp.n_ctx = 512;
        cp.kv_type = wb::model::KvType::F32;
        auto m = load_vk(base + ".gguf", cp);
        qInfo("backend: %s", m->backend_name().c_str());

        for (int id : {0, 5}) {
            const QJsonObject g = read_json(base + "_first_logits_" + std::to_string(id) + ".json");
            const std::vector<int32_t> toks = ids(g["prompt_token_ids"]);
            wb::model::Batch b;
            for (size_t i = 0; i < toks.size(); ++i)
                b.add(toks[i], int32_t(i), 0, i + 1 == toks.size());
            std::vector<float> logits;
            m->seq_rm(0);
            m->decode(b, logits);
            m->seq_rm(0);
            const QJsonArray want = g["logits_f64_dequant"].toArray();
            QCOMPARE(logits.size(), size_t(want.size()));
            double worst = 0;
            for (int i = 0; i < want.size(); ++i) {
                worst = std::max(worst, std::abs(double(logits[size_t(i)]) - want[i].toDouble()));
            }
            qInfo("prompt %d: max |logit - f64_dequant| = %.2e", id, worst);
            QVERIFY(worst < 1e-3);
        }
        for (const QJsonObject& r : read_jsonl(base + "_greedy.jsonl")) {
            const auto run = wb::compare::greedy_generate(*m, ids(r["prompt_token_ids"]), 48);
            QCOMPARE(run.tokens, ids(r["generated_token_ids_f64_dequant"]));
        }
    }

    void compare_on_vulkan() {
        wb::compare::CompareOptions o;
        o.models = {kData + "/models/stories260K.gguf", kQuant + "stories260K-q4_0.gguf"};
        o.text_file = kData + "/golden/stories260K_ppl_text.txt";
        o.ppl_ctx = 128;
        o.prompts = {"Once upon a time"};
        o.n_predict = 16;
        const auto rep = wb::compare::run_compare(o, load_vk);
        const QJsonObject f64 =
            read_json(kQuant + "stories260K_quant_ppl_kld.json")["independent_float64_ppl"]
                .toObject();
        const double want_a = f64["f32"].toObject()["exact_f32kv"].toDouble();
        const double want_b = f64["q4_0"].toObject()["exact_f32kv"].toDouble();
        const auto& a = rep.models[0];
        const auto& b = rep.models[1];
        qInfo("Vulkan: PPL A %.6f (%.6f), Q4_0 %.6f (%.6f), KLD mean %.6f, top-1 %.4f", a.ppl->ppl,
              want_a, b.ppl->ppl, want_b, b.kld->mean, b.kld->same_top_share());
        QVERIFY(std::abs(a.ppl->ppl / want_a - 1) < 1e-3);
        QVERIFY(std::abs(b.ppl->ppl / want_b - 1) < 1e-3);
        QVERIFY(b.kld->mean > 0.109778 / 2 && b.kld->mean < 0.109778 * 2);
        QVERIFY(b.decode_tps.median > 0);
        QVERIFY(a.backend != "cpu");
        // Device memory: at least the weights as stored plus the KV cache;
        // the Q4_0 copy needs less than the F32 model.
        QVERIFY(a.device_bytes && b.device_bytes);
        QVERIFY(*a.device_bytes >= a.weight_bytes + a.kv_bytes);
        QVERIFY(*b.device_bytes < *a.device_bytes);
        QCOMPARE(b.backend, a.backend);
    }
};

QTEST_GUILESS_MAIN(TestCompareVk)
#include "test_compare_vk.moc"
