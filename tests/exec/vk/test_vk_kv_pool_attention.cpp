// The attention shaders reading K/V through the KV pool's block tables
// (model::KvCells expanded to a cell table), against a float64 reference
// that knows nothing of cells: on lavapipe, validation layer on.
//
// The pool is driven into the states a serving run produces: sequences
// whose blocks are not contiguous (fragmented), blocks two sequences share
// through the prefix cache, block tables out of order (blocks reused in LRU
// order after others were given back), and a cached, partly filled tail
// block taken over by a sequence that continues it. The K and V rows of a token are a
// fixed pseudo-random function of the token ids up to and including it (as
// real K/V are a function of the prefix), written into whatever cell the
// pool gives it; the reference attends over each sequence's rows by
// position, computed from its own token list. Cells never written hold NaN.

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "exec/vk/buffer.h"
#include "exec/vk/context.h"
#include "exec/vk/kernels.h"
#include "exec/vk/recorder.h"
#include "ggml/fp16.h"
#include "kv/kv_cells.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::vk;
using namespace wb::vk::test;
using model::Batch;
using model::KvCells;

namespace {

using Ids = std::vector<int32_t>;

/// K or V row ([kv_dim] f32) of the last token of `prefix`: depends on
/// every id of the prefix and its length.
std::vector<float> row_of(const Ids& prefix, size_t len, uint32_t kv_dim, bool is_v) {
    uint64_t h = 1469598103934665603ull ^ (is_v ? 0x5bd1e995ull : 0);
    for (size_t i = 0; i < len; ++i) h = (h ^ static_cast<uint32_t>(prefix[i])) * 1099511628211ull;
    std::mt19937_64 g(h ^ len);
    std::uniform_real_distribution<float> d(-2.0f, 2.0f);
    std::vector<float> r(kv_dim);
    for (float& x : r) x = d(g);
    return r;
}

struct PoolFixture {
    uint32_t kv_dim;
    KvCells cells;
    std::vector<Ids> toks;    // [n_seq] the ids each sequence holds, by position
    std::vector<float> k, v;  // [pool cells, kv_dim] the cache as the device will hold it
    PoolFixture(uint32_t n_ctx, uint32_t n_seq, uint32_t bs, uint32_t kv)
        : kv_dim(kv),
          cells(n_ctx, n_seq, 16, bs),
          toks(n_seq),
          k(size_t(cells.size()) * kv, std::nanf("")),
          v(size_t(cells.size()) * kv, std::nanf("")) {}

