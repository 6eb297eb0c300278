// KvCells: slot choice, validation and the attention mask, on hand-worked
// cases (expected masks written out by hand from the rule "same sequence
// and pos <= own pos").

#include <QtTest>
#include <cmath>
#include <vector>

#include "model/kv_cells.h"
#include "model/model.h"

using wb::model::Batch;
using wb::model::DecodeError;
using wb::model::KvCells;

namespace {

constexpr float kInf = INFINITY;
constexpr float O = 0.0f;   // may attend
constexpr float X = -kInf;  // masked

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
        QCOMPARE(slot_ids, (std::vector<uint32_t>{0, 1, 2}));
        QCOMPARE(cells.n_kv(slot_ids), 3u);
        const std::vector<float> want = {O, X, X,  //
                                         O, O, X,  //
                                         O, O, O};
        QCOMPARE(cells.build_mask(b, slot_ids, 3), want);
        // A wider n_kv just adds masked columns.
        const std::vector<float> wide = {O, X, X, X,  //
                                         O, O, X, X,  //
                                         O, O, O, X};
        QCOMPARE(cells.build_mask(b, slot_ids, 4), wide);
        cells.commit(b, slot_ids);
        QCOMPARE(cells.n_free(), 1u);
        QCOMPARE(cells.next_pos(0), 3);
    }

    void two_sequences_do_not_see_each_other() {
        KvCells cells(6, 2, 10);
        Batch b;
        b.add(1, 0, 0, true);  // seq 0 pos 0 -> cell 0
        b.add(2, 0, 1, true);  // seq 1 pos 0 -> cell 1
        b.add(3, 1, 0, true);  // seq 0 pos 1 -> cell 2
        const auto slot_ids = cells.find_slots(b);
        QCOMPARE(slot_ids, (std::vector<uint32_t>{0, 1, 2}));
        const std::vector<float> want = {O, X, X,  //
                                         X, O, X,  //
                                         O, X, O};
        QCOMPARE(cells.build_mask(b, slot_ids, 3), want);
        cells.commit(b, slot_ids);

        // Decode step: seq 1 continues at pos 1 and sees its cached cell 1.
        Batch d;
        d.add(4, 1, 1, true);
        const auto s2 = cells.find_slots(d);
        QCOMPARE(s2, (std::vector<uint32_t>{3}));
        QCOMPARE(cells.build_mask(d, s2, 4), (std::vector<float>{X, O, X, O}));
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
        QCOMPARE(s3, (std::vector<uint32_t>{0, 2}));
        QCOMPARE(cells.n_kv(s3), 4u);
        const std::vector<float> want3 = {O, X, X, X,  //
                                          X, O, O, O};
        QCOMPARE(cells.build_mask(r, s3, 4), want3);
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
