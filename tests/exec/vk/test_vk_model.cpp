// The Vulkan forward pass on lavapipe (validation layer on) against
// llama.cpp's golden outputs for stories260K (tests/data/golden, see its
// README): greedy 48-token generations give exactly llama.cpp's ids,
// first-step top-10 logits within 1e-3 of `top10_f32_kv` (F32 KV cache) and
// 2e-2 of `top10` (F16), full first-step logits within 1e-3, identical
// logits on repeated runs, sequences batched together give the same
// tokens as alone, and a weight split across bindings changes nothing.

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "common/greedy_golden.h"
#include "common/json_fixtures.h"
#include "exec/cpu/cpu_exec_model.h"
#include "exec/ref/ref_model.h"
#include "exec/vk/vk_model.h"
#include "ggml/fp16.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/quantize_model.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::model;

namespace {

const std::string kModel = vk::test::data_dir() + "/models/stories260K.gguf";

// llama.cpp's greedy records (tests/common/greedy_golden.h).
using Golden = wbtest::GreedyGolden;

int argmax(const float* v, size_t n) {
    return static_cast<int>(std::max_element(v, v + n) - v);  // first max: ties to the lower id
}

/// Device options of every test: validation as wanted, no pipeline cache on disk.
VkModelOptions test_options() {
    VkModelOptions o;
    o.device.validation = vk::test::validation_wanted();
    o.device.pipeline_cache = false;
    return o;
}

std::unique_ptr<VkModel> make_model(KvType kv, uint32_t n_seq = 1, uint64_t binding_limit = 0,
                                    uint32_t n_ctx = 512) {
    const gguf::File file = gguf::File::open(kModel);
    ContextParams cp;
    cp.n_ctx = n_ctx;
    cp.n_seq_max = n_seq;
    cp.kv_type = kv;
    VkModelOptions o = test_options();
    o.device.binding_limit = binding_limit;
    return std::make_unique<VkModel>(file, cp, o);
}

/// Prompt as one batch (logits of the last token), then greedy steps.
/// Returns the generated ids; `first` gets the first-step logits.
std::vector<int32_t> greedy(Model& m, const std::vector<int32_t>& prompt, int n,
                            std::vector<float>* first = nullptr, int32_t seq = 0) {
    Batch b;
    for (size_t i = 0; i < prompt.size(); ++i)
        b.add(prompt[i], int32_t(i), seq, i + 1 == prompt.size());
    std::vector<float> logits;
    m.decode(b, logits);
    if (first) *first = logits;
    std::vector<int32_t> out;
    int32_t pos = int32_t(prompt.size());
    for (int s = 0; s < n; ++s) {
        const int32_t tok = argmax(logits.data(), logits.size());
        out.push_back(tok);
        if (s + 1 == n) break;
        b.clear();
        b.add(tok, pos++, seq, true);
        m.decode(b, logits);
    }
    return out;
}

/// Runs `b` on both models, then `steps - 1` greedy decode steps of
/// sequence 0 (the CPU reference's argmax over its last logits row);
/// returns the largest relative error of the Vulkan logits against the CPU
/// reference's over all `steps` calls (infinity on a size mismatch).
double max_error_vs_cpu(Model& gpu, Model& cpu, Batch b, int steps) {
    const size_t n_vocab = gpu.hparams().n_vocab;
    std::vector<float> lg, lc;
    double worst = 0.0;
    for (int step = 0; step < steps; ++step) {
        gpu.decode(b, lg);
        cpu.decode(b, lc);
        if (lg.size() != lc.size() || lc.size() < n_vocab) return INFINITY;
        worst = std::max(worst, vk::test::rel_error(lg, std::vector<double>(lc.begin(), lc.end())));
        const int32_t next = argmax(lc.data() + lc.size() - n_vocab, n_vocab);
        const int32_t pos = b.pos.back() + 1;
        b.clear();
        b.add(next, pos, 0, true);
    }
    return worst;
}

void expect_clean(const VkModel& m) {
    if (!vk::test::validation_wanted()) return;
    const vk::ValidationLog* log = m.validation();
    QVERIFY(log);
    if (log->errors()) {
        std::string all;
        for (const auto& s : log->messages()) all += s + "\n";
        QFAIL(("validation errors:\n" + all).c_str());
    }
}

}  // namespace

