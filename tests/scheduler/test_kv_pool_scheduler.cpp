// The scheduler over one KV pool, on the real stories260K model: a request
// may use the whole context; requests that together exceed the pool are
// preempted and recomputed, with the same tokens as alone; the prefix
// cache makes a chat's next turn prefill only its new tokens and lets
// prompts sharing a system prompt skip it, without changing any reply.
//
// Expected values: token ids of the same request run alone in a fresh
// one-request scheduler (or with the prefix cache off), and prefill counts
// worked out from the rule "what the cache holds is every token fed to the
// model so far" (a reply cut by max_tokens leaves its last token unfed).
// The CPU reference computes every token's K/V the same way whatever the
// ubatch, so its results must be identical; on Vulkan a reused K/V comes
// from a decode step where recomputing would use a prefill (mat x mat)
// kernel, so the ids are compared too but a tie may differ there.
// Nothing asserts on timing.

#include <QtTest>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/backends.h"
#include "common/data_dir.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "scheduler/scheduler.h"
#include "tokenizer/vocab.h"

using namespace wb;
using namespace wb::scheduler;
using namespace std::chrono_literals;

namespace {

const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";

struct Engine {
    tokenizer::Vocab vocab;
    std::unique_ptr<model::Model> model;
};

Engine load(uint32_t n_ctx, uint32_t n_seq, const std::string& backend = "cpu") {
    const gguf::File file = gguf::File::open(kModel);
    model::LoadOptions opts;
    opts.backend = backend;
    opts.context.n_ctx = n_ctx;
    opts.context.n_seq_max = n_seq;
    opts.context.kv_type = model::KvType::F32;
    return Engine{tokenizer::Vocab::from_gguf(file), model::load_model(kModel, opts)};
}

/// Collects every event (thread-safe).
struct Events {
    std::mutex mu;
    std::vector<Event> all;
    EventCallback sink() {
        return [this](const Event& e) {
            std::lock_guard lock(mu);
            all.push_back(e);
        };
    }
    std::map<std::string, Event> finished() {
        std::lock_guard lock(mu);
        std::map<std::string, Event> out;
        for (const Event& e : all)
            if (e.type == EventType::Finished) out[e.label] = e;
        return out;
    }
    size_t count(EventType t) {
        std::lock_guard lock(mu);
        return static_cast<size_t>(
            std::count_if(all.begin(), all.end(), [&](const Event& e) { return e.type == t; }));
    }
};

/// Runs one request alone in a fresh one-slot scheduler on `eng`.
Event run_alone(Engine& eng, const Request& r) {
    Events ev;
    Scheduler s(*eng.model, eng.vocab, SchedulerParams{1, 4, 64, 256}, ev.sink());
    s.start();
    if (!s.submit(r).accepted) return Event{};
    if (!s.wait_idle(600s)) return Event{};
    return ev.finished().at(r.label);
}

Request greedy(const std::string& label, std::vector<int32_t> prompt, int32_t max_tokens) {
    Request r;
    r.label = label;
    r.prompt_tokens = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0.0f;
    return r;
}

const char* const kTurns[] = {
    "Lily went to the park.",     "Then she saw a big dog.", "The dog was very happy.",
    "Tom came to play with her.", "They found a red ball.",  "The ball was in a tree.",
    "Mom called them home.",      "They ate cake and milk.", "It was a sunny day.",
    "The cat sat on the mat.",    "Ben had a little boat.",  "They all went to sleep.",
};

struct ChatTurn {
    std::vector<int32_t> prompt;
    Event fin;
};

/// A 12-turn greedy chat: turn N's prompt is turn N-1's prompt, its reply
/// and the next user line (tokens, as a chat keeps its history).
std::vector<ChatTurn> chat(Engine& eng, bool prefix_cache) {
    SchedulerParams p{4, 8, 64, 256};
    p.prefix_cache = prefix_cache;
    Events ev;
    Scheduler s(*eng.model, eng.vocab, p, ev.sink());
    s.start();
    std::vector<ChatTurn> turns;
    std::vector<int32_t> history = {eng.vocab.bos()};
    for (int n = 0; n < 12; ++n) {
        const std::vector<int32_t> user = eng.vocab.tokenize(kTurns[n], /*add_special=*/false);
        history.insert(history.end(), user.begin(), user.end());
        Request r = greedy("turn-" + std::to_string(n + 1), history, 6 + 3 * (n % 4));
        r.ignore_eos = n % 3 == 0;  // some turns end at EOS, some at max_tokens
        s.submit(r);
        if (!s.wait_idle(120s)) return {};
        const Event fin = ev.finished().at(r.label);
        turns.push_back({history, fin});
        history.insert(history.end(), fin.output_tokens.begin(), fin.output_tokens.end());
    }
    return turns;
}

}  // namespace

