// KvCells::seq_truncate (speculative decoding's rollback of a rejected
// draft tail): the pool after commit + truncate must equal a pool that
// never saw the tail. Expected block tables are worked out by hand from the
// documented policy (free blocks lowest id first, then cached ones least
// recently given back first); the random test compares a pool that drafts
// and rolls back against one that only ever gets the kept tokens, on every
// observable: block tables, lengths, prefix hashes, every block's ref,
// fill, tokens and cache state, the hand-out order (free set then LRU) and
// what find_full / find_take_over answer.

#include <QtTest>
#include <random>
#include <vector>

#include "common/kv_state.h"
#include "kv/kv_cells.h"
#include "model/model.h"

using wb::model::Batch;
using wb::model::KvBlockPool;
using wb::model::KvCells;
using wbtest::State;
using wbtest::state;

namespace {

using Cells = std::vector<uint32_t>;
using Ids = std::vector<int32_t>;

void feed(KvCells& c, int32_t seq, const Ids& ids) {
    if (ids.empty()) return;
    Batch b;
    int32_t p = c.next_pos(seq);
    for (int32_t t : ids) b.add(t, p++, seq, true);
    c.commit(b, c.find_slots(b));
}

uint64_t chain(const Ids& ids, uint32_t bs) {  // hash over the full blocks of ids
    uint64_t h = KvBlockPool::kRootHash;
    for (size_t i = 0; i + bs <= ids.size(); i += bs) {
        h = KvBlockPool::hash_block(h, std::span<const int32_t>(ids).subspan(i, bs));
    }
    return h;
}

}  // namespace

class TestKvTruncate : public QObject {
    Q_OBJECT
  private slots:
    void rejected_tail_leaves_no_trace() {
        // 8 blocks of 4 cells. Seq 0 holds 1..6: block 0 full (cached), block 1 fill 2.
        KvCells spec(32, 2, 100, 4), plain(32, 2, 100, 4);
        feed(spec, 0, {1, 2, 3, 4, 5, 6});
        feed(plain, 0, {1, 2, 3, 4, 5, 6, 7});
        // Verify pass: the last sampled token 7 and a draft 8 9 10 11.
        feed(spec, 0, {7, 8, 9, 10, 11});
        QCOMPARE(spec.seq_blocks(0), (Cells{0, 1, 2}));
        QVERIFY(spec.pool().in_cache(1));  // block 1 (5 6 7 8) was published full
        QVERIFY(spec.pool().find_full(chain({1, 2, 3, 4}, 4), Ids{5, 6, 7, 8}) == 1);
        // Only 7 is kept (the target rejected 8).
        spec.seq_truncate(0, 7);
        QCOMPARE(spec.seq_blocks(0), (Cells{0, 1}));
        QCOMPARE(spec.pool().fill(1), 3u);
        QVERIFY(!spec.pool().in_cache(1));
        QCOMPARE(spec.pool().find_full(chain({1, 2, 3, 4}, 4), Ids{5, 6, 7, 8}), int64_t{-1});
        QCOMPARE(spec.pool().find_full(KvBlockPool::kRootHash, Ids{1, 2, 3, 4}), int64_t{0});
        QCOMPARE(spec.pool().ref(2), 0u);
        QCOMPARE(spec.pool().peek(8), (Cells{2, 3, 4, 5, 6, 7}));  // block 2 is free, not cached
        QCOMPARE(spec.seq_prefix_hash(0), chain({1, 2, 3, 4}, 4));
        QVERIFY(state(spec) == state(plain));
        // Both go on alike: the next token lands in the same cell.
        feed(spec, 0, {20, 21});
        feed(plain, 0, {20, 21});
        QVERIFY(state(spec) == state(plain));
        QCOMPARE(spec.seq_blocks(0), (Cells{0, 1, 2}));
        // An ended sequence's tail is taken over identically.
        spec.seq_rm(0);
        plain.seq_rm(0);
        QVERIFY(state(spec) == state(plain));
        QCOMPARE(spec.pool().find_take_over(chain({1, 2, 3, 4, 5, 6, 7, 20}, 4), Ids{21, 5}).first,
                 int64_t{2});
    }

    void truncate_to_a_block_boundary_keeps_the_full_block_cached() {
        KvCells spec(16, 1, 100, 4), plain(16, 1, 100, 4);
        feed(spec, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
        feed(plain, 0, {1, 2, 3, 4, 5, 6, 7, 8});
        spec.seq_truncate(0, 8);
        QCOMPARE(spec.seq_blocks(0), (Cells{0, 1}));
        QVERIFY(spec.pool().in_cache(1));
        QVERIFY(state(spec) == state(plain));
        spec.seq_truncate(0, 0);  // everything: all blocks free, nothing cached
        QCOMPARE(spec.pool().peek(4), (Cells{0, 1, 2, 3}));
        QCOMPARE(spec.pool().n_cached_free(), 0u);
        QCOMPARE(spec.seq_prefix_hash(0), KvBlockPool::kRootHash);
        spec.seq_truncate(0, 0);  // no-op
    }

    void room_without_eviction_counts_last_block_and_free_blocks() {
        KvCells c(16, 2, 100, 4);  // 4 blocks
        QCOMPARE(c.seq_room_without_eviction(0), 16u);
        feed(c, 1, {50, 51, 52, 53, 54});  // blocks 0, 1
        c.seq_rm(1);                       // both cached now, none free but 2 and 3
        feed(c, 0, {1, 2, 3});             // block 2, fill 3
        QCOMPARE(c.seq_blocks(0), (Cells{2}));
        QCOMPARE(c.seq_room_without_eviction(0), 1u + 4u);  // 1 cell of block 2, block 3
        feed(c, 0, {4, 5, 6, 7, 8});
        QCOMPARE(c.seq_room_without_eviction(0), 0u);  // the rest would evict 50..54
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, c.seq_room_without_eviction(2));
    }

