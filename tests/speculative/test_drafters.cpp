// Drafters. NgramDrafter: hand-worked histories. AdaptiveK: the documented
// steps. DraftLength and PassCostModel: costs and rates worked in float64
// by hand (Python), from the pass costs measured on a 2-core CPU (77, 100,
// 217 ms for 1, 2, 5 tokens) and a flat GPU-like curve. check_same_vocab: stories260K against
// itself and against llama-2-tiny-random (another vocabulary). DraftModelDrafter on stories260K
// (cpu-ref, exact): its greedy proposals after a prompt, after more history and after a shorter one
// (its KV rolled back), equal llama.cpp's greedy tokens
// (tests/data/golden/stories260K_greedy.jsonl).

#include <QtTest>

#include "common/data_dir.h"
#include "common/greedy_golden.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "speculative/draft_length.h"
#include "speculative/draft_model_drafter.h"
#include "speculative/ngram_drafter.h"

using namespace wb;
using speculative::AdaptiveK;
using speculative::NgramDrafter;
using Ids = std::vector<int32_t>;

class TestDrafters : public QObject {
    Q_OBJECT
  private slots:
    void ngram_finds_the_most_recent_longest_match() {
        NgramDrafter d(1, 3);
        // Suffix 7 8 9 occurs at 0 (followed by 1 2) and at 5 (followed by 4):
        // the most recent, at 5, wins.
        const Ids h{7, 8, 9, 1, 2, 7, 8, 9, 4, 5, 6, 7, 8, 9};
        QCOMPARE(d.propose(0, h, 3), (Ids{4, 5, 6}));
        QCOMPARE(d.propose(0, h, 1), (Ids{4}));
        QCOMPARE(d.propose(0, h, 0), Ids{});
        // Only a 1-gram matches (3 ... 3): the token after the earlier 3.
        QCOMPARE(d.propose(0, Ids{3, 10, 11, 12, 3}, 5), (Ids{10, 11, 12, 3}));
        // Longest first: 2-gram (5 6) beats the later 1-gram (6).
        QCOMPARE(d.propose(0, Ids{5, 6, 1, 6, 2, 5, 6}, 2), (Ids{1, 6}));
        // No match, or too short.
        QCOMPARE(d.propose(0, Ids{1, 2, 3}, 4), Ids{});
        QCOMPARE(d.propose(0, Ids{1}, 4), Ids{});
        QCOMPARE(d.propose(0, Ids{}, 4), Ids{});
        // A proposal is cut at the end of the history.
        QCOMPARE(d.propose(0, Ids{1, 2, 1}, 4), (Ids{2, 1}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, NgramDrafter(0, 2));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, NgramDrafter(3, 2));
    }

    void adaptive_k_stays_in_bounds() {
        AdaptiveK a(3);
        QCOMPARE(a.k(), 3u);
        a.update(3, 3);
        QCOMPARE(a.k(), 3u);  // at k_max
        a.update(3, 1);
        QCOMPARE(a.k(), 2u);
        a.update(2, 0);
        a.update(1, 0);
        a.update(1, 0);
        QCOMPARE(a.k(), 1u);  // never below 1
        a.update(0, 0);
        QCOMPARE(a.k(), 1u);  // nothing drafted: no change
        a.update(1, 1);
        QCOMPARE(a.k(), 2u);
        AdaptiveK fixed(4, false);
        fixed.update(4, 0);
        QCOMPARE(fixed.k(), 4u);
    }

    void pass_costs_are_interpolated_and_extrapolated() {
        speculative::PassCostModel c;
        QVERIFY(!c.cost_ms(1));
        c.record(1, 77);
        QVERIFY(!c.cost_ms(2));  // one count: no slope yet
        c.record(2, 100);
        c.record(5, 217);
        c.record(0, 5);   // ignored
        c.record(3, -1);  // ignored
        QCOMPARE(*c.cost_ms(1), 77.0);
        QCOMPARE(*c.cost_ms(3), 139.0);  // 100 + (217 - 100) / 3
        QCOMPARE(*c.cost_ms(8), 334.0);  // 217 + 3 * 39
        c.record(1, 97);
        QCOMPARE(*c.cost_ms(1), 82.0);  // 0.75 * 77 + 0.25 * 97
        QCOMPARE(speculative::expected_tokens(0.5, 2), 1.75);
        QCOMPARE(speculative::expected_tokens(0.0, 4), 1.0);
        QCOMPARE(speculative::expected_tokens(1.0, 3), 4.0);
    }