class TestKvPoolScheduler : public QObject {
    Q_OBJECT

    void chat_turns(const std::string& backend) {
        Engine on_eng = load(2048, 4, backend);
        const std::vector<ChatTurn> on = chat(on_eng, true);
        Engine off_eng = load(2048, 4, backend);
        const std::vector<ChatTurn> off = chat(off_eng, false);
        QCOMPARE(on.size(), size_t{12});
        QCOMPARE(off.size(), size_t{12});
        size_t fed = 0;  // tokens whose K/V the previous turns left in the pool
        for (size_t n = 0; n < 12; ++n) {
            const Event& a = on[n].fin;
            const Event& b = off[n].fin;
            QVERIFY2(a.reason == FinishReason::Length || a.reason == FinishReason::Stop,
                     a.message.c_str());
            QCOMPARE(a.output_tokens, b.output_tokens);  // the cache changes no reply
            QCOMPARE(on[n].prompt, off[n].prompt);
            const auto prompt = static_cast<int32_t>(on[n].prompt.size());
            // Off: every prompt token is computed. On: only what was never fed.
            QCOMPARE(b.prompt_tokens_processed, prompt);
            QCOMPARE(b.prompt_tokens_cached, 0);
            const int32_t want_new = n == 0 ? prompt : prompt - static_cast<int32_t>(fed);
            QCOMPARE(a.prompt_tokens_processed, want_new);
            QCOMPARE(a.prompt_tokens_cached + a.prompt_tokens_processed, prompt);
            // The reply's tokens were fed, except the last one when max_tokens cut it
            // (an EOS that stopped it is not in output_tokens and was not fed either).
            fed = on[n].prompt.size() + a.output_tokens.size() -
                  (a.reason == FinishReason::Length ? 1 : 0);
            // Figures for the record (no assert on time): TTFT with the cache on and off.
            qInfo(
                "turn %zu: prompt %d, computed %d, cached %d, %s; TTFT %.1f ms (cache off "
                "%.1f ms)",
                n + 1, prompt, a.prompt_tokens_processed, a.prompt_tokens_cached,
                to_string(a.reason), a.metrics.ttft_ms, b.metrics.ttft_ms);
        }
    }

  private slots:
    void chat_turns_prefill_only_new_tokens_cpu() { chat_turns("cpu"); }
    void chat_turns_prefill_only_new_tokens_vulkan() {
        WB_SKIP_WITHOUT_VULKAN();
        chat_turns("vulkan");
    }

