// The host side of dispatch (engine/exec/vk: the recorder, VkModel's replay):
//  - spirv_binding_access reads each binding's readonly/writeonly off real
//    embedded shaders (expected values from the GLSL sources);
//  - HazardTracker, as the recorder uses it, on random op sequences against
//    a brute-force pairwise check: every pair of ops that conflict (read
//    after write, write after write, write after read on one buffer) has a
//    barrier between them, and no barrier is placed where nothing since the
//    previous barrier conflicts;
//  - the forward pass with tracked barriers gives bit-identical logits to
//    one with a barrier after every op, over a prefill and decode steps on
//    random tokens, and the validation layer's synchronization validation
//    (hazards a missing barrier leaves) reports nothing;
//  - a replayed step gives bit-identical logits to a freshly recorded one,
//    also when the attention split (split-K) changes as the span grows.

#include <QtTest>
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exec/vk/hazards.h"
#include "exec/vk/spirv_access.h"
#include "exec/vk/vk_model.h"
#include "gguf/gguf.h"
#include "spirv_all.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::model;

namespace {

const std::string kModel = vk::test::data_dir() + "/models/stories260K.gguf";

const WbSpirvVariant& variant(const std::string& name) {
    for (const WbSpirvVariant& v : kWbSpirvVariants)
        if (name == v.name) return v;
    throw std::runtime_error("no SPIR-V variant " + name);
}

/// "r", "w" or "rw" per binding.
std::string access_string(const std::string& name, uint32_t n) {
    const WbSpirvVariant& v = variant(name);
    std::string s;
    for (const vk::BindingAccess& a : vk::spirv_binding_access(v.words, v.bytes, n)) {
        if (!s.empty()) s += ' ';
        s += std::string(a.reads ? "r" : "") + (a.writes ? "w" : "");
    }
    return s;
}

VkModelOptions options(bool replay, vk::Barriers barriers, bool gpu_kernels = false) {
    VkModelOptions o;
    o.device.validation = vk::test::validation_wanted();
    o.device.sync_validation = vk::test::validation_wanted();
    o.device.pipeline_cache = false;
    o.device.gpu_kernels = gpu_kernels;
    o.replay = replay;
    o.barriers = barriers;
    return o;
}

std::unique_ptr<VkModel> make_model(const VkModelOptions& o, uint32_t n_ctx) {
    const gguf::File file = gguf::File::open(kModel);
    ContextParams cp;
    cp.n_ctx = n_ctx;
    cp.n_seq_max = 2;
    return std::make_unique<VkModel>(file, cp, o);
}

void expect_clean(const VkModel& m) {
    if (!vk::test::validation_wanted()) return;
    const vk::ValidationLog* log = m.validation();
    QVERIFY(log);
    if (log->errors() || log->warnings()) {
        std::string all;
        for (const auto& s : log->messages()) all += s + "\n";
        QFAIL(("validation messages:\n" + all).c_str());
    }
}

/// The same steps on every model: a prefill of `n_prompt` random tokens
/// for two sequences (every row's logits), then `n_steps` decode steps of
/// one token per sequence; returns every step's logits.
std::vector<std::vector<float>> run_steps(VkModel& m, uint32_t n_prompt, int n_steps,
                                          uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(m.hparams().n_vocab) - 1);
    std::vector<std::vector<float>> out;
    Batch b;
    for (int32_t s = 0; s < 2; ++s)
        for (uint32_t i = 0; i < n_prompt; ++i) b.add(tok(rng), int32_t(i), s, true);
    out.emplace_back();
    m.decode(b, out.back());
    for (int step = 0; step < n_steps; ++step) {
        b.clear();
        for (int32_t s = 0; s < 2; ++s) b.add(tok(rng), int32_t(n_prompt) + step, s, true);
        out.emplace_back();
        m.decode(b, out.back());
    }
    return out;
}

bool identical(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].size() != b[i].size() || a[i].empty()) return false;
        if (std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) != 0) return false;
    }
    return true;
}

}  // namespace

class TestVkHost : public QObject {
    Q_OBJECT

