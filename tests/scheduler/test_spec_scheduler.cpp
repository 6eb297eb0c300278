// Speculative decoding in the scheduler, on real models: greedy output is
// token for token that of plain decoding (n-gram drafts and a draft model:
// the same file loaded a second time, and the tiny llama3's own Q4_0
// written here with quantize_file), on stories260K (also against llama.cpp's
// greedy tokens, tests/data/golden) and the tiny architecture models of
// tests/data/golden2, on the CPU reference, the CPU executor and Vulkan
// (lavapipe). After each run the target's KV pool equals the plain run's
// (tests/common/kv_state.h), although drafts were rejected on the way.

#include <QTemporaryDir>
#include <QtTest>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/backends.h"
#include "common/data_dir.h"
#include "common/golden2.h"
#include "common/greedy_golden.h"
#include "common/kv_state.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "quant/quantize_model.h"
#include "scheduler/scheduler.h"
#include "speculative/draft_model_drafter.h"

using namespace wb;
using namespace std::chrono_literals;
using scheduler::Event;
using scheduler::EventType;
using scheduler::FinishReason;
using scheduler::Request;
using scheduler::Scheduler;
using scheduler::SchedulerParams;
using Kind = scheduler::SpeculativeParams::Kind;

namespace {

const std::string kStories = wbtest::data_dir() + "/models/stories260K.gguf";

struct Run {
    Event fin;
    wbtest::State kv;
};

std::unique_ptr<model::Model> load(const std::string& path, const std::string& backend) {
    model::LoadOptions opts;
    opts.backend = backend;
    opts.context.n_ctx = 512;
    opts.context.n_seq_max = 1;
    opts.context.kv_type = model::KvType::F32;
    // Small blocks: drafts often cross a block end and are cut back inside
    // it (the boundary block published full, then truncated).
    opts.context.kv_block_size = 4;
    return model::load_model(path, opts);
}

/// One request alone in a fresh one-slot scheduler over a fresh model.
Run run(const std::string& path, const std::string& backend, Request r, Kind kind, uint32_t k = 4,
        const std::string& draft_path = "") {
    const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(gguf::File::open(path));
    auto target = load(path, backend);
    std::unique_ptr<model::Model> draft;
    std::mutex mu;
    Run out;
    {
        Scheduler s(*target, vocab, SchedulerParams{1, 4, 32, 64}, [&](const Event& e) {
            std::lock_guard lock(mu);
            if (e.type == EventType::Finished) out.fin = e;
        });
        if (kind == Kind::DraftModel) {
            draft = load(draft_path.empty() ? path : draft_path, backend);
            s.set_draft_model(std::make_shared<speculative::DraftModelDrafter>(*draft, "self"));
        }
        r.speculative.kind = kind;
        r.speculative.k = k;
        s.start();
        const auto sub = s.submit(r);
        if (!sub.accepted) qFatal("refused: %s", sub.message.c_str());
        if (!s.wait_idle(300s)) qFatal("timeout");
    }
    out.kv = wbtest::state(target->kv_cells());
    return out;
}

Request greedy(std::vector<int32_t> prompt, int32_t max_tokens) {
    Request r;
    r.prompt_tokens = std::move(prompt);
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    r.sampling.temperature = 0.0f;
    return r;
}

}  // namespace

class TestSpecScheduler : public QObject {
    Q_OBJECT

    /// Plain vs n-gram vs draft model on one prompt: same tokens, same pool.
    /// Returns the n-gram run's stats (drafted, accepted) summed into `sum`.
    void same_as_plain(const std::string& path, const std::string& backend, const Request& r,
                       int* drafted, int* accepted, std::vector<int32_t>* out = nullptr) {
        const Run plain = run(path, backend, r, Kind::None);
        const Run ngram = run(path, backend, r, Kind::Ngram);
        const Run draft = run(path, backend, r, Kind::DraftModel);
        QCOMPARE(ngram.fin.output_tokens, plain.fin.output_tokens);
        QCOMPARE(draft.fin.output_tokens, plain.fin.output_tokens);
        QCOMPARE(ngram.fin.output, plain.fin.output);
        QCOMPARE(ngram.fin.reason, plain.fin.reason);
        QVERIFY(ngram.kv == plain.kv);
        QVERIFY(draft.kv == plain.kv);
        QCOMPARE(plain.fin.speculative.target_passes, 0);  // no stats without speculation
        QCOMPARE(ngram.fin.speculative.drafter, std::string("ngram"));
        QCOMPARE(draft.fin.speculative.drafter, std::string("self"));
        if (plain.fin.output_tokens.size() >= 3) {  // room for a draft before max_tokens
            QVERIFY(draft.fin.speculative.verify_passes > 0);
            QVERIFY(draft.fin.speculative.accepted > 0);
        }
        QCOMPARE(draft.fin.speculative.shared_passes, 0);
        // Every output token but the prefill's came from a decode pass,
        // one per pass plus the kept drafts (tokens past the end dropped).
        QVERIFY(1 + ngram.fin.speculative.target_passes + ngram.fin.speculative.accepted >=
                int(ngram.fin.output_tokens.size()));
        QVERIFY(draft.fin.speculative.target_passes < int(draft.fin.output_tokens.size()));
        *drafted += ngram.fin.speculative.drafted;
        *accepted += ngram.fin.speculative.accepted;
        if (out) *out = plain.fin.output_tokens;
    }

