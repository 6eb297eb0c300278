// KvCells (the KV pool) and KvBlockPool (blocks, prefix cache): slot
// choice, validation, the cell table attention reads, sharing of cached
// prefixes, take-over of a cached tail, LRU eviction. Expected cells are
// worked out by hand from the documented policy (new blocks: free ones by
// lowest id, then cached ones least recently given back first; a sequence
// gives its blocks back last block first), and random operation sequences
// are checked against an independent model of what each sequence holds:
// the token ids the test itself fed it.

#include <QtTest>
#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "kv/kv_cells.h"
#include "model/model.h"

using wb::model::Batch;
using wb::model::DecodeError;
using wb::model::KvBlockPool;
using wb::model::KvCells;
using wb::model::KvCellTable;

namespace {

using Cells = std::vector<uint32_t>;
using Ids = std::vector<int32_t>;

/// Everything observable about a KvCells, to prove a failed call changed nothing.
struct Snapshot {
    std::vector<Cells> blocks;
    std::vector<int32_t> next;
    uint32_t n_free = 0, n_cached = 0;
    bool operator==(const Snapshot&) const = default;
};

Snapshot snap(const KvCells& c) {
    Snapshot s;
    for (uint32_t q = 0; q < c.n_seq_max(); ++q) {
        s.blocks.push_back(c.seq_blocks(int32_t(q)));
        s.next.push_back(c.next_pos(int32_t(q)));
    }
    s.n_free = c.n_free();
    s.n_cached = c.n_cached_blocks();
    return s;
}

/// The cells token `i` of `t` attends to, in table order.
Cells span_of(const KvCellTable& t, size_t i) {
    const auto first = t.cells.begin() + t.spans[2 * i];
    return Cells(first, first + t.spans[2 * i + 1]);
}

/// Feeds `ids` to sequence `seq` from its next position in one batch and
/// commits; returns the cells they went to.
Cells feed(KvCells& c, int32_t seq, const Ids& ids) {
    Batch b;
    int32_t p = c.next_pos(seq);
    for (int32_t t : ids) b.add(t, p++, seq, false);
    const Cells placed = c.find_slots(b);
    c.commit(b, placed);
    return placed;
}

}  // namespace

class TestKvCells : public QObject {
    Q_OBJECT
  private slots:
    void pool_size_rounds_up_to_blocks() {
        QCOMPARE(KvCells::pool_cells(2048, 16), 2048u);
        QCOMPARE(KvCells::pool_cells(100, 16), 112u);
        QCOMPARE(KvCells::pool_cells(1, 16), 16u);
        KvCells c(100, 4, 10, 16);
        QCOMPARE(c.size(), 112u);
        QCOMPARE(c.n_blocks(), 7u);
        QCOMPARE(c.n_free(), 112u);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KvCells(8, 1, 10, 0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, KvCells(0, 1, 10, 4));
    }

    void one_sequence_is_causal() {
        KvCells cells(8, 1, 10, 4);  // blocks {0..3}, {4..7}
        Batch b;
        b.add(5, 0, 0, false);
        b.add(6, 1, 0, false);
        b.add(7, 2, 0, true);
        const auto slot_ids = cells.find_slots(b);
        QCOMPARE(slot_ids, (Cells{0, 1, 2}));
        const KvCellTable t = cells.cell_table(b, slot_ids);
        QCOMPARE(t.cells, (Cells{0, 1, 2}));
        QCOMPARE(t.spans, (Cells{0, 1, 0, 2, 0, 3}));  // each token sees pos 0..own
        cells.commit(b, slot_ids);
        QCOMPARE(cells.n_free(), 4u);  // one block of 4 is held
        QCOMPARE(cells.next_pos(0), 3);
        QCOMPARE(cells.blocks_needed(0, 1), 0u);
        QCOMPARE(cells.blocks_needed(0, 2), 1u);

        // Pos 3 fills block 0; pos 4 opens block 1.
        Batch d;
        d.add(8, 3, 0, true);
        d.add(9, 4, 0, true);
        const auto s2 = cells.find_slots(d);
        QCOMPARE(s2, (Cells{3, 4}));
        const KvCellTable t2 = cells.cell_table(d, s2);
        QCOMPARE(span_of(t2, 0), (Cells{0, 1, 2, 3}));
        QCOMPARE(span_of(t2, 1), (Cells{0, 1, 2, 3, 4}));
        cells.commit(d, s2);
        QCOMPARE(cells.seq_blocks(0), (Cells{0, 1}));
        QCOMPARE(cells.n_free(), 0u);
    }