    // Context 2048 shared by 4 slots: one request alone may use all of it.
    void single_request_uses_the_whole_context() {
        Engine eng = load(2048, 4);
        Events ev;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{4, 8, 64, 256}, ev.sink());
        QCOMPARE(s.max_sequence_tokens(), 2048u);
        s.start();
        Request r = greedy("long", eng.vocab.tokenize("Once upon a time", true), 2000);
        r.ignore_eos = true;
        QVERIFY(s.submit(r).accepted);
        QVERIFY(s.wait_idle(600s));
        const Event fin = ev.finished().at("long");
        QCOMPARE(fin.reason, FinishReason::Length);
        QCOMPARE(fin.output_tokens.size(), size_t{2000});
        QCOMPARE(fin.preemptions, 0);
    }

    // A sequence ends with `context` at n_ctx positions (not `length`); the
    // next token would need position n_ctx.
    void context_is_its_own_finish_reason() {
        Engine eng = load(64, 2);
        Events ev;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{2, 8, 64, 256}, ev.sink());
        s.start();
        const std::vector<int32_t> prompt = eng.vocab.tokenize("Once upon a time", true);
        Request r = greedy("ctx", prompt, 1000);
        r.ignore_eos = true;
        s.submit(r);
        Request too_long = greedy("too-long", std::vector<int32_t>(65, 1), 4);
        const SubmitResult tl = s.submit(too_long);
        QVERIFY(s.wait_idle(120s));
        const Event fin = ev.finished().at("ctx");
        QCOMPARE(fin.reason, FinishReason::Context);
        QCOMPARE(std::string(to_string(fin.reason)), std::string("context"));
        // Positions 0..63 hold the prompt and all outputs but the last.
        QCOMPARE(fin.output_tokens.size(), 64 - prompt.size() + 1);
        QVERIFY(fin.message.find("n_ctx 64") != std::string::npos);
        QVERIFY(!tl.accepted);
        QVERIFY(tl.message.find("65 tokens") != std::string::npos);
        // The ids are the ones of the same request with room to spare.
        Engine big = load(512, 1);
        Request longer = r;
        longer.max_tokens = static_cast<int32_t>(fin.output_tokens.size());
        QCOMPARE(run_alone(big, longer).output_tokens, fin.output_tokens);
        const metrics::MetricsSnapshot snap = s.metrics().snapshot(s.now_ms(), 60000);
        QCOMPARE(snap.run.requests_completed, uint64_t{1});  // context counts as completed
    }

    // Four requests that need 4 x 330 positions from a pool of 512 cells:
    // the youngest are preempted and recomputed, and every request's tokens
    // are the ones it gets alone (greedy and seeded sampling alike: the
    // sampler's state survives the preemption).
    void preempted_requests_match_alone_data() {
        QTest::addColumn<QString>("backend");
        QTest::newRow("cpu") << "cpu";
        if (wbtest::vulkan_built()) QTest::newRow("vulkan") << "vulkan";
    }
    void preempted_requests_match_alone() {
        QFETCH(QString, backend);
        Engine eng = load(512, 4, backend.toStdString());
        const char* prompts[] = {"Once upon a time", "Lily and Tom", "The big dog ran", "One day"};
        std::vector<Request> reqs;
        for (int i = 0; i < 4; ++i) {
            Request r = greedy("r" + std::to_string(i), eng.vocab.tokenize(prompts[i], true), 320);
            r.ignore_eos = true;
            r.top_logprobs = 2;  // kept across preemption, one per output token
            if (i % 2 == 1) {
                r.sampling.temperature = 0.9f;
                r.sampling.top_k = 20;
                r.sampling.seed = 77 + static_cast<uint64_t>(i);
            }
            reqs.push_back(r);
        }
        std::map<std::string, std::vector<int32_t>> alone;
        std::map<std::string, std::vector<sampling::TokenLogprobs>> alone_lp;
        for (const Request& r : reqs) {
            Engine solo = load(512, 1, backend.toStdString());
            const Event e = run_alone(solo, r);
            QCOMPARE(e.reason, FinishReason::Length);
            alone[r.label] = e.output_tokens;
            alone_lp[r.label] = e.output_logprobs;
        }
        Events ev;
        Scheduler s(*eng.model, eng.vocab, SchedulerParams{4, 8, 64, 256}, ev.sink());
        for (const Request& r : reqs) QVERIFY(s.submit(r).accepted);
        s.start();
        QVERIFY(s.wait_idle(600s));
        const auto fin = ev.finished();
        int preempted = 0, recomputed = 0;
        for (const Request& r : reqs) {
            const Event& e = fin.at(r.label);
            QCOMPARE(e.reason, FinishReason::Length);
            QCOMPARE(e.output_tokens, alone[r.label]);
            QCOMPARE(e.output_logprobs.size(), e.output_tokens.size());
            for (size_t i = 0; i < e.output_logprobs.size(); ++i) {
                QCOMPARE(e.output_logprobs[i].token, e.output_tokens[i]);
                // Batched and recomputed vs alone: the same logits up to
                // float reassociation.
                QVERIFY(std::fabs(e.output_logprobs[i].logprob - alone_lp[r.label][i].logprob) <=
                        1e-3f);
            }
            preempted += e.preemptions;
            recomputed += e.recomputed_tokens;
        }
        qInfo("%d preemptions, %d tokens recomputed", preempted, recomputed);
        QVERIFY(preempted > 0);
        QVERIFY(recomputed > 0);
        QCOMPARE(ev.count(EventType::Preempted), size_t(preempted));
        const metrics::MetricsSnapshot snap = s.metrics().snapshot(s.now_ms(), 60000);
        QCOMPARE(snap.run.preemptions, uint64_t(preempted));
        QCOMPARE(snap.kv_cells_used, 0u);  // every sequence gave its blocks back
    }

    // 32 prompts that share a 200-token system prompt, 4 at a time: all but
    // the first take the system prompt's full blocks from the cache.
    void shared_system_prompt_hit_rate() {
        Engine eng = load(2048, 4);
        const std::string story =
            "Once upon a time, there was a little girl named Lily. She loved to play outside "
            "in the sun with her dog Max. One day, Lily and Max went to the park to play with "
            "a big red ball. They ran and ran until they were very tired. Then they sat under "
            "a big tree and ate some cake. Lily said, \"Max, you are my best friend.\" Max "
            "barked and wagged his tail. After that, they went home to see Mom. Mom gave them "
            "milk and a hug. The next day the sun was hot, so Lily and Max went to the lake. "
            "They saw a duck and a fish and a frog on a log. Lily laughed and clapped her hands.";
        std::vector<int32_t> system = eng.vocab.tokenize(story, true);
        QVERIFY(system.size() >= 200);
        system.resize(200);
        const char* topics[] = {"a cat",  "a boat", "a cake", "a tree", "a bird", "a car",
                                "a ball", "a hat",  "a fish", "a frog", "a bed",  "a cup"};
        std::vector<Request> reqs;
        for (int i = 0; i < 32; ++i) {
            std::vector<int32_t> p = system;
            const std::string user = std::string(" Tell a story about ") + topics[i % 12] +
                                     (i >= 12 ? " and " + std::string(topics[(i * 5) % 12]) : "");
            const std::vector<int32_t> u = eng.vocab.tokenize(user, false);
            p.insert(p.end(), u.begin(), u.end());
            reqs.push_back(greedy("p" + std::to_string(i), p, 12));
        }
        auto run = [&](bool cache, std::map<std::string, Event>& fin,
                       metrics::MetricsSnapshot& snap) {
            Engine e = load(2048, 4);
            SchedulerParams sp{4, 64, 64, 256};
            sp.prefix_cache = cache;
            Events ev;
            Scheduler s(*e.model, e.vocab, sp, ev.sink());
            for (const Request& r : reqs) QVERIFY(s.submit(r).accepted);
            s.start();
            QVERIFY(s.wait_idle(600s));
            fin = ev.finished();
            snap = s.metrics().snapshot(s.now_ms(), 60000);
        };
        std::map<std::string, Event> on, off;
        metrics::MetricsSnapshot snap_on, snap_off;
        run(true, on, snap_on);
        run(false, off, snap_off);
        uint64_t prompt_total = 0, cached_total = 0;
        for (const Request& r : reqs) {
            const Event& a = on.at(r.label);
            QCOMPARE(a.output_tokens, off.at(r.label).output_tokens);
            QCOMPARE(size_t(a.prompt_tokens_cached + a.prompt_tokens_processed),
                     r.prompt_tokens.size());
            prompt_total += r.prompt_tokens.size();
            cached_total += static_cast<uint64_t>(a.prompt_tokens_cached);
            // The system prompt's 12 full blocks of 16 are computed once, by
            // the first request; the three admitted with it wait for them
            // rather than compute them at the same time.
            if (r.label != "p0") QVERIFY(a.prompt_tokens_cached >= 192);
        }
        QCOMPARE(on.at("p0").prompt_tokens_cached, 0);
        const double hit = snap_on.run.prefix_hit_rate;
        qInfo(
            "hit rate %.3f; prefill tokens computed %llu with the cache, %llu without; "
            "busy %.0f ms vs %.0f ms (machine shared, not a benchmark)",
            hit, static_cast<unsigned long long>(snap_on.run.prefill_tokens),
            static_cast<unsigned long long>(snap_off.run.prefill_tokens),
            snap_on.run.busy_fraction * (snap_on.run.end_ms - snap_on.run.begin_ms),
            snap_off.run.busy_fraction * (snap_off.run.end_ms - snap_off.run.begin_ms));
        QCOMPARE(snap_on.run.prefix_prompt_tokens, prompt_total);
        QCOMPARE(snap_on.run.prefix_cached_tokens, cached_total);
        QVERIFY(hit >= 0.85);
        QCOMPARE(snap_off.run.prefix_hit_rate, 0.0);
        QCOMPARE(snap_on.run.prefill_tokens + cached_total, snap_off.run.prefill_tokens);
    }
};

QTEST_GUILESS_MAIN(TestKvPoolScheduler)
#include "test_kv_pool_scheduler.moc"