    void refusals_name_the_sequence_and_change_nothing() {
        KvCells c(32, 2, 100, 4);
        feed(c, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9});
        // Seq 1 shares seq 0's two full blocks, then goes on.
        const Ids prompt{1, 2, 3, 4, 5, 6, 7, 8, 30};
        QCOMPARE(c.seq_reuse_cached(1, prompt, 8), 8u);
        feed(c, 1, {30, 31});
        const State before = state(c);
        auto refused = [&](int32_t seq, uint32_t n_keep, const char* why) {
            bool thrown = false;
            try {
                c.seq_truncate(seq, n_keep);
            } catch (const std::invalid_argument& e) {
                thrown = true;
                const QString m = e.what();
                QVERIFY2(m.contains(QString("sequence %1").arg(seq)), e.what());
                QVERIFY2(m.contains(QString("n_keep %1").arg(n_keep)), e.what());
                QVERIFY2(m.contains(why), e.what());
            }
            QVERIFY2(thrown, why);
            QVERIFY(state(c) == before);
        };
        refused(0, 10, "past its length 9");
        refused(0, 5, "shared with another sequence");  // cuts block 1
        c.seq_truncate(0, 9);                           // no-op
        c.seq_truncate(0, 8);                           // drops only its own block 2
        QCOMPARE(c.seq_blocks(0), (Cells{0, 1}));
    }

    void refusals_of_shared_and_reused_blocks() {
        KvCells c(32, 2, 100, 4);
        feed(c, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9});
        QCOMPARE(c.seq_reuse_cached(1, Ids{1, 2, 3, 4, 5, 6, 7, 8, 30}, 8), 8u);
        feed(c, 1, {30, 31});
        const State before = state(c);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, c.seq_truncate(0, 2));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, c.seq_truncate(1, 7));  // reused
        QVERIFY(state(c) == before);
        c.seq_truncate(1, 9);  // its own block only
        QCOMPARE(c.next_pos(1), 9);
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, c.seq_truncate(2, 0));
    }

    void random_drafts_and_rollbacks_equal_plain_decoding() {
        // Several sequences start from a few shared prompts (prefix sharing,
        // take-over), decode, end; the speculative pool also commits a
        // random draft tail each step (within the room without eviction)
        // and truncates it away.
        for (uint32_t seed = 1; seed <= 30; ++seed) {
            std::mt19937 rng(seed);
            const uint32_t bs = 1 + rng() % 5;
            KvCells spec(64, 3, 50, bs), plain(64, 3, 50, bs);
            std::vector<Ids> hist(3);
            std::vector<bool> live(3, false);
            const std::vector<Ids> prompts{{1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 9}, {8, 8, 8}};
            for (int op = 0; op < 200; ++op) {
                const auto q = static_cast<int32_t>(rng() % 3);
                auto& h = hist[size_t(q)];
                if (!live[size_t(q)]) {
                    h = prompts[rng() % prompts.size()];
                    const uint32_t limit = uint32_t(h.size()) - 1;
                    const uint32_t got = spec.seq_reuse_cached(q, h, limit);
                    QCOMPARE(plain.seq_reuse_cached(q, h, limit), got);
                    if (spec.blocks_needed(q, uint32_t(h.size()) - got) > spec.n_free_blocks()) {
                        spec.seq_rm(q);
                        plain.seq_rm(q);
                        continue;
                    }
                    const Ids rest(h.begin() + got, h.end());
                    feed(spec, q, rest);
                    feed(plain, q, rest);
                    live[size_t(q)] = true;
                } else if (rng() % 8 == 0 || h.size() > 40) {
                    spec.seq_rm(q);
                    plain.seq_rm(q);
                    live[size_t(q)] = false;
                } else {
                    const uint32_t n_acc = 1 + rng() % 3;
                    if (spec.blocks_needed(q, n_acc) > spec.n_free_blocks()) continue;
                    Ids acc, draft;
                    for (uint32_t i = 0; i < n_acc; ++i) acc.push_back(int32_t(rng() % 50));
                    const uint32_t room = spec.seq_room_without_eviction(q);
                    const uint32_t n_draft = room > n_acc ? rng() % (room - n_acc + 1) : 0;
                    for (uint32_t i = 0; i < std::min(n_draft, 9u); ++i)
                        draft.push_back(int32_t(rng() % 50));
                    Ids both = acc;
                    both.insert(both.end(), draft.begin(), draft.end());
                    feed(spec, q, both);
                    spec.seq_truncate(q, uint32_t(h.size() + acc.size()));
                    feed(plain, q, acc);
                    h.insert(h.end(), acc.begin(), acc.end());
                }
                if (!(state(spec) == state(plain))) {
                    QFAIL(qPrintable(QString("seed %1 op %2: pools differ").arg(seed).arg(op)));
                }
                if (live[size_t(q)]) QCOMPARE(spec.seq_prefix_hash(q), chain(h, bs));
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestKvTruncate)
#include "test_kv_truncate.moc"