    void sequences_get_their_own_blocks() {
        KvCells cells(8, 2, 10, 2);  // 4 blocks of 2
        Batch b;
        b.add(1, 0, 0, true);  // seq 0 pos 0 -> block 0, cell 0
        b.add(2, 0, 1, true);  // seq 1 pos 0 -> block 1, cell 2
        b.add(3, 1, 0, true);  // seq 0 pos 1 -> cell 1
        b.add(4, 2, 0, true);  // seq 0 pos 2 -> block 2, cell 4
        const auto slot_ids = cells.find_slots(b);
        QCOMPARE(slot_ids, (Cells{0, 2, 1, 4}));
        const KvCellTable t = cells.cell_table(b, slot_ids);
        // One run per sequence in order of first appearance: seq 0 {0, 1, 4}, seq 1 {2}.
        QCOMPARE(t.cells, (Cells{0, 1, 4, 2}));
        QCOMPARE(t.spans, (Cells{0, 1, 3, 1, 0, 2, 0, 3}));
        cells.commit(b, slot_ids);
        QCOMPARE(cells.seq_blocks(0), (Cells{0, 2}));
        QCOMPARE(cells.seq_blocks(1), (Cells{1}));

        // seq 1 continues in its own block and sees only its own cells.
        Batch d;
        d.add(5, 1, 1, true);
        const auto s2 = cells.find_slots(d);
        QCOMPARE(s2, (Cells{3}));
        QCOMPARE(span_of(cells.cell_table(d, s2), 0), (Cells{2, 3}));
    }

    // Blocks given back become cached (full ones) or free; a later sequence
    // gets free blocks first, then cached ones least recently given back
    // first; its block table is then out of order and its cells fragmented.
    void reused_blocks_are_out_of_order() {
        KvCells cells(8, 2, 10, 2);                                   // 4 blocks of 2
        QCOMPARE(feed(cells, 0, {1, 2, 3, 4}), (Cells{0, 1, 2, 3}));  // blocks 0, 1 (full)
        QCOMPARE(feed(cells, 1, {5}), (Cells{4}));                    // block 2
        cells.seq_rm(0);  // gives back block 1, then block 0: LRU = [1, 0]
        QCOMPARE(cells.n_cached_blocks(), 2u);
        QCOMPARE(cells.n_free(), 6u);  // block 3 free + 2 cached
        // seq 0 anew with other tokens: block 3 (free), then 1, then 0 (evicted in LRU order).
        QCOMPARE(feed(cells, 0, {7, 7, 7, 7, 7, 7}), (Cells{6, 7, 2, 3, 0, 1}));
        QCOMPARE(cells.seq_blocks(0), (Cells{3, 1, 0}));
        QCOMPARE(cells.n_cached_blocks(), 0u);
        Batch d;
        d.add(8, 1, 1, true);
        d.add(9, 6, 0, true);  // needs a block: none left
        bool full = false;
        try {
            (void)cells.find_slots(d);
        } catch (const DecodeError& e) {
            full = QString(e.what()).contains("KV cache full");
        }
        QVERIFY(full);
        Batch e;
        e.add(8, 1, 1, true);
        const auto s = cells.find_slots(e);
        QCOMPARE(s, (Cells{5}));
        QCOMPARE(span_of(cells.cell_table(e, s), 0), (Cells{4, 5}));
    }

    // A second sequence with the same prefix shares its full blocks by
    // reference and computes only the rest.
    void full_blocks_are_shared() {
        KvCells cells(16, 3, 20, 2);      // 8 blocks of 2
        feed(cells, 0, {5, 6, 7, 8, 9});  // blocks 0 {5,6}, 1 {7,8}, 2 {9}
        const Ids prompt{5, 6, 7, 8, 3, 4};
        QCOMPARE(cells.seq_reuse_cached(1, prompt, 5), 4u);  // blocks 0 and 1, not the partial 2
        QCOMPARE(cells.seq_blocks(1), (Cells{0, 1}));
        QCOMPARE(cells.next_pos(1), 4);
        QCOMPARE(cells.pool().ref(0), 2u);
        QCOMPARE(cells.pool().ref(1), 2u);
        QCOMPARE(cells.n_free(), 10u);  // 5 blocks held by nobody
        // The rest of the prompt goes into a fresh block; attention sees the shared cells.
        Batch b;
        b.add(3, 4, 1, false);
        b.add(4, 5, 1, true);
        const auto s = cells.find_slots(b);
        QCOMPARE(s, (Cells{6, 7}));
        QCOMPARE(span_of(cells.cell_table(b, s), 1), (Cells{0, 1, 2, 3, 6, 7}));
        cells.commit(b, s);
        // Different first block, same second block: nothing is shared (hash chain).
        QCOMPARE(cells.seq_reuse_cached(2, Ids{9, 9, 7, 8, 1}, 4), 0u);
        // Removing one holder keeps the shared blocks for the other.
        cells.seq_rm(0);
        QCOMPARE(cells.pool().ref(0), 1u);
        QCOMPARE(cells.seq_blocks(1), (Cells{0, 1, 3}));
        cells.seq_rm(1);
        QCOMPARE(cells.n_free(), 16u);
        // A limit stops before a block that would pass it.
        QCOMPARE(cells.seq_reuse_cached(2, prompt, 3, /*take_over=*/false), 2u);
    }