class TestVkModel : public QObject {
    Q_OBJECT
    std::vector<Golden> golden_;

  private slots:
    void initTestCase() {
        golden_ = wbtest::read_greedy_golden();
        QCOMPARE(golden_.size(), size_t(6));
    }

    void greedy_f32_kv_matches_llama_cpp() {
        auto m = make_model(KvType::F32);
        qInfo("device: %s", m->backend_name().c_str());
        for (const Golden& g : golden_) {
            std::vector<float> first;
            const auto ids = greedy(*m, g.prompt_ids, 48, &first);
            QVERIFY2(ids == g.generated,
                     qPrintable(QString("prompt %1: generated ids differ").arg(g.id)));
            for (const auto& [tok, logit] : g.top10_f32_kv) {
                const double d = std::abs(double(first[size_t(tok)]) - logit);
                QVERIFY2(d <= 1e-3, qPrintable(QString("prompt %1 token %2: %3 vs %4")
                                                   .arg(g.id)
                                                   .arg(tok)
                                                   .arg(first[size_t(tok)])
                                                   .arg(logit)));
            }
            m->seq_rm(0);
        }
        expect_clean(*m);
    }

    void greedy_f16_kv_matches_llama_cpp() {
        auto m = make_model(KvType::F16);
        for (const Golden& g : golden_) {
            std::vector<float> first;
            const auto ids = greedy(*m, g.prompt_ids, 48, &first);
            for (const auto& [tok, logit] : g.top10) {
                const double d = std::abs(double(first[size_t(tok)]) - logit);
                QVERIFY2(d <= 2e-2, qPrintable(QString("prompt %1 token %2: %3 vs %4")
                                                   .arg(g.id)
                                                   .arg(tok)
                                                   .arg(first[size_t(tok)])
                                                   .arg(logit)));
            }
            // Exact ids; a divergence is accepted only at a numerical tie
            // (golden README: top1-top2 gap below our F16 logit tolerance).
            for (size_t s = 0; s < ids.size(); ++s) {
                if (ids[s] == g.generated[s]) continue;
                QVERIFY2(g.margin[s] < 2e-2,
                         qPrintable(QString("prompt %1 step %2: %3 vs %4 (gap %5)")
                                        .arg(g.id)
                                        .arg(s)
                                        .arg(ids[s])
                                        .arg(g.generated[s])
                                        .arg(g.margin[s])));
                qInfo("prompt %d: numerical tie at step %zu (gap %g), compared up to it", g.id, s,
                      g.margin[s]);
                break;
            }
            m->seq_rm(0);
        }
        expect_clean(*m);
    }

    void full_first_logits_f32_kv() {
        auto m = make_model(KvType::F32);
        for (int which : {0, 5}) {
            const QJsonObject o =
                wbtest::read_json(vk::test::data_dir() + "/golden/stories260K_first_logits_" +
                                  std::to_string(which) + ".json");
            const auto prompt = wbtest::ids(o["prompt_token_ids"]);
            const QJsonArray want = o["logits_f32_kv"].toArray();
            std::vector<float> first;
            greedy(*m, prompt, 1, &first);
            QCOMPARE(first.size(), size_t(want.size()));
            double worst = 0.0;
            for (qsizetype i = 0; i < want.size(); ++i)
                worst = std::max(worst, std::abs(double(first[size_t(i)]) - want[i].toDouble()));
            qInfo("prompt %d: max |logit - llama.cpp f32-kv| = %g", which, worst);
            QVERIFY(worst <= 1e-3);
            m->seq_rm(0);
        }
        expect_clean(*m);
    }

