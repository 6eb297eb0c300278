// KvCells: slot choice, validation and the cell table attention reads, on
// hand-worked cases (expected tables written out by hand from the rule
// "token i attends to the cells of its own sequence with pos <= its pos,
// ordered by pos") and on random batch sequences checked against that rule
// evaluated by brute force over every cell.

#include <QtTest>
#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "model/kv_cells.h"
#include "model/model.h"

using wb::model::Batch;
using wb::model::DecodeError;
using wb::model::KvCells;
using wb::model::KvCellTable;

namespace {

using Cells = std::vector<uint32_t>;

/// Everything observable about a KvCells, to prove a failed call changed nothing.
struct Snapshot {
    std::vector<int32_t> pos, seq, next;
    uint32_t n_free = 0;
    bool operator==(const Snapshot&) const = default;
};

Snapshot snap(const KvCells& c) {
    Snapshot s;
    for (uint32_t i = 0; i < c.size(); ++i) {
        s.pos.push_back(c.cell(i).pos);
        s.seq.push_back(c.cell(i).seq_id);
    }
    for (uint32_t q = 0; q < c.n_seq_max(); ++q)
        s.next.push_back(c.next_pos(static_cast<int32_t>(q)));
    s.n_free = c.n_free();
    return s;
}

/// The cells token `i` of `t` attends to, in table order.
Cells span_of(const KvCellTable& t, size_t i) {
    const auto first = t.cells.begin() + t.spans[2 * i];
    return Cells(first, first + t.spans[2 * i + 1]);
}

}  // namespace

class TestKvCells : public QObject {
    Q_OBJECT
  private slots:
    void one_sequence_is_causal() {
        KvCells cells(4, 1, 10);
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
        QCOMPARE(cells.n_free(), 1u);
        QCOMPARE(cells.next_pos(0), 3);

        // The next decode step reads the 3 cached cells and its own.
        Batch d;
        d.add(8, 3, 0, true);
        const auto s2 = cells.find_slots(d);
        QCOMPARE(s2, (Cells{3}));
        const KvCellTable t2 = cells.cell_table(d, s2);
        QCOMPARE(span_of(t2, 0), (Cells{0, 1, 2, 3}));
    }

    void two_sequences_do_not_see_each_other() {
        KvCells cells(6, 2, 10);
        Batch b;
        b.add(1, 0, 0, true);  // seq 0 pos 0 -> cell 0
        b.add(2, 0, 1, true);  // seq 1 pos 0 -> cell 1
        b.add(3, 1, 0, true);  // seq 0 pos 1 -> cell 2
        const auto slot_ids = cells.find_slots(b);
        QCOMPARE(slot_ids, (Cells{0, 1, 2}));
        const KvCellTable t = cells.cell_table(b, slot_ids);
        // One run per sequence in order of first appearance: seq 0 {0, 2}, seq 1 {1}.
        QCOMPARE(t.cells, (Cells{0, 2, 1}));
        QCOMPARE(t.spans, (Cells{0, 1, 2, 1, 0, 2}));
        cells.commit(b, slot_ids);

        // Decode step: seq 1 continues at pos 1 and sees its cached cell 1.
        Batch d;
        d.add(4, 1, 1, true);
        const auto s2 = cells.find_slots(d);
        QCOMPARE(s2, (Cells{3}));
        const KvCellTable t2 = cells.cell_table(d, s2);
        QCOMPARE(t2.cells, (Cells{1, 3}));
        QCOMPARE(t2.spans, (Cells{0, 2}));
        cells.commit(d, s2);

        // Removing seq 0 frees cells 0 and 2; seq 0 restarts at pos 0 in
        // the lowest free cell and sees only itself.
        cells.seq_rm(0);
        QCOMPARE(cells.n_free(), 4u);
        QCOMPARE(cells.next_pos(0), 0);
        QCOMPARE(cells.next_pos(1), 2);
        Batch r;
        r.add(9, 0, 0, true);
        r.add(8, 2, 1, true);
        const auto s3 = cells.find_slots(r);
        QCOMPARE(s3, (Cells{0, 2}));
        const KvCellTable t3 = cells.cell_table(r, s3);
        QCOMPARE(span_of(t3, 0), (Cells{0}));
        QCOMPARE(span_of(t3, 1), (Cells{1, 3, 2}));  // seq 1 by position: 0, 1, 2
    }

    // Random prefill chunks, decode steps and removals over 5 sequences in a
    // small pool, so cells of different sequences interleave. After each
    // commit, every token's span must equal the rule evaluated by brute force
    // over all cells: same sequence, pos <= own pos, ordered by pos.
    void random_batches_follow_the_rule() {
        std::mt19937 rng(20261130);
        const uint32_t n_ctx = 64, n_seq = 5;
        KvCells cells(n_ctx, n_seq, 100);
        size_t checked = 0;
        for (int step = 0; step < 400; ++step) {
            if (rng() % 7 == 0) {
                cells.seq_rm(static_cast<int32_t>(rng() % n_seq));
                continue;
            }
            Batch b;
            std::vector<int32_t> next(n_seq);
            for (uint32_t q = 0; q < n_seq; ++q) next[q] = cells.next_pos(int32_t(q));
            const uint32_t n_tok = 1 + rng() % 6;
            for (uint32_t i = 0; i < n_tok; ++i) {
                const int32_t q = static_cast<int32_t>(rng() % n_seq);
                b.add(1, next[size_t(q)]++, q, true);
            }
            if (b.size() > cells.n_free()) {
                cells.seq_rm(static_cast<int32_t>(rng() % n_seq));
                continue;
            }
            const auto slot_ids = cells.find_slots(b);
            const KvCellTable t = cells.cell_table(b, slot_ids);
            cells.commit(b, slot_ids);
            for (size_t i = 0; i < b.size(); ++i) {
                std::map<int32_t, uint32_t> by_pos;  // pos -> cell, for the rule
                for (uint32_t c = 0; c < n_ctx; ++c) {
                    const auto& cell = cells.cell(c);
                    if (cell.seq_id == b.seq_id[i] && cell.pos <= b.pos[i]) {
                        QVERIFY(by_pos.emplace(cell.pos, c).second);  // one cell per position
                    }
                }
                Cells want;
                for (const auto& [pos, c] : by_pos) want.push_back(c);
                QCOMPARE(span_of(t, i), want);
                ++checked;
            }
        }
        QVERIFY(checked > 300);
    }

    void cell_table_rejects_a_batch_that_does_not_continue() {
        KvCells cells(4, 2, 10);
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
        KvCells cells(4, 2, 10);
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

    void commit_rejects_used_cells() {
        KvCells cells(2, 1, 10);
        Batch b;
        b.add(1, 0, 0, true);
        const auto slot_ids = cells.find_slots(b);
        cells.commit(b, slot_ids);
        Batch c;
        c.add(1, 1, 0, true);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cells.commit(c, slot_ids));
        QCOMPARE(cells.n_free(), 1u);
    }
};

QTEST_GUILESS_MAIN(TestKvCells)
#include "test_kv_cells.moc"