    // The partly filled tail of an ended sequence (a chat's previous turn)
    // is taken over by the next sequence that continues the same prefix.
    void cached_tail_is_taken_over() {
        KvCells cells(8, 2, 20, 2);  // 4 blocks of 2
        feed(cells, 0, {5, 6, 7});   // block 0 {5,6} full, block 1 {7} partial
        cells.seq_rm(0);             // LRU = [1, 0]; block 1 cached as a tail
        QCOMPARE(cells.n_cached_blocks(), 2u);
        // Turn 2: previous tokens plus new ones; limit = length - 1.
        const Ids turn2{5, 6, 7, 9, 10};
        QCOMPARE(cells.seq_reuse_cached(1, turn2, 4), 3u);
        QCOMPARE(cells.seq_blocks(1), (Cells{0, 1}));
        QCOMPARE(cells.next_pos(1), 3);
        QCOMPARE(cells.n_cached_blocks(), 0u);  // both held again
        // Only the new tokens are computed: 9 into block 1's free cell, 10 into a new block.
        QCOMPARE(feed(cells, 1, {9, 10}), (Cells{3, 4}));
        QCOMPARE(cells.pool().tokens(1).size(), size_t{2});
        QCOMPARE(cells.pool().tokens(1)[1], 9);

        // A tail only partly continued, or a full block only partly
        // matching, is not taken over: it stays cached for a better match.
        cells.clear();
        feed(cells, 0, {1, 2, 3});  // block 0 {1, 2}, tail block 1 {3}
        cells.seq_rm(0);
        QCOMPARE(cells.seq_reuse_cached(1, Ids{1, 4, 4}, 2), 0u);     // {1, 2} only half matches
        QCOMPARE(cells.seq_reuse_cached(1, Ids{1, 2, 5, 5}, 3), 2u);  // {3} does not match
        QCOMPARE(cells.seq_blocks(1), (Cells{0}));
        QCOMPARE(cells.n_cached_blocks(), 1u);
        cells.seq_rm(1);
        QCOMPARE(cells.seq_reuse_cached(0, Ids{1, 2, 3, 4}, 3), 3u);  // the tail is still there
    }

    // A held block is never taken over (its owner still writes into it).
    void held_tail_is_not_taken_over() {
        KvCells cells(8, 2, 20, 2);
        feed(cells, 0, {5, 6, 7});
        QCOMPARE(cells.seq_reuse_cached(1, Ids{5, 6, 7, 8}, 3), 2u);  // block 0 only
        QCOMPARE(cells.seq_blocks(1), (Cells{0}));
    }

    void lru_evicts_tails_first() {
        KvCells cells(8, 3, 20, 2);    // 4 blocks
        feed(cells, 0, {1, 2, 3, 4});  // blocks 0, 1
        feed(cells, 1, {5, 6, 7, 8});  // blocks 2, 3
        cells.seq_rm(0);               // LRU [1, 0]
        cells.seq_rm(1);               // LRU [1, 0, 3, 2]
        QCOMPARE(cells.n_cached_blocks(), 4u);
        QCOMPARE(feed(cells, 2, {9}), (Cells{2}));  // block 1 (seq 0's tail) evicted
        // seq 0's head is still cached, its tail is not.
        QCOMPARE(cells.seq_reuse_cached(0, Ids{1, 2, 3, 4, 0}, 4), 2u);
        // seq 1's prefix is whole.
        QCOMPARE(cells.seq_reuse_cached(1, Ids{5, 6, 7, 8, 0}, 4), 4u);
        QCOMPARE(cells.seq_blocks(1), (Cells{2, 3}));
    }