    void stories(const std::string& backend, bool exact) {
        int drafted = 0, accepted = 0;
        for (const auto& g : wbtest::read_greedy_golden()) {
            std::vector<int32_t> plain;
            same_as_plain(kStories, backend, greedy(g.prompt_ids, 48), &drafted, &accepted, &plain);
            if (exact) QCOMPARE(plain, g.generated);
        }
        qInfo("%s: n-gram drafted %d, accepted %d", backend.c_str(), drafted, accepted);
        QVERIFY(accepted > 0);
        QVERIFY(drafted > accepted);  // rejections happened, and left no trace
    }

    void tiny(const std::string& backend) {
        for (const std::string& m : wbtest::golden2_models()) {
            const auto prompts = wbtest::read_golden2(m);
            int drafted = 0, accepted = 0;
            same_as_plain(wbtest::golden2_model(m), backend, greedy(prompts.at(0).prompt_ids, 32),
                          &drafted, &accepted);
            qInfo("%s %s: n-gram drafted %d, accepted %d", m.c_str(), backend.c_str(), drafted,
                  accepted);
        }
    }

  private slots:
    void stories_cpu_ref() { stories("cpu-ref", true); }
    void stories_cpu() { stories("cpu", false); }
    void stories_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        stories("vulkan", false);
    }
    void tiny_models_cpu() { tiny("cpu"); }
    void tiny_models_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        tiny("vulkan");
    }

    void sampling_rollbacks_leave_the_pool_of_the_emitted_tokens() {
        // With sampling (temperature 0.8) the greedy draft is often rejected.
        // The pool at the end must be the one a plain run leaves that had
        // all of it as its prompt: prompt + output but the last token.
        const auto g = wbtest::read_greedy_golden().at(1);
        for (Kind kind : {Kind::Ngram, Kind::DraftModel}) {
            int rejected = 0;
            for (uint64_t seed = 1; seed <= 4; ++seed) {
                Request r = greedy(g.prompt_ids, 40);
                r.sampling.temperature = 0.8f;
                r.sampling.seed = seed;
                const Run spec = run(kStories, "cpu-ref", r, kind);
                const auto& out = spec.fin.output_tokens;
                QCOMPARE(out.size(), size_t{40});
                rejected += spec.fin.speculative.drafted - spec.fin.speculative.accepted;
                std::vector<int32_t> all = g.prompt_ids;
                all.insert(all.end(), out.begin(), out.end() - 1);
                const Run plain = run(kStories, "cpu-ref", greedy(all, 1), Kind::None);
                QVERIFY(spec.kv == plain.kv);
            }
            QVERIFY(rejected > 0);
        }
    }

    void draft_is_a_lower_bit_quant_of_the_target() {
        // The target's own Q4_0 (written here by quantize_file) as its
        // draft: other logits, so other drafts, same output.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto prompts = wbtest::read_golden2("llama3");
        const std::string target = wbtest::golden2_model("llama3");
        const std::string q4 = dir.filePath("llama3-q4_0.gguf").toStdString();
        quant::quantize_file(target, q4, quant::Target::Q4_0);
        for (const std::string backend : wbtest::built_backends({"cpu", "vulkan"})) {
            const Request r = greedy(prompts.at(0).prompt_ids, 32);
            const Run plain = run(target, backend, r, Kind::None);
            const Run draft = run(target, backend, r, Kind::DraftModel, 4, q4);
            QCOMPARE(draft.fin.output_tokens, plain.fin.output_tokens);
            QVERIFY(draft.kv == plain.kv);
            QVERIFY(draft.fin.speculative.verify_passes > 0);
            qInfo("llama3 F16 with its Q4_0 draft (%s): drafted %d, accepted %d", backend.c_str(),
                  draft.fin.speculative.drafted, draft.fin.speculative.accepted);
        }
    }

    void ends_inside_a_draft() {
        // max_tokens and EOS cut a verified draft: the tokens after the end
        // are dropped and the pool is what plain decoding leaves.
        const auto g = wbtest::read_greedy_golden().at(0);
        for (int32_t max_tokens : {1, 2, 7, 13}) {
            int d = 0, a = 0;
            std::vector<int32_t> out;
            same_as_plain(kStories, "cpu-ref", greedy(g.prompt_ids, max_tokens), &d, &a, &out);
            QCOMPARE(out,
                     std::vector<int32_t>(g.generated.begin(), g.generated.begin() + max_tokens));
        }
        // Stop strings from the golden text, ending at various points of a pass.
        for (const char* stop :
             {"Lily", "loved", "outside", "park", "saw", "red", "ball", "with"}) {
            Request r = greedy(g.prompt_ids, 48);
            r.ignore_eos = false;
            r.stop = {stop};
            int d = 0, a = 0;
            std::vector<int32_t> out;
            same_as_plain(kStories, "cpu-ref", r, &d, &a, &out);
            QVERIFY(out.size() < g.generated.size());  // it did stop early
        }
    }
};

QTEST_GUILESS_MAIN(TestSpecScheduler)
#include "test_spec_scheduler.moc"
