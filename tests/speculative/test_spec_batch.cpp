// Speculative decoding inside continuous batching, on real models: four
// slots, requests with n-gram drafts, with a draft model (the same file
// loaded again) and without speculation, all in the same ubatches. At
// temperature 0 every request's tokens are those of the same requests run
// without speculation, and when all have finished the KV pool holds the
// same content (tests/common/kv_state.h: block ids and the LRU order depend
// on the steps at which sequences crossed block ends, so they are left
// out) and no cached block that the requests' real token lists do not
// account for. stories260K and tiny architecture models of
// tests/data/golden2, CPU executor and Vulkan (lavapipe); a sampled run; a
// pool small enough to preempt speculating requests.

#include <QtTest>
#include <chrono>
#include <functional>
#include <map>
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
#include "scheduler/scheduler.h"
#include "speculative/draft_model_drafter.h"

using namespace wb;
using namespace std::chrono_literals;
using scheduler::Event;
using scheduler::EventType;
using scheduler::Request;
using scheduler::Scheduler;
using scheduler::SchedulerParams;
using Kind = scheduler::SpeculativeParams::Kind;

namespace {

const std::string kStories = wbtest::data_dir() + "/models/stories260K.gguf";

std::unique_ptr<model::Model> load(const std::string& path, const std::string& backend,
                                   uint32_t n_ctx) {
    model::LoadOptions opts;
    opts.backend = backend;
    opts.context.n_ctx = n_ctx;
    opts.context.n_seq_max = 4;
    opts.context.kv_type = model::KvType::F32;
    // Small blocks: drafts often cross a block end and are cut back inside it.
    opts.context.kv_block_size = 4;
    return model::load_model(path, opts);
}

struct Mixed {
    std::vector<Event> fin;             // [requests] Finished events, in submission order
    wbtest::Content pool;               // the target's pool after all finished
    std::vector<uint32_t> unexplained;  // cached blocks no request's tokens account for
    uint64_t metric_decode_tokens = 0;  // the scheduler metrics' decode tokens, whole run
};

/// Sees every event on the engine thread (e.g. to cancel a request).
using Hook = std::function<void(Scheduler&, const Event&)>;

/// `reqs` submitted in order to one scheduler of 4 slots over a fresh
/// model (and a fresh draft model when one asks for it), after `warm` ran
/// there to the end (its blocks left in the prefix cache; the metrics
/// start after it). Finished events: warm's, then reqs', in order.

Mixed run(const std::string& path, const std::string& backend, const std::vector<Request>& reqs,
          SchedulerParams sp, uint32_t n_ctx = 512, const std::vector<Request>& warm = {},
          const Hook& hook = {}) {
    const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(gguf::File::open(path));
    auto target = load(path, backend, n_ctx);
    std::unique_ptr<model::Model> draft;
    std::mutex mu;
    std::map<scheduler::RequestId, Event> fin;
    std::vector<scheduler::RequestId> ids;
    Mixed out;
    {
        Scheduler* sched = nullptr;
        size_t warm_left = warm.size();
        // Queues all of `reqs` before the engine's next step, so admissions
        // do not depend on thread timing.
        auto submit_all = [&] {
            for (const Request& r : reqs) {
                const auto sub = sched->submit(r);
                if (!sub.accepted) qFatal("refused: %s", sub.message.c_str());
                ids.push_back(sub.id);
            }
        };
        Scheduler s(*target, vocab, sp, [&](const Event& e) {
            if (hook) hook(*sched, e);
            if (e.type != EventType::Finished) return;
            std::lock_guard lock(mu);
            fin[e.id] = e;
            if (warm_left > 0 && --warm_left == 0) {
                // On the engine thread, before this event counts as
                // delivered: wait_idle cannot return in between.
                sched->reset_metrics();
                submit_all();
            }
        });
        sched = &s;
        for (const Request& r : reqs) {
            if (r.speculative.kind == Kind::DraftModel && !draft) {
                draft = load(path, backend, 512);
                s.set_draft_model(std::make_shared<speculative::DraftModelDrafter>(*draft, "self"));
            }
        }
        for (const Request& r : warm) ids.push_back(s.submit(r).id);
        if (warm.empty()) submit_all();
        s.start();
        if (!s.wait_idle(600s)) qFatal("timeout");
        out.metric_decode_tokens = s.metrics().snapshot(s.now_ms(), 1e9).run.decode_tokens;
        std::lock_guard lock(mu);
        for (auto id : ids) out.fin.push_back(fin.at(id));
    }
    out.pool = wbtest::content(target->kv_cells());
    std::vector<std::vector<int32_t>> seqs;
    for (const Event& e : out.fin) {
        std::vector<int32_t> t = e.prompt_tokens;
        t.insert(t.end(), e.output_tokens.begin(), e.output_tokens.end());
        seqs.push_back(t);
    }
    out.unexplained = wbtest::unexplained_cached_blocks(target->kv_cells(), seqs);
    return out;
}

Request greedy(std::vector<int32_t> prompt, int32_t max_tokens, Kind kind) {
    Request r;
    r.prompt_tokens = std::move(prompt);
    r.max_tokens = max_tokens;
    r.ignore_eos = true;
    r.sampling.temperature = 0.0f;
    r.speculative.kind = kind;
    r.speculative.k = 4;
    // Draft-model requests draft 4 tokens every pass, so that drafts are
    // checked inside shared passes whatever the machine; n-gram requests
    // take their length from the pass costs (0 where a draft loses).
    r.speculative.adaptive = kind != Kind::DraftModel;
    return r;
}

std::vector<Request> without_speculation(std::vector<Request> reqs) {
    for (Request& r : reqs) r.speculative.kind = Kind::None;
    return reqs;
}

/// Greedy mixed run against the same requests without speculation.
void same_as_plain(const std::string& path, const std::string& backend,
                   const std::vector<Request>& reqs, SchedulerParams sp, uint32_t n_ctx = 512,
                   bool expect_same_pool = true, Mixed* spec_out = nullptr,
                   const std::vector<Request>& warm = {}) {
    const Mixed plain = run(path, backend, without_speculation(reqs), sp, n_ctx, warm);
    const Mixed spec = run(path, backend, reqs, sp, n_ctx, warm);
    const size_t w = warm.size();  // the warm-up's Finished events come first
    int verified_shared = 0, accepted = 0, drafted = 0, preemptions = 0;
    uint64_t n_out = 0;
    for (size_t i = 0; i < reqs.size(); ++i) {
        const Event& p = plain.fin[w + i];
        const Event& e = spec.fin[w + i];
        QCOMPARE(e.reason, p.reason);
        QCOMPARE(e.output_tokens, p.output_tokens);
        QCOMPARE(e.output, p.output);
        n_out += e.output_tokens.size();
        preemptions += e.preemptions;
        const auto& st = e.speculative;
        if (reqs[i].speculative.kind == Kind::None) {
            QCOMPARE(st.target_passes, 0);
            continue;
        }
        // Every output token after the first (the prefill's) came from a
        // decode pass; each pass computed its fed token's row plus its draft.
        QCOMPARE(st.decode_tokens, int(e.output_tokens.size()) - 1);
        QCOMPARE(st.decode_rows, st.target_passes + st.drafted);
        // 1 + accepted per pass, fewer when the request ended inside a draft.
        QVERIFY(st.decode_tokens <= st.target_passes + st.accepted);
        if (e.reason == scheduler::FinishReason::Length)
            QCOMPARE(st.decode_tokens, st.target_passes + st.accepted);
        // Passes that checked a draft while other requests shared the pass.
        verified_shared += st.verify_passes - (st.target_passes - st.shared_passes);
        accepted += st.accepted;
        drafted += st.drafted;
    }
    qInfo("%s %s: drafted %d, accepted %d, verify passes shared >= %d, preemptions %d",
          path.substr(path.rfind('/') + 1).c_str(), backend.c_str(), drafted, accepted,
          verified_shared, preemptions);
    QVERIFY(verified_shared > 0);
    QVERIFY(accepted > 0);
    // The metrics count tokens emitted, not the rows a verify pass computed.
    QCOMPARE(spec.metric_decode_tokens, n_out);
    QCOMPARE(plain.metric_decode_tokens, n_out);
    QVERIFY(spec.unexplained.empty());
    QVERIFY(plain.unexplained.empty());
    if (expect_same_pool) QVERIFY(spec.pool == plain.pool);
    if (spec_out) *spec_out = spec;
}

/// The golden prompts that share no first block (prompt 5 starts as 0 does).
std::vector<Request> stories_requests(int32_t max_tokens) {
    const auto g = wbtest::read_greedy_golden();
    const Kind kinds[] = {Kind::Ngram, Kind::DraftModel, Kind::None, Kind::Ngram, Kind::DraftModel};
    std::vector<Request> reqs;
    for (size_t i = 0; i < 5; ++i) reqs.push_back(greedy(g.at(i).prompt_ids, max_tokens, kinds[i]));
    return reqs;
}

}  // namespace