    void repeated_runs_identical() {
        auto m = make_model(KvType::F32);
        const auto& prompt = golden_[5].prompt_ids;  // the long one: several attention tiles
        std::vector<float> a, b;
        greedy(*m, prompt, 4, &a);
        m->seq_rm(0);
        greedy(*m, prompt, 4, &b);
        QVERIFY(a == b);
        auto m2 = make_model(KvType::F32);
        std::vector<float> c;
        greedy(*m2, prompt, 4, &c);
        QVERIFY(a == c);
        expect_clean(*m);
    }

    void sequences_batched_together_match_alone() {
        const Golden& A = golden_[0];
        const Golden& B = golden_[1];
        const int steps = 24;
        auto m = make_model(KvType::F32, 2);
        // Prefill both prompts in ONE ubatch (different lengths, interleaved
        // sequences), then decode both sequences' tokens together.
        Batch b;
        const size_t n = std::max(A.prompt_ids.size(), B.prompt_ids.size());
        for (size_t i = 0; i < n; ++i) {
            if (i < A.prompt_ids.size())
                b.add(A.prompt_ids[i], int32_t(i), 0, i + 1 == A.prompt_ids.size());
            if (i < B.prompt_ids.size())
                b.add(B.prompt_ids[i], int32_t(i), 1, i + 1 == B.prompt_ids.size());
        }
        std::vector<float> logits;
        m->decode(b, logits);
        const size_t V = m->hparams().n_vocab;
        QCOMPARE(logits.size(), 2 * V);
        // Output order is batch order: A's last token comes before B's.
        std::vector<int32_t> got_a, got_b;
        int32_t pa = int32_t(A.prompt_ids.size()), pb = int32_t(B.prompt_ids.size());
        for (int s = 0; s < steps; ++s) {
            const int32_t ta = argmax(logits.data(), V), tb = argmax(logits.data() + V, V);
            got_a.push_back(ta);
            got_b.push_back(tb);
            b.clear();
            b.add(tb, pb++, 1, true);  // B first this time: order must not matter
            b.add(ta, pa++, 0, true);
            m->decode(b, logits);
            std::vector<float> swapped(logits.begin() + long(V), logits.end());
            swapped.insert(swapped.end(), logits.begin(), logits.begin() + long(V));
            logits = swapped;  // back to [A, B]
        }
        QVERIFY(std::equal(got_a.begin(), got_a.end(), A.generated.begin()));
        QVERIFY(std::equal(got_b.begin(), got_b.end(), B.generated.begin()));
        // And each alone on a fresh model gives the same.
        auto solo = make_model(KvType::F32);
        QVERIFY(greedy(*solo, A.prompt_ids, steps) == got_a);
        solo->seq_rm(0);
        QVERIFY(greedy(*solo, B.prompt_ids, steps) == got_b);
        expect_clean(*m);
    }

    void weights_split_across_bindings() {
        // 8 KiB per binding: token_embd/output (128 KiB) become 16 pieces;
        // 64 cells keep one layer's KV cache (64 * 32 * 4 bytes) in range.
        auto m = make_model(KvType::F32, 1, 8192, 64);
        const Golden& g = golden_[0];
        QVERIFY(greedy(*m, g.prompt_ids, 48) == g.generated);
        expect_clean(*m);
    }

    void quantized_models_match_cpu_reference_data() {
        QTest::addColumn<int>("target");
        QTest::addColumn<bool>("words");
        QTest::newRow("f16") << int(quant::Target::F16) << false;
        QTest::newRow("q8_0 u16") << int(quant::Target::Q8_0) << false;
        QTest::newRow("q8_0 u32 words") << int(quant::Target::Q8_0) << true;
        QTest::newRow("q4_0 u16") << int(quant::Target::Q4_0) << false;
        QTest::newRow("q4_0 u32 words") << int(quant::Target::Q4_0) << true;
    }