    void draft_length_follows_costs_and_acceptance() {
        speculative::PassCostModel cpu;
        cpu.record(1, 77);
        cpu.record(2, 100);
        cpu.record(5, 217);
        // tokens/ms for k = 0..5 at alpha 0.46: .01299 .01460 .01203 ...
        QCOMPARE(*speculative::best_draft_length(0.46, 5, 1, 0, cpu), 1u);
        // at alpha 0.2: .01299 .01200 ...: no draft.
        QCOMPARE(*speculative::best_draft_length(0.2, 5, 1, 0, cpu), 0u);
        // 7 other requests' tokens in the pass (costs 77, 281 at 8, 400 at 13):
        // .02847 .02776 ...: no draft.
        speculative::PassCostModel batch;
        batch.record(1, 77);
        batch.record(8, 281);
        batch.record(13, 400);
        QCOMPARE(*speculative::best_draft_length(0.46, 5, 8, 0, batch), 0u);
        // A nearly flat curve (10 ms at 1, 11 at 9): k = 5 (.18529 against
        // .18452 at 4 and .18459 at 6); drafting at 1 ms a token: k = 2.
        speculative::PassCostModel flat;
        flat.record(1, 10);
        flat.record(9, 11);
        QCOMPARE(*speculative::best_draft_length(0.5, 8, 1, 0, flat), 5u);
        QCOMPARE(*speculative::best_draft_length(0.5, 8, 1, 1.0, flat), 2u);
        QVERIFY(!speculative::best_draft_length(0.5, 8, 1, 0, speculative::PassCostModel{}));

        // Per request: AdaptiveK's k until the costs are known.
        speculative::DraftLength d(4);
        QCOMPARE(d.next(1, speculative::PassCostModel{}), 4u);
        QCOMPARE(d.alpha(), 0.5);  // the prior
        // Five rejected single-token drafts: alpha = 1 / 7; k = 0, with a
        // one-token probe on every 8th pass.
        for (int i = 0; i < 5; ++i) d.update(1, 0, 0.01);
        QCOMPARE(d.alpha(), 1.0 / 7.0);
        for (int i = 0; i < 7; ++i) QCOMPARE(d.next(1, cpu), 0u);
        QCOMPARE(d.next(1, cpu), 1u);
        QCOMPARE(d.next(1, cpu), 0u);
        // Kept drafts raise alpha: 4 of 4 kept four times: (1 + 16) / 23 = .739.
        for (int i = 0; i < 4; ++i) d.update(4, 4, 0.01);
        QVERIFY(d.next(1, flat) >= 3);
        // Fixed length: always k_max.
        speculative::DraftLength fixed(3, false);
        fixed.update(3, 0, 0);
        QCOMPARE(fixed.next(1, cpu), 3u);
    }

    void vocabularies_are_compared_token_by_token() {
        const auto stories = tokenizer::Vocab::from_gguf(
            gguf::File::open(wbtest::data_dir() + "/models/stories260K.gguf"));
        const auto other = tokenizer::Vocab::from_gguf(
            gguf::File::open(wbtest::data_dir() + "/models/llama-2-tiny-random.gguf"));
        speculative::check_same_vocab(stories, stories);
        bool thrown = false;
        try {
            speculative::check_same_vocab(stories, other);
        } catch (const std::invalid_argument& e) {
            thrown = true;
            QVERIFY2(QString(e.what()).contains("differs from the target's at token"), e.what());
            qInfo("%s", e.what());
        }
        QVERIFY(thrown);
    }

    void draft_model_proposes_the_greedy_continuation() {
        const auto goldens = wbtest::read_greedy_golden();
        model::LoadOptions opts;
        opts.backend = "cpu-ref";
        opts.context.n_ctx = 128;
        opts.context.n_seq_max = 2;
        opts.context.kv_type = model::KvType::F32;
        auto m = model::load_model(wbtest::data_dir() + "/models/stories260K.gguf", opts);
        speculative::DraftModelDrafter d(*m, "stories260K");
        const auto& g = goldens.at(0);
        auto history = [&](size_t n_out) {
            Ids h = g.prompt_ids;
            h.insert(h.end(), g.generated.begin(), g.generated.begin() + long(n_out));
            return h;
        };
        auto golden = [&](size_t from, size_t k) {
            return Ids(g.generated.begin() + long(from), g.generated.begin() + long(from + k));
        };
        QCOMPARE(d.propose(1, history(0), 4), golden(0, 4));
        QCOMPARE(d.propose(1, history(6), 5), golden(6, 5));  // feeds only what is new
        QCOMPARE(m->kv_cells().next_pos(1), int32_t(g.prompt_ids.size() + 6 + 4));
        QCOMPARE(d.propose(1, history(2), 3), golden(2, 3));  // rolled back
        // A history that differs inside what the draft holds.
        Ids h = history(10);
        h[g.prompt_ids.size() + 1] = 5;  // not the golden token
        (void)d.propose(1, h, 2);
        QCOMPARE(d.propose(1, history(10), 4), golden(10, 4));
        d.release(1);
        QCOMPARE(m->kv_cells().next_pos(1), 0);
        QCOMPARE(d.propose(7, history(0), 4), Ids{});  // no such draft sequence
    }
};

QTEST_GUILESS_MAIN(TestDrafters)
#include "test_drafters.moc"