class TestSpecBatch : public QObject {
    Q_OBJECT

    void stories(const std::string& backend) {
        // 5 requests, 4 slots: the fifth prefills beside speculating ones.
        // Small prefill chunks and step budget: prefill chunks, decode rows
        // and drafts compete for the step.
        same_as_plain(kStories, backend, stories_requests(40), SchedulerParams{4, 16, 8, 16});
    }

    void tiny(const std::string& backend) {
        for (const std::string m : {"llama3", "qwen2", "gemma2"}) {
            const auto prompts = wbtest::read_golden2(m);
            const Kind kinds[] = {Kind::Ngram, Kind::DraftModel, Kind::None, Kind::DraftModel};
            std::vector<Request> reqs;
            for (size_t i = 0; i < prompts.size() && i < 4; ++i)
                reqs.push_back(greedy(prompts[i].prompt_ids, 24, kinds[i]));
            same_as_plain(wbtest::golden2_model(m), backend, reqs, SchedulerParams{4, 16, 8, 24});
        }
    }

  private slots:
    void stories_cpu() { stories("cpu"); }
    void stories_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        stories("vulkan");
    }
    void tiny_models_cpu() { tiny("cpu"); }
    void tiny_models_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        tiny("vulkan");
    }

    void every_step_budget() {
        // step_tokens = n_parallel: no room for drafts while all four
        // decode; larger budgets: drafts cut to what is left.
        for (uint32_t step : {4u, 6u, 64u})
            same_as_plain(kStories, "cpu-ref", stories_requests(24),
                          SchedulerParams{4, 16, 8, step});
    }

    void preemption_with_speculating_requests() {
        // A 96-cell pool (24 blocks) for 5 requests of up to 68 tokens:
        // older requests preempt younger ones, speculating or not.
        // Eviction of cached blocks depends on when each request ended, so
        // the pools are compared through what their cache accounts for.
        Mixed spec;
        same_as_plain(kStories, "cpu-ref", stories_requests(40), SchedulerParams{4, 16, 8, 32}, 96,
                      /*expect_same_pool=*/false, &spec);
        if (QTest::currentTestFailed()) return;
        int preemptions = 0, verify = 0;
        for (const Event& e : spec.fin) {
            preemptions += e.preemptions;
            if (e.preemptions > 0) verify += e.speculative.verify_passes;
        }
        QVERIFY(preemptions > 0);
        QVERIFY(verify > 0);  // a preempted request speculated too
        // Nothing is held at the end; every block is free or cached.
        for (const auto& t : spec.pool.seq_tokens) QVERIFY(t.empty());
        for (const auto& b : spec.pool.blocks) QCOMPARE(std::get<0>(b), 0u);
    }

    void ends_inside_drafts() {
        // Stop strings taken from the middle of each request's plain greedy
        // text: requests end inside verified drafts, at different points,
        // while the others go on; the tokens after the end are dropped and
        // the pool is what plain decoding leaves.
        const SchedulerParams sp{4, 16, 8, 16};
        const Mixed plain = run(kStories, "cpu-ref", without_speculation(stories_requests(40)), sp);
        int ended_inside = 0;  // requests whose last pass emitted fewer tokens than it kept
        for (double at : {0.3, 0.5, 0.7}) {
            std::vector<Request> reqs = stories_requests(40);
            for (size_t i = 0; i < reqs.size(); ++i) {
                const std::string& text = plain.fin[i].output;
                const size_t from = size_t(double(text.size()) * at);
                reqs[i].stop = {text.substr(from, 3)};
            }
            Mixed spec;
            same_as_plain(kStories, "cpu-ref", reqs, sp, 512, true, &spec);
            if (QTest::currentTestFailed()) return;
            for (const Event& e : spec.fin) {
                const auto& st = e.speculative;
                ended_inside += st.decode_tokens < st.target_passes + st.accepted ? 1 : 0;
            }
        }
        QVERIFY(ended_inside > 0);
    }

    void drafts_evict_no_cached_block() {
        // A long request fills most of a 256-cell pool and ends: its blocks
        // stay in the prefix cache and few blocks are free. The mixed run
        // after it must evict exactly the cached blocks plain decoding
        // evicts: its drafts may only use the free set.
        const auto g = wbtest::read_greedy_golden();
        std::vector<Request> warm = {greedy(g.at(5).prompt_ids, 8, Kind::None)};
        std::vector<Request> reqs = stories_requests(24);
        reqs.erase(reqs.begin());  // prompt 0 begins as the warm-up's prompt
        same_as_plain(kStories, "cpu-ref", reqs, SchedulerParams{4, 16, 8, 24}, 256, true, nullptr,
                      warm);
    }

    void cancel_inside_a_speculating_run() {
        // The n-gram request is cancelled when its 11th token arrives (the
        // cancel takes effect at the next step's start, after that step's
        // rollback). Its tokens so far are plain greedy's, and the pool is
        // that of a plain run where it had as many tokens as max_tokens.
        const SchedulerParams sp{4, 16, 8, 16};
        const std::vector<Request> reqs = stories_requests(40);
        const Mixed spec =
            run(kStories, "cpu-ref", reqs, sp, 512, {}, [](Scheduler& s, const Event& e) {
                if (e.type == EventType::Token && e.index == 10 && e.id == 1) s.cancel(e.id);
            });
        const Event& c = spec.fin.at(0);
        QCOMPARE(c.reason, scheduler::FinishReason::Cancelled);
        QVERIFY(c.speculative.verify_passes > 0);
        const size_t n = c.output_tokens.size();
        QVERIFY(n >= 11 && n < 40);
        std::vector<Request> plain_reqs = without_speculation(reqs);
        plain_reqs[0].max_tokens = int32_t(n);
        const Mixed plain = run(kStories, "cpu-ref", plain_reqs, sp);
        QCOMPARE(c.output_tokens, plain.fin.at(0).output_tokens);
        for (size_t i = 1; i < reqs.size(); ++i)
            QCOMPARE(spec.fin[i].output_tokens, plain.fin[i].output_tokens);
        QVERIFY(spec.unexplained.empty());
        QVERIFY(spec.pool == plain.pool);
    }

    void sampled_mixed_run_leaves_the_pool_of_the_emitted_tokens() {
        // Temperature 0.8: drafts are often rejected. The pool at the end
        // must be that of a plain run that had each request's prompt +
        // output but the last token as its prompt.
        int rejected = 0;
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            std::vector<Request> reqs = stories_requests(32);
            for (size_t i = 0; i < reqs.size(); ++i) {
                reqs[i].sampling.temperature = 0.8f;
                reqs[i].sampling.seed = seed * 10 + i;
            }
            const Mixed spec = run(kStories, "cpu-ref", reqs, SchedulerParams{4, 16, 8, 16});
            std::vector<Request> plain;
            for (size_t i = 0; i < reqs.size(); ++i) {
                const Event& e = spec.fin[i];
                QCOMPARE(e.output_tokens.size(), size_t{32});
                rejected += e.speculative.drafted - e.speculative.accepted;
                std::vector<int32_t> all = e.prompt_tokens;
                all.insert(all.end(), e.output_tokens.begin(), e.output_tokens.end() - 1);
                plain.push_back(greedy(all, 1, Kind::None));
            }
            const Mixed ref = run(kStories, "cpu-ref", plain, SchedulerParams{4, 16, 8, 16});
            QVERIFY(spec.unexplained.empty());
            QVERIFY(spec.pool == ref.pool);
        }
        QVERIFY(rejected > 0);
    }
};

QTEST_GUILESS_MAIN(TestSpecBatch)
#include "test_spec_batch.moc"