    // Two sequences that compute the same prefix at once: the first full
    // block is cached, the duplicate is plain free when given back.
    void duplicate_content_is_cached_once() {
        KvCells cells(8, 2, 20, 2);
        feed(cells, 0, {1, 2});
        feed(cells, 1, {1, 2});
        QVERIFY(cells.pool().in_cache(0));
        QVERIFY(!cells.pool().in_cache(1));
        cells.seq_rm(1);
        QCOMPARE(cells.n_cached_blocks(), 0u);
        cells.seq_rm(0);
        QCOMPARE(cells.n_cached_blocks(), 1u);
        QCOMPARE(cells.seq_reuse_cached(1, Ids{1, 2, 3}, 2), 2u);
        QCOMPARE(cells.seq_blocks(1), (Cells{0}));
    }

    // Random prefills, decodes, reuses and removals over 5 sequences in a
    // small pool. After every step: each sequence's cells hold exactly the
    // tokens the test fed it (block contents by position); a block two
    // sequences share is full and both have the same tokens up to its end;
    // every token's span lists its own sequence's cells by position; block
    // references add up.
    void random_operations_keep_the_invariants() {
        std::mt19937 rng(20261130);
        const uint32_t n_seq = 5, bs = 4;
        KvCells cells(64, n_seq, 8, bs);  // 16 blocks; 8 token ids make repeats likely
        std::vector<Ids> toks(n_seq);     // what the test fed each sequence
        size_t checked = 0, shared_seen = 0, reused = 0;
        for (int step = 0; step < 1500; ++step) {
            const int32_t q = static_cast<int32_t>(rng() % n_seq);
            const uint32_t op = rng() % 10;
            if (op == 0) {
                cells.seq_rm(q);
                toks[size_t(q)].clear();
            } else if (op <= 2 && toks[size_t(q)].empty()) {
                // A new prompt that often repeats another sequence's start.
                Ids p;
                const Ids& src = toks[rng() % n_seq];
                const size_t keep = src.empty() ? 0 : rng() % (src.size() + 1);
                p.assign(src.begin(), src.begin() + long(keep));
                for (uint32_t i = 0, n = 1 + rng() % 10; i < n; ++i)
                    p.push_back(int32_t(rng() % 2));
                const uint32_t got = cells.seq_reuse_cached(q, p, uint32_t(p.size() - 1));
                reused += got;
                toks[size_t(q)].assign(p.begin(), p.begin() + got);
                Ids rest(p.begin() + got, p.end());
                if (rest.size() > cells.n_free()) continue;
                feed(cells, q, rest);
                toks[size_t(q)] = p;
            } else {
                Batch b;
                std::vector<int32_t> next(n_seq);
                for (uint32_t s = 0; s < n_seq; ++s) next[s] = cells.next_pos(int32_t(s));
                for (uint32_t i = 0, n = 1 + rng() % 6; i < n; ++i) {
                    const int32_t s = static_cast<int32_t>(rng() % n_seq);
                    b.add(int32_t(rng() % 8), next[size_t(s)]++, s, true);
                }
                Cells placed;
                try {
                    placed = cells.find_slots(b);
                } catch (const DecodeError&) {
                    cells.seq_rm(q);  // pool full: make room
                    toks[size_t(q)].clear();
                    continue;
                }
                const KvCellTable t = cells.cell_table(b, placed);
                cells.commit(b, placed);
                for (size_t i = 0; i < b.size(); ++i)
                    toks[size_t(b.seq_id[i])].push_back(b.token[i]);
                for (size_t i = 0; i < b.size(); ++i) {
                    const Cells& bl = cells.seq_blocks(b.seq_id[i]);
                    Cells want;
                    for (int32_t p = 0; p <= b.pos[i]; ++p)
                        want.push_back(bl[size_t(p) / bs] * bs + uint32_t(p) % bs);
                    QCOMPARE(span_of(t, i), want);
                    ++checked;
                }
            }
            // Contents and sharing against the test's own record.
            std::map<uint32_t, std::vector<std::pair<int32_t, size_t>>>
                holders;  // block -> (seq, index)
            for (uint32_t s = 0; s < n_seq; ++s) {
                const Cells& bl = cells.seq_blocks(int32_t(s));
                QCOMPARE(size_t(cells.next_pos(int32_t(s))), toks[s].size());
                QCOMPARE(bl.size(), (toks[s].size() + bs - 1) / bs);
                for (size_t p = 0; p < toks[s].size(); ++p)
                    QCOMPARE(cells.pool().tokens(bl[p / bs])[p % bs], toks[s][p]);
                for (size_t k = 0; k < bl.size(); ++k) holders[bl[k]].push_back({int32_t(s), k});
            }
            uint32_t held = 0;
            for (const auto& [blk, hs] : holders) {
                ++held;
                QCOMPARE(cells.pool().ref(blk), uint32_t(hs.size()));
                if (hs.size() < 2) continue;
                ++shared_seen;
                QCOMPARE(cells.pool().fill(blk), bs);
                for (const auto& [s, k] : hs) {
                    QCOMPARE(k, hs[0].second);  // same block index in both tables
                    const Ids& a = toks[size_t(s)];
                    const Ids& b0 = toks[size_t(hs[0].first)];
                    QVERIFY(std::equal(a.begin(), a.begin() + long((k + 1) * bs), b0.begin()));
                }
            }
            QCOMPARE(held + cells.n_free_blocks(), cells.n_blocks());
        }
        qInfo("checked %zu spans, saw shared blocks %zu times, reused %zu tokens", checked,
              shared_seen, reused);
        QVERIFY(checked > 500);
        QVERIFY(shared_seen > 50);
        QVERIFY(reused > 100);
    }