    /// Writes the K/V rows of `b`'s tokens into the cells the pool gives
    /// them (as kv_write does), records the ids, returns the cells.
    std::vector<uint32_t> place(const Batch& b, bool commit) {
        const std::vector<uint32_t> at = cells.find_slots(b);
        std::vector<Ids> after = toks;
        for (size_t i = 0; i < b.size(); ++i) after[size_t(b.seq_id[i])].push_back(b.token[i]);
        for (size_t i = 0; i < b.size(); ++i) {
            const Ids& seq = after[size_t(b.seq_id[i])];
            const auto kr = row_of(seq, size_t(b.pos[i]) + 1, kv_dim, false);
            const auto vr = row_of(seq, size_t(b.pos[i]) + 1, kv_dim, true);
            std::copy(kr.begin(), kr.end(), k.begin() + long(at[i]) * kv_dim);
            std::copy(vr.begin(), vr.end(), v.begin() + long(at[i]) * kv_dim);
        }
        if (commit) {
            cells.commit(b, at);
            toks = after;
        }
        return at;
    }
    void feed(int32_t seq, const Ids& ids) {
        Batch b;
        int32_t p = cells.next_pos(seq);
        for (int32_t t : ids) b.add(t, p++, seq, false);
        place(b, true);
    }
    /// A new prompt for empty `seq`: reuse what the cache has, feed the rest.
    uint32_t prompt(int32_t seq, const Ids& ids) {
        const uint32_t got = cells.seq_reuse_cached(seq, ids, uint32_t(ids.size() - 1));
        toks[size_t(seq)].assign(ids.begin(), ids.begin() + got);
        feed(seq, Ids(ids.begin() + got, ids.end()));
        return got;
    }
    void rm(int32_t seq) {
        cells.seq_rm(seq);
        toks[size_t(seq)].clear();
    }
};

Ids run(int32_t first, size_t n, int32_t step = 1) {
    Ids r;
    for (size_t i = 0; i < n; ++i) r.push_back((first + int32_t(i) * step) % 16);
    return r;
}

Ids cat(Ids a, const Ids& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

class TestVkKvPoolAttention : public QObject {
    Q_OBJECT
    std::unique_ptr<Context> ctx_;

  private slots:
    void initTestCase() {
        qInfo("random seed %llu (rerun with WB_TEST_SEED=<seed>)",
              static_cast<unsigned long long>(test_seed()));
        ContextOptions o;
        o.validation = validation_wanted();
        o.pipeline_cache = false;
        ctx_ = Context::create(o);
    }

    void cleanup() { expect_clean(*ctx_); }

    void block_table_attention_data() {
        QTest::addColumn<bool>("f16");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<bool>("row");
        QTest::addColumn<int>("n_split");
        for (const bool row : {false, true}) {
            const char* path = row ? " row" : " group";
            QTest::newRow((std::string("f32 hd8") + path).c_str()) << false << 8 << row << 1;
            QTest::newRow((std::string("f16 hd8") + path).c_str()) << true << 8 << row << 1;
            QTest::newRow((std::string("f32 hd64") + path).c_str()) << false << 64 << row << 1;
            QTest::newRow((std::string("f16 hd64 split 3") + path).c_str())
                << true << 64 << row << 3;
        }
    }

    void block_table_attention() {
        QFETCH(bool, f16);
        QFETCH(int, head_dim);
        QFETCH(bool, row);
        QFETCH(int, n_split);
        const uint32_t hd = uint32_t(head_dim), n_head = 4, n_head_kv = 2, bs = 8;
        const uint32_t kv_dim = n_head_kv * hd;
        PoolFixture f(128, 4, bs, kv_dim);  // 16 blocks of 8

        // A: 30 tokens in seq 0 (blocks 0-3, the last holding 6); B: 20 in seq 1 (4-6).
        const Ids A = run(1, 30, 3), B = run(2, 20, 5);
        f.prompt(0, A);
        f.prompt(1, B);
        f.rm(0);  // A's blocks cached, tail first in LRU order: 3, 2, 1, 0
        // seq 2: all of A then its own: shares blocks 0-2, takes over A's
        // partly filled tail (block 3) and writes on into it.
        const Ids A2 = cat(A, run(7, 11, 1));
        QCOMPARE(f.prompt(2, A2), 30u);
        QCOMPARE(f.cells.seq_blocks(2)[3], 3u);
        // seq 3: A's first 24 tokens (blocks 0-2, now shared by seq 2 and 3) and its own.
        const Ids A3 = cat(Ids(A.begin(), A.begin() + 24), run(11, 17, 7));
        QCOMPARE(f.prompt(3, A3), 24u);
        QCOMPARE(f.cells.pool().ref(0), 2u);
        f.rm(1);  // B's blocks 6, 5, 4 cached
        // seq 0 anew, 48 tokens: the 4 free blocks first, then B's in LRU order.
        f.prompt(0, run(5, 48, 1));
        const auto& t0 = f.cells.seq_blocks(0);
        QVERIFY(!std::is_sorted(t0.begin(), t0.end()));  // out of order
        const auto& t2 = f.cells.seq_blocks(2);
        QVERIFY(t2.back() - t2.front() + 1 > t2.size());  // fragmented

        // The ubatch: a decode token of seq 2, a prefill chunk of seq 0 that
        // opens a new block (B's first, evicted), two tokens of seq 3.
        Batch b;
        b.add(9, f.cells.next_pos(2), 2, true);
        for (int i = 0; i < 5; ++i) b.add(int32_t(i), f.cells.next_pos(0) + i, 0, true);
        b.add(4, f.cells.next_pos(3), 3, true);
        b.add(6, f.cells.next_pos(3) + 1, 3, true);
        const std::vector<uint32_t> at = f.place(b, false);
        const model::KvCellTable table = f.cells.cell_table(b, at);
        std::vector<Ids> after = f.toks;  // each sequence's ids once the batch is in
        for (size_t i = 0; i < b.size(); ++i) after[size_t(b.seq_id[i])].push_back(b.token[i]);

        Context& c = *ctx_;
        const uint32_t n_tok = uint32_t(b.size());
        const uint32_t q_stride = n_head * hd, o_stride = n_head * hd;
        const auto q = rand_vec(size_t(n_tok) * q_stride, -2.0f, 2.0f);
        std::vector<float> kf = f.k, vf = f.v;
        std::vector<uint16_t> kh(kf.size()), vh(vf.size());
        if (f16) {
            for (size_t i = 0; i < kf.size(); ++i) {
                kh[i] = ggml::fp32_to_fp16(kf[i]);
                vh[i] = ggml::fp32_to_fp16(vf[i]);
            }
        }
        Buffer qb(c, q.size() * 4, Memory::Device, Purpose::Activations);
        qb.upload(q.data(), q.size() * 4);
        Buffer ob(c, size_t(n_tok) * o_stride * 4, Memory::Device, Purpose::Activations);
        ob.fill(kNaN);
        Buffer tb(c, table.cells.size() * 4, Memory::Host, Purpose::Activations);
        Buffer sb(c, table.spans.size() * 4, Memory::Host, Purpose::Activations);
        tb.upload(table.cells.data(), table.cells.size() * 4);
        sb.upload(table.spans.data(), table.spans.size() * 4);
        Buffer kb(c, kf.size() * (f16 ? 2 : 4), Memory::Device, Purpose::KvCache);
        Buffer vb(c, vf.size() * (f16 ? 2 : 4), Memory::Device, Purpose::KvCache);
        if (f16) {
            kb.upload(kh.data(), kh.size() * 2);
            vb.upload(vh.data(), vh.size() * 2);
        } else {
            kb.upload(kf.data(), kf.size() * 4);
            vb.upload(vf.data(), vf.size() * 4);
        }
        AttentionShape s;
        s.n_tok = n_tok;
        s.n_head = n_head;
        s.n_head_kv = n_head_kv;
        s.head_dim = hd;
        s.kv_stride = kv_dim;
        s.q_stride = q_stride;
        s.o_stride = o_stride;
        s.scale = float(1.0 / std::sqrt(double(hd)));
        for (uint32_t t = 0; t < n_tok; ++t)
            s.max_span = std::max(s.max_span, table.spans[2 * t + 1]);
        Kernels k(c);
        AttentionPlan plan = k.plan_attention(s, row ? AttnPath::Row : AttnPath::Group);
        if (uint32_t(n_split) > plan.n_split) {
            plan.chunk = (s.max_span + uint32_t(n_split) - 1) / uint32_t(n_split);
            plan.n_split = (s.max_span + plan.chunk - 1) / plan.chunk;
        }
        Buffer part(c, std::max<uint64_t>(Kernels::attention_partials_bytes(s, plan), 4),
                    Memory::Device, Purpose::Activations);
        part.fill(kNaN);
        Recorder rec(c);
        rec.begin(false);
        k.attention(rec, qb, kb, vb, tb, sb, ob, s, f16 ? KvFormat::F16 : KvFormat::F32, plan,
                    &part);
        rec.submit();

        // float64 over each token's own sequence, positions 0..pos, rows by
        // prefix (rounded to f16 as the cache holds them).
        auto cache_value = [&](float x) {
            return f16 ? double(ggml::fp16_to_fp32(ggml::fp32_to_fp16(x))) : double(x);
        };
        std::vector<double> want(size_t(n_tok) * o_stride);
        for (uint32_t t = 0; t < n_tok; ++t) {
            const Ids& seq = after[size_t(b.seq_id[t])];
            const uint32_t len = uint32_t(b.pos[t]) + 1;
            QCOMPARE(table.spans[2 * t + 1], len);
            std::vector<std::vector<float>> kr(len), vr(len);
            for (uint32_t p = 0; p < len; ++p) {
                kr[p] = row_of(seq, p + 1, kv_dim, false);
                vr[p] = row_of(seq, p + 1, kv_dim, true);
            }
            for (uint32_t h = 0; h < n_head; ++h) {
                const uint32_t kvh = h / (n_head / n_head_kv);
                std::vector<double> sc(len);
                double mx = -INFINITY;
                for (uint32_t p = 0; p < len; ++p) {
                    double d = 0.0;
                    for (uint32_t e = 0; e < hd; ++e)
                        d +=
                            double(q[t * q_stride + h * hd + e]) * cache_value(kr[p][kvh * hd + e]);
                    sc[p] = d * double(s.scale);
                    mx = std::max(mx, sc[p]);
                }
                double sum = 0.0;
                for (double& x : sc) sum += (x = std::exp(x - mx));
                for (uint32_t e = 0; e < hd; ++e) {
                    double o = 0.0;
                    for (uint32_t p = 0; p < len; ++p)
                        o += sc[p] / sum * cache_value(vr[p][kvh * hd + e]);
                    want[size_t(t) * o_stride + h * hd + e] = o;
                }
            }
        }
        std::vector<float> got(want.size());
        ob.download(got.data(), got.size() * 4);
        const double err = rel_error(got, want);
        QVERIFY2(err <= 1e-5, qPrintable(QString("rel error %1").arg(err)));
    }
};

QTEST_GUILESS_MAIN(TestVkKvPoolAttention)
#include "test_vk_kv_pool_attention.moc"