  private slots:
    void binding_access_from_spirv() {
        // rms_norm.comp: x, g readonly, y written; the ADD variant writes x
        // in place and reads b (binding 3).
        QCOMPARE(access_string("rms_norm", 3), std::string("r r rw"));
        QCOMPARE(access_string("add_rms_norm", 4), std::string("rw r rw r"));
        // kv_write.comp: sources and slots readonly, the caches written.
        QCOMPARE(access_string("kv_write_f16", 5), std::string("r r rw r rw"));
        // Quant weights: binding 0 declared twice (uint16 and uint32 views
        // in w_bytes.glsl), both readonly.
        QCOMPARE(access_string("matvec_row_q4_0_u16", 3), std::string("r r rw"));
        // A binding the module does not declare counts as read and written.
        QCOMPARE(access_string("rms_norm", 4), std::string("r r rw rw"));
        const uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 vk::spirv_binding_access(junk, sizeof junk, 1));
    }

    void hazard_tracker_never_misses_a_dependency() {
        // Random ops over 5 buffers, each reading and writing random
        // subsets; barriers placed as Recorder does (before an op that
        // conflicts with the ops since the last barrier).
        std::mt19937_64& rng = vk::test::rng();
        std::uniform_int_distribution<int> coin(0, 3);
        for (int trial = 0; trial < 200; ++trial) {
            const int n_ops = 2 + trial % 30;
            std::vector<std::vector<uint64_t>> R(n_ops), W(n_ops);
            for (int i = 0; i < n_ops; ++i) {
                for (uint64_t b = 1; b <= 5; ++b) {
                    if (coin(rng) == 0) R[i].push_back(b);
                    if (coin(rng) == 0) W[i].push_back(b);
                }
            }
            vk::HazardTracker t;
            std::vector<int> barrier_before(n_ops, 0);  // 1: a barrier right before op i
            for (int i = 0; i < n_ops; ++i) {
                if (t.conflicts(R[i], W[i])) {
                    t.barrier();
                    barrier_before[i] = 1;
                }
                t.add(R[i], W[i]);
            }
            auto has = [](const std::vector<uint64_t>& v, uint64_t x) {
                return std::find(v.begin(), v.end(), x) != v.end();
            };
            auto conflict = [&](int i, int j) {  // op j after op i
                for (uint64_t b = 1; b <= 5; ++b) {
                    if (has(W[i], b) && (has(R[j], b) || has(W[j], b))) return true;
                    if (has(R[i], b) && has(W[j], b)) return true;
                }
                return false;
            };
            for (int j = 0; j < n_ops; ++j) {
                int last_barrier = 0;  // ops before this index are ordered before op j
                for (int k = 0; k <= j; ++k)
                    if (barrier_before[k]) last_barrier = k;
                for (int i = 0; i < j; ++i) {
                    if (conflict(i, j) && i >= last_barrier) {
                        QFAIL(qPrintable(QString("trial %1: ops %2 and %3 conflict with no "
                                                 "barrier between them")
                                             .arg(trial)
                                             .arg(i)
                                             .arg(j)));
                    }
                }
                // Never a barrier that nothing needs: op j conflicts with
                // an op since the previous barrier.
                if (barrier_before[j]) {
                    int prev = 0;
                    for (int k = 0; k < j; ++k)
                        if (barrier_before[k]) prev = k;
                    bool needed = false;
                    for (int i = prev; i < j; ++i) needed = needed || conflict(i, j);
                    QVERIFY2(needed, qPrintable(QString("trial %1: barrier before op %2 is not "
                                                        "needed")
                                                    .arg(trial)
                                                    .arg(j)));
                }
            }
        }
    }

    void tracked_barriers_match_full_barriers_data() {
        QTest::addColumn<bool>("gpu_kernels");
        QTest::newRow("the device's own choice") << false;
        QTest::newRow("GPU kernel choices") << true;
    }

    void tracked_barriers_match_full_barriers() {
        // Same random steps with barriers only between dependent ops and
        // with one after every op (no replay, so every step is recorded
        // with its barriers): identical logits, fewer barriers, and the
        // synchronization validation finds no hazard.
        QFETCH(bool, gpu_kernels);
        const uint64_t seed = vk::test::test_seed();
        auto tracked = make_model(options(false, vk::Barriers::Tracked, gpu_kernels), 256);
        auto full = make_model(options(false, vk::Barriers::Full, gpu_kernels), 256);
        const auto a = run_steps(*tracked, 20, 6, seed);
        const auto b = run_steps(*full, 20, 6, seed);
        QVERIFY(identical(a, b));
        // Tracked really tracks: some barriers (dependent ops exist), and
        // fewer than one after every op.
        QVERIFY(tracked->barriers_recorded() > 0);
        QVERIFY2(tracked->barriers_recorded() < full->barriers_recorded(),
                 qPrintable(QString("tracked %1, full %2")
                                .arg(tracked->barriers_recorded())
                                .arg(full->barriers_recorded())));
        expect_clean(*tracked);
        expect_clean(*full);
    }

    void compiles_beside_recording_match_compiles_in_caller() {
        // Pipelines compiled on worker threads while the first steps are
        // recorded (their commands held back until submit) against each
        // pipeline compiled in the caller on first use: identical logits,
        // validation clean (its thread-safety checks included).
        const uint64_t seed = vk::test::test_seed();
        qputenv("WB_VK_PIPELINE_THREADS", "0");
        auto in_caller = make_model(options(false, vk::Barriers::Tracked, false), 256);
        qunsetenv("WB_VK_PIPELINE_THREADS");
        auto beside = make_model(options(false, vk::Barriers::Tracked, false), 256);
        const auto a = run_steps(*in_caller, 20, 4, seed);
        const auto b = run_steps(*beside, 20, 4, seed);
        QVERIFY(identical(a, b));
        QCOMPARE(in_caller->pipeline_stats().compile_threads, 0u);
        QVERIFY(beside->pipeline_stats().compile_threads >= 1);
        QCOMPARE(beside->pipeline_stats().created, in_caller->pipeline_stats().created);
        expect_clean(*in_caller);
        expect_clean(*beside);
    }

    void replayed_steps_match_recorded_steps_data() {
        QTest::addColumn<bool>("gpu_kernels");
        QTest::addColumn<uint32_t>("n_prompt");
        QTest::newRow("the device's own choice") << false << 20u;
        // Group attention with split-K on lavapipe: the split changes as
        // the span passes 256 cells, so some decode steps must record anew.
        QTest::newRow("GPU kernel choices, split changes") << true << 250u;
    }

    void replayed_steps_match_recorded_steps() {
        QFETCH(bool, gpu_kernels);
        QFETCH(uint32_t, n_prompt);
        const uint64_t seed = vk::test::test_seed();
        auto replay = make_model(options(true, vk::Barriers::Tracked, gpu_kernels), 640);
        auto fresh = make_model(options(false, vk::Barriers::Tracked, gpu_kernels), 640);
        replay->set_profiling(false);
        const auto a = run_steps(*replay, n_prompt, 10, seed);
        const auto b = run_steps(*fresh, n_prompt, 10, seed);
        QVERIFY(identical(a, b));
        // The steps were replayed, not all recorded: count them with the
        // host-phase profile on a second run from an empty cache.
        replay->seq_rm(0);
        replay->seq_rm(1);
        replay->set_profiling(true);
        replay->clear_profile();
        const auto c = run_steps(*replay, n_prompt, 10, seed);
        fresh->seq_rm(0);
        fresh->seq_rm(1);
        const auto d = run_steps(*fresh, n_prompt, 10, seed);
        QVERIFY(identical(c, d));
        QCOMPARE(replay->host_times().calls, uint64_t(11));
        QVERIFY2(replay->host_times().recorded < 11,
                 qPrintable(QString("%1 of 11 steps recorded").arg(replay->host_times().recorded)));
        qInfo("%llu of 11 steps recorded, the rest replayed",
              static_cast<unsigned long long>(replay->host_times().recorded));
        expect_clean(*replay);
        expect_clean(*fresh);
    }
};

QTEST_GUILESS_MAIN(TestVkHost)
#include "test_vk_host.moc"