    void quantized_models_match_cpu_reference() {
        // The same quantized file on both backends: the CPU reference
        // dequantizes to f32 on load, the shaders dequantize on the fly.
        // Prefill (mat x mat) then decode steps (mat x vec).
        QFETCH(int, target);
        QFETCH(bool, words);
        QTemporaryDir dir;
        const std::string path = dir.filePath("q.gguf").toStdString();
        quant::quantize_file(kModel, path, quant::Target(target));
        const gguf::File file = gguf::File::open(path);
        ContextParams cp;
        cp.n_ctx = 128;
        cp.kv_type = KvType::F32;  // an exact cache: the kernels are compared, not the KV type
        VkModelOptions o = test_options();
        o.device.force_word_access = words;
        VkModel gpu(file, cp, o);
        RefModel cpu(file, cp);
        const auto& prompt = golden_[1].prompt_ids;  // 22 tokens
        Batch b;
        for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], int32_t(i), 0, true);
        const double worst = max_error_vs_cpu(gpu, cpu, b, 6);
        qInfo("max rel. logit error vs CPU reference: %g", worst);
        QVERIFY(worst <= 1e-3);
        expect_clean(gpu);
    }

    void mixed_weight_types_match_cpu_reference() {
        // attn_v and ffn_up stored as F16, the rest F32: Q/K/V and gate/up
        // cannot be stacked into one weight, so each projection is its own
        // dispatch writing its columns of the fused outputs.
        QTemporaryDir dir;
        const std::string path = dir.filePath("mixed.gguf").toStdString();
        {
            const gguf::File src = gguf::File::open(kModel);
            gguf::Writer w(path);
            for (const auto& [key, value] : src.metadata()) w.set_kv(key, value);
            auto to_f16 = [](const gguf::TensorInfo& t) {
                return t.name.find("attn_v.") != std::string::npos ||
                       t.name.find("ffn_up.") != std::string::npos;
            };
            for (const gguf::TensorInfo& t : src.tensors())
                w.add_tensor(t.name, to_f16(t) ? uint32_t(ggml::Type::F16) : t.type, t.n_dims,
                             t.ne);
            w.write_header();
            for (const gguf::TensorInfo& t : src.tensors()) {
                QCOMPARE(t.type, uint32_t(ggml::Type::F32));
                if (!to_f16(t)) {
                    w.write_tensor_data(t.data, t.nbytes);
                    continue;
                }
                std::vector<uint16_t> h(t.n_elements());  // [n_rows, ne0] binary16
                for (size_t i = 0; i < h.size(); ++i) {
                    float v;
                    std::memcpy(&v, t.data + i * 4, 4);
                    h[i] = ggml::fp32_to_fp16(v);
                }
                w.write_tensor_data(h.data(), h.size() * 2);
            }
            w.finish();
        }
        const gguf::File file = gguf::File::open(path);
        ContextParams cp;
        cp.n_ctx = 128;
        cp.kv_type = KvType::F32;  // an exact cache: the kernels are compared, not the KV type
        VkModel gpu(file, cp, test_options());
        gpu.set_profiling(true);  // counts the dispatches
        RefModel cpu(file, cp);
        const auto& prompt = golden_[1].prompt_ids;
        Batch b;
        for (size_t i = 0; i < prompt.size(); ++i)
            b.add(prompt[i], int32_t(i), 0, i + 1 == prompt.size());
        const double worst = max_error_vs_cpu(gpu, cpu, b, 6);
        qInfo("max rel. logit error vs CPU reference: %g", worst);
        QVERIFY(worst <= 1e-4);
        // 6 calls x (5 layers x (Q, K, V, output, gate, up, down) + output)
        // matrix products: none stacked.
        uint64_t mat_calls = 0;
        for (const model::ProfileRow& r : gpu.profile().rows())
            if (r.op.rfind("mul_mat", 0) == 0) mat_calls += r.calls;
        if (!gpu.profile().empty()) QCOMPARE(mat_calls, uint64_t(6 * (5 * 7 + 1)));
        expect_clean(gpu);
    }

    // One NaN in a norm weight or in Q/K's weights makes every attention
    // score of layer 0 NaN. The CPU reference's logits are all NaN then (and
    // generate says the logits are not finite); Vulkan used to return
    // ordinary logits (the NaN scores got weight 0), so a broken file looked
    // fine on the GPU only. Now Vulkan shows NaN exactly where the CPU does.
    void nan_weights_show_as_on_cpu_reference_data() {
        QTest::addColumn<QString>("tensor");
        for (const char* t : {"blk.0.attn_norm.weight", "blk.0.attn_q.weight",
                              "blk.0.attn_k.weight", "blk.3.ffn_norm.weight", "output_norm.weight"})
            QTest::newRow(t) << QString(t);
    }
    void nan_weights_show_as_on_cpu_reference() {
        QFETCH(QString, tensor);
        QTemporaryDir dir;
        const std::string path = dir.filePath("nan.gguf").toStdString();
        {
            QFile in(QString::fromStdString(kModel));
            QVERIFY(in.open(QIODevice::ReadOnly));
            QByteArray bytes = in.readAll();
            const gguf::File src = gguf::File::open(kModel);
            const gguf::TensorInfo& t = src.tensor(tensor.toStdString());
            QCOMPARE(t.type, uint32_t(ggml::Type::F32));
            const float nan = NAN;
            std::memcpy(bytes.data() + src.data_offset() + t.offset + 3 * 4, &nan, 4);
            QFile out(QString::fromStdString(path));
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(bytes);
        }
        const gguf::File file = gguf::File::open(path);
        ContextParams cp;
        cp.n_ctx = 64;
        cp.kv_type = KvType::F32;  // an exact cache: the kernels are compared, not the KV type
        VkModel gpu(file, cp, test_options());
        RefModel cpu(file, cp);
        const auto& prompt = golden_[0].prompt_ids;
        for (Model* m : {static_cast<Model*>(&gpu), static_cast<Model*>(&cpu)}) {
            Batch b;
            for (size_t i = 0; i < prompt.size(); ++i)
                b.add(prompt[i], int32_t(i), 0, i + 1 == prompt.size());
            std::vector<float> logits;
            m->decode(b, logits);
            const auto n_nan =
                std::count_if(logits.begin(), logits.end(), [](float x) { return std::isnan(x); });
            QVERIFY2(n_nan == std::ptrdiff_t(logits.size()),
                     qPrintable(QString("%1: %2 of %3 logits NaN")
                                    .arg(QString::fromStdString(m->backend_name()))
                                    .arg(n_nan)
                                    .arg(logits.size())));
        }
        expect_clean(gpu);
    }

    void kernel_choices_match_cpu_reference_at_depth_data() {
        QTest::addColumn<bool>("gpu_kernels");
        QTest::newRow("the device's own choice") << false;
        QTest::newRow("GPU kernel choices") << true;
    }

    void kernel_choices_match_cpu_reference_at_depth() {
        // A 600-token context: prefill in three ubatches of 200 (mat x mat,
        // attention over growing spans), then decode steps over ~600 cells.
        // With GPU kernel choices on lavapipe the decode attention is split
        // into chunks (split-K) and merged, as on a GPU with few heads.
        QFETCH(bool, gpu_kernels);
        const gguf::File file = gguf::File::open(kModel);
        ContextParams cp;
        cp.n_ctx = 1024;
        cp.kv_type = KvType::F32;  // an exact cache: the kernels are compared, not the KV type
        VkModelOptions o = test_options();
        o.device.gpu_kernels = gpu_kernels;
        VkModel gpu(file, cp, o);
        RefModel cpu(file, cp);
        std::vector<int32_t> prompt;  // [600] the golden prompts, one after another
        while (prompt.size() < 600)
            for (const Golden& g : golden_)
                prompt.insert(prompt.end(), g.prompt_ids.begin(), g.prompt_ids.end());
        prompt.resize(600);
        std::vector<float> lg, lc;
        Batch b;
        for (size_t i = 0; i < 400; ++i) {  // the first two ubatches: no outputs
            b.add(prompt[i], int32_t(i), 0, false);
            if (b.size() == 200) {
                gpu.decode(b, lg);
                cpu.decode(b, lc);
                b.clear();
            }
        }
        for (size_t i = 400; i < prompt.size(); ++i)
            b.add(prompt[i], int32_t(i), 0, i + 1 == prompt.size());
        const double worst = max_error_vs_cpu(gpu, cpu, b, 7);  // the last ubatch, 6 steps
        qInfo("max rel. logit error vs CPU reference at depth 600: %g", worst);
        QVERIFY(worst <= 1e-4);
        expect_clean(gpu);
    }

    void memory_report_by_purpose() {
        auto m = make_model(KvType::F16);
        const model::MemoryReport r = m->memory_report();  // through the Model interface
        QVERIFY(r.on_device);
        QVERIFY(r.weights >= 1185376 - 100000);  // ~ file's tensor bytes
        // 2 * 5 layers * 512 cells * 32 values * 2 bytes
        QCOMPARE(r.kv_cache, uint64_t(2 * 5 * 512 * 32 * 2));
    }

    // The busy share's device time: two timestamps around each step's
    // command buffer. A step's device time is positive and no longer than
    // the host's wall time around decode() (submit to fence); the CPU
    // backends report none.
    void device_time_of_each_step() {
        auto m = make_model(KvType::F16);
        QVERIFY(m->last_device_ms() < 0);  // nothing ran yet
        Batch b;
        for (int32_t i = 0; i < 24; ++i) b.add(1 + i, i, 0, i == 23);
        std::vector<float> logits;
        for (int step = 0; step < 3; ++step) {
            const auto t0 = std::chrono::steady_clock::now();
            m->decode(b, logits);
            const double wall =
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count();
            const double dev = m->last_device_ms();
            qInfo("step %d: device %.3f ms, host wall %.3f ms", step, dev, wall);
            QVERIFY2(dev > 0.0, qPrintable(QString::number(dev)));
            QVERIFY2(dev <= wall, qPrintable(QString("%1 > %2").arg(dev).arg(wall)));
            const int32_t pos = b.pos.back() + 1;
            b.clear();
            b.add(7, pos, 0, true);  // then single-token steps (replayed command buffers)
        }
        ContextParams cp;
        cp.n_ctx = 64;
        CpuExecModel cpu(gguf::File::open(vk::test::data_dir() + "/models/stories260K.gguf"), cp);
        b.clear();
        b.add(1, 0, 0, true);
        cpu.decode(b, logits);
        QVERIFY(cpu.last_device_ms() < 0);
        expect_clean(*m);
    }

    void bad_batch_leaves_cache_unchanged() {
        auto m = make_model(KvType::F32);
        Batch b;
        b.add(1, 0, 0, true);
        b.add(9999, 1, 0, true);  // token outside the vocabulary
        std::vector<float> logits;
        const uint32_t free_before = m->n_free_cells();
        bool threw = false;
        try {
            m->decode(b, logits);
        } catch (const DecodeError&) {
            threw = true;
        }
        QVERIFY(threw);
        QCOMPARE(m->n_free_cells(), free_before);
        QVERIFY(
            greedy(*m, golden_[0].prompt_ids, 8) ==
            std::vector<int32_t>(golden_[0].generated.begin(), golden_[0].generated.begin() + 8));
        expect_clean(*m);
    }
};

QTEST_GUILESS_MAIN(TestVkModel)
#include "test_vk_model.moc"