    void cell_table_rejects_a_batch_that_does_not_continue() {
        KvCells cells(4, 2, 10, 1);
        Batch b;
        b.add(1, 1, 0, true);  // seq 0 is empty: pos 1 skips 0
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, (void)cells.cell_table(b, Cells{0}));
        Batch c;
        c.add(1, 0, 0, true);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, (void)cells.cell_table(c, Cells{0, 1}));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cells.commit(b, Cells{0}));
        QCOMPARE(cells.n_free(), 4u);
    }

    void invalid_batches_throw_and_change_nothing() {
        KvCells cells(4, 2, 10, 1);
        Batch ok;
        ok.add(1, 0, 0, false);
        ok.add(2, 1, 0, true);
        cells.commit(ok, cells.find_slots(ok));
        const Snapshot before = snap(cells);

        auto expect_error = [&](const Batch& b, const char* what) {
            bool thrown = false;
            try {
                (void)cells.find_slots(b);
            } catch (const DecodeError& e) {
                thrown = true;
                QVERIFY2(QString(e.what()).contains(what), e.what());
            }
            QVERIFY2(thrown, what);
            QVERIFY(snap(cells) == before);
        };
        Batch b;
        expect_error(b, "empty batch");
        b.add(10, 2, 0, true);
        expect_error(b, "outside the vocabulary");
        b.clear();
        b.add(-1, 2, 0, true);
        expect_error(b, "outside the vocabulary");
        b.clear();
        b.add(3, 0, 2, true);
        expect_error(b, "seq_id 2");
        b.clear();
        b.add(3, 3, 0, true);  // skips position 2
        expect_error(b, "not its next position 2");
        b.clear();
        b.add(3, 0, 0, true);  // restarts a live sequence
        expect_error(b, "not its next position 2");
        b.clear();
        b.add(3, 2, 0, true);
        b.add(4, 2, 0, true);  // same position twice
        expect_error(b, "not its next position 3");
        b.clear();
        b.add(3, 2, 0, true);
        b.add(3, 3, 0, true);
        b.add(3, 0, 1, true);  // 3 tokens, 2 free cells
        expect_error(b, "KV cache full");
        b.clear();
        b.add(3, 2, 0, true);
        b.pos.push_back(3);  // ragged arrays
        expect_error(b, "differ in length");
    }

    void commit_rejects_other_slots() {
        KvCells cells(4, 1, 10, 2);
        Batch b;
        b.add(1, 0, 0, true);
        const auto slot_ids = cells.find_slots(b);
        cells.commit(b, slot_ids);
        Batch c;
        c.add(1, 1, 0, true);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cells.commit(c, slot_ids));  // cell 0 again
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 cells.commit(c, Cells{2}));  // not its block
        QCOMPARE(cells.next_pos(0), 1);
        QCOMPARE(cells.n_free(), 2u);
    }

    void hash_chain_depends_on_prefix_and_tokens() {
        const Ids a{1, 2, 3, 4}, b{1, 2, 3, 5};
        const uint64_t h0 = KvBlockPool::hash_block(KvBlockPool::kRootHash, a);
        QCOMPARE(h0, KvBlockPool::hash_block(KvBlockPool::kRootHash, a));
        QVERIFY(h0 != KvBlockPool::hash_block(KvBlockPool::kRootHash, b));
        QVERIFY(h0 != KvBlockPool::hash_block(h0, a));
        QVERIFY(KvBlockPool::hash_block(KvBlockPool::kRootHash, Ids{0}) !=
                KvBlockPool::hash_block(KvBlockPool::kRootHash, Ids{0, 0}));
    }
};

QTEST_GUILESS_MAIN(TestKvCells)
#include "test_kv_cells.moc"
