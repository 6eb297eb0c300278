// Every shader against a float64 CPU reference on lavapipe with the
// validation layer on: fresh random inputs (seed printed), outputs poisoned
// with NaN first, sizes that are not multiples of the workgroup size, both
// quant access variants (uint16 / uint32 words), and weights split across
// bindings by a forced small binding limit.
// Every type the shaders read (the VK rows of the type table) through
// every weight kernel, the weights made by the type's quantizer from random
// floats. Tolerances: rel. error <= 1e-5 on f32 paths, <= 1e-3 on other
// types against the CPU-dequantized weights in float64.

#include <QtTest>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "common/short_run.h"
#include "exec/vk/buffer.h"
#include "exec/vk/context.h"
#include "exec/vk/error.h"
#include "exec/vk/kernels.h"
#include "exec/vk/recorder.h"
#include "exec/vk/weights.h"
#include "ggml/fp16.h"
#include "ggml/types.h"
#include "vk_test_util.h"

using namespace wb;
using namespace wb::vk;
using namespace wb::vk::test;

namespace {

/// The ggml type whose layout a KV cache format has (ggml/types.def: F32 0,
/// F16 1, Q4_0 2, Q8_0 8): its reference quantizer gives the expected bytes.
uint32_t ggml_type_of(KvFormat f) {
    switch (f) {
        case KvFormat::F32:
            return static_cast<uint32_t>(ggml::Type::F32);
        case KvFormat::F16:
            return static_cast<uint32_t>(ggml::Type::F16);
        case KvFormat::Q8_0:
            return static_cast<uint32_t>(ggml::Type::Q8_0);
        case KvFormat::Q4_0:
            return static_cast<uint32_t>(ggml::Type::Q4_0);
    }
    return 0;
}

/// Random weight of `type` in ggml layout plus its dequantized values.
struct HostWeight {
    std::vector<uint8_t> bytes;  ///< [rows, row_bytes]
    std::vector<float> deq;      ///< [rows, ne0]
};

/// A random [rows, ne0] weight of `type`: random floats (each row with its
/// own scale, so blocks see varied ranges) through the type table's
/// quantizer (ggml's reference), and its CPU-dequantized values, which are
/// what the shaders must reproduce.
HostWeight make_weight(ggml::Type type, uint64_t ne0, uint64_t rows) {
    const uint32_t id = static_cast<uint32_t>(type);
    const size_t rb = ggml::row_bytes(id, ne0);
    HostWeight w;
    w.bytes.resize(rb * rows);
    w.deq.resize(ne0 * rows);
    for (uint64_t r = 0; r < rows; ++r) {
        const float scale = rand_float(0.02f, 1.0f);
        std::vector<float> v = rand_vec(ne0);
        for (float& x : v) x *= scale;
        ggml::quantize_row(id, v.data(), w.bytes.data() + r * rb, ne0);
        ggml::dequantize_row(id, w.bytes.data() + r * rb, w.deq.data() + r * ne0, ne0);
    }
    return w;
}

/// Row length for a test of `type`: not a multiple of the workgroup size,
/// a whole number of blocks (several 32-value units or 256-value
/// super-blocks), odd for F16 so rows start mid-word.
uint32_t test_ne0(ggml::Type type, uint32_t plain, uint32_t units) {
    const ggml::TypeTraits* t = ggml::type_traits(type);
    if (t->block_size == 1) return type == ggml::Type::F16 ? plain | 1u : plain;
    return t->block_size == 32 ? units * 32 : (units / 4 + 1) * t->block_size;
}

std::string lower(const char* s) {
    std::string r(s);
    for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::vector<float> download(const Buffer& b, size_t n) {
    std::vector<float> v(n);
    b.download(v.data(), n * sizeof(float));
    return v;
}

Buffer upload_floats(Context& ctx, const std::vector<float>& v) {
    Buffer b(ctx, v.size() * sizeof(float), Memory::Device, Purpose::Activations);
    b.upload(v.data(), v.size() * sizeof(float));
    return b;
}

Buffer upload_ints(Context& ctx, const std::vector<int32_t>& v) {
    Buffer b(ctx, v.size() * sizeof(int32_t), Memory::Host, Purpose::Activations);
    b.upload(v.data(), v.size() * sizeof(int32_t));
    return b;
}

Buffer poisoned(Context& ctx, size_t n_floats) {
    Buffer b(ctx, n_floats * sizeof(float), Memory::Device, Purpose::Activations);
    b.fill(kNaN);
    return b;
}

/// Attention shape with dense rows (strides = head counts * head_dim).
AttentionShape attn_shape(uint32_t n_tok, uint32_t n_head, uint32_t n_head_kv, uint32_t hd,
                          uint32_t max_span) {
    AttentionShape s;
    s.n_tok = n_tok;
    s.n_head = n_head;
    s.n_head_kv = n_head_kv;
    s.head_dim = hd;
    s.kv_stride = n_head_kv * hd;
    s.q_stride = n_head * hd;
    s.o_stride = n_head * hd;
    s.scale = float(1.0 / std::sqrt(double(hd)));
    s.max_span = max_span;
    return s;
}

double tol_for(ggml::Type t) {
    return t == ggml::Type::F32 ? 1e-5 : 1e-3;
}

/// Every type the shaders read, from the type table; in the short run
/// (tests/common/short_run.h) one type per block shape: per value (F16),
/// 32-value blocks (Q4_0), 256-value blocks with and without the texel
/// variant (Q4_K, Q6_K).
std::vector<ggml::Type> vk_types() {
    std::vector<ggml::Type> all = ggml::supported_types(ggml::Backend::Vulkan);
    if (!wbtest::short_run()) return all;
    std::erase_if(all, [](ggml::Type t) {
        return t != ggml::Type::F16 && t != ggml::Type::Q4_0 && t != ggml::Type::Q4_K &&
               t != ggml::Type::Q6_K;
    });
    return all;
}

}  // namespace

class TestVkKernels : public QObject {
    Q_OBJECT

    // Three devices views of lavapipe: default (uint16 quant reads), words
    // (uint32 reads), and words with a tiny binding limit (weights in pieces).
    std::unique_ptr<Context> ctx_[3];

    Context& ctx(int i) { return *ctx_[i]; }

  private slots:
    void initTestCase() {
        qInfo("random seed %llu (rerun with WB_TEST_SEED=<seed>)",
              static_cast<unsigned long long>(test_seed()));
        ContextOptions o;
        o.validation = validation_wanted();
        o.pipeline_cache = false;
        ctx_[0] = Context::create(o);
        o.force_word_access = true;
        ctx_[1] = Context::create(o);
        o.binding_limit = 4096;  // bytes: forces several pieces per test weight
        ctx_[2] = Context::create(o);
        qInfo("device: %s, 16-bit storage used: %d", ctx(0).info().name.c_str(),
              ctx(0).use_16bit_storage());
    }

    void cleanup() {
        for (auto& c : ctx_)
            if (c) expect_clean(*c);
    }

    void mul_mat_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("path");
        QTest::addColumn<int>("ctx");
        QTest::addColumn<int>("n_tok");
        QTest::addColumn<bool>("subgroup");  // Vec only: the subgroupAdd variant
        QTest::addColumn<int>("long_row");   // ne0; 0: a small row, not a multiple of the workgroup
        const char* ctx_names[] = {"u16", "u32", "split"};
        for (const ggml::Type t : vk_types()) {
            const std::string tn = lower(ggml::type_traits(t)->upper);
            for (int c = 0; c < 3; ++c) {
                for (int path : {int(MatPath::Vec), int(MatPath::VecRow), int(MatPath::Mat)}) {
                    // mat x vec: 19 tokens = two full groups of 8 and a partial one.
                    const int n_tok = path == int(MatPath::Mat) ? 70 : 19;
                    const char* pn = path == int(MatPath::Vec)      ? " vec "
                                     : path == int(MatPath::VecRow) ? " vecrow "
                                                                    : " mat ";
                    const std::string name = std::string(tn) + pn + ctx_names[c];
                    QTest::newRow(name.c_str()) << int(t) << path << c << n_tok << false << 0;
                    if (path == int(MatPath::Vec)) {
                        const std::string sg = std::string(tn) + " vec-subgroup " + ctx_names[c];
                        QTest::newRow(sg.c_str()) << int(t) << path << c << n_tok << true << 0;
                    }
                    if (path == int(MatPath::VecRow) && c != 1) {
                        // The texel variant (which reads no words, so "u32"
                        // adds nothing): one token (decode), two, and 19
                        // (groups of 4 and a partial one); split weights at 19.
                        for (int nt : {1, 2, 19}) {
                            if (c == 2 && nt != 19) continue;
                            const std::string tx = std::string(tn) + " vectexel " + ctx_names[c] +
                                                   " n_tok " + std::to_string(nt);
                            QTest::newRow(tx.c_str())
                                << int(t) << int(MatPath::VecTexel) << c << nt << false << 0;
                        }
                        if (c == 0 && (t == ggml::Type::F16 || t == ggml::Type::Q4_0 ||
                                       t == ggml::Type::Q6_K)) {
                            const std::string big = std::string(tn) + " vectexel ne0 28672";
                            QTest::newRow(big.c_str())
                                << int(t) << int(MatPath::VecTexel) << c << n_tok << false << 28672;
                        }
                    }
                    if (c == 0 &&
                        (t == ggml::Type::F16 || t == ggml::Type::Q4_0 || t == ggml::Type::Q6_K)) {
                        // Rows as long as a large model's FFN (llama-2-70B's
                        // n_ff 28672): lavapipe ends a shader's loops after
                        // 65535 iterations in all, silently. One type of each
                        // loop shape: per value, 32-value and 256-value blocks.
                        const std::string big = std::string(tn) + pn + "ne0 28672";
                        QTest::newRow(big.c_str())
                            << int(t) << path << c << n_tok << false << 28672;
                    }
                }
            }
        }
    }

    void mul_mat() {
        QFETCH(int, type);
        QFETCH(int, path);
        QFETCH(int, ctx);
        QFETCH(int, n_tok);
        QFETCH(bool, subgroup);
        QFETCH(int, long_row);
        const auto t = static_cast<ggml::Type>(type);
        Context& c = this->ctx(ctx);
        if (subgroup && !c.info().subgroup_arithmetic)
            QSKIP("the device has no subgroup arithmetic in compute shaders");
        // ne0 not a multiple of the workgroup; odd for F16 so rows start mid-word.
        // The texel variant needs whole 32-value units: 7 (rows of Q4_0 and
        // Q8_0 then start at every even offset within a 16-byte texel).
        const bool texel = path == int(MatPath::VecTexel);
        const uint32_t ne0 =
            long_row ? uint32_t(long_row)
            : texel  ? (ggml::type_traits(t)->block_size == 1 ? 7 * 32 : test_ne0(t, 0, 7))
                     : test_ne0(t, 100, 5);
        const uint32_t rows = long_row ? 9 : 77;
        const HostWeight hw = make_weight(t, ne0, rows);
        const DeviceWeight w =
            DeviceWeight::upload(c, "test.weight", uint32_t(type), ne0, rows, hw.bytes.data());
        if (ctx == 2)
            QVERIFY2(w.pieces().size() > 1, "the forced binding limit must split the weight");

        // x with a leading offset and a stride larger than ne0 (whole texels
        // for the texel variant); y likewise.
        const uint32_t x_off = texel ? 8 : 5, x_stride = ne0 + (texel ? 4 : 3), y_off = 7,
                       y_stride = rows + 2;
        const auto x = rand_vec(x_off + size_t(n_tok) * x_stride);
        Buffer xb = upload_floats(c, x);
        Buffer yb = poisoned(c, y_off + size_t(n_tok) * y_stride);

        Kernels k(c, /*allow_subgroup_ops=*/subgroup);
        QCOMPARE(k.uses_subgroup_ops(), subgroup);
        if (texel && !k.texel_ok(w, x_off, x_stride)) {
            // Only the types shaders/CMakeLists.txt leaves out lack the
            // texel variant.
            QVERIFY(t == ggml::Type::Q2_K || t == ggml::Type::Q3_K || t == ggml::Type::Q6_K ||
                    t == ggml::Type::IQ4_NL);
            QSKIP("no texel variant for this type");
        }
        Recorder rec(c);
        rec.begin(false);
        k.mul_mat(rec, w, xb, x_off, x_stride, yb, y_off, y_stride, uint32_t(n_tok), MatPath(path));
        rec.submit();

        const auto y = download(yb, y_off + size_t(n_tok) * y_stride);
        std::vector<float> got;
        std::vector<double> want;
        for (int tk = 0; tk < n_tok; ++tk) {
            for (uint32_t r = 0; r < rows; ++r) {
                double s = 0.0;
                for (uint32_t i = 0; i < ne0; ++i)
                    s += double(hw.deq[r * ne0 + i]) * double(x[x_off + size_t(tk) * x_stride + i]);
                want.push_back(s);
                got.push_back(y[y_off + size_t(tk) * y_stride + r]);
            }
        }
        const double err = rel_error(got, want);
        QVERIFY2(err <= tol_for(t), qPrintable(QString("rel error %1").arg(err)));
    }

    void get_rows_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("ctx");
        for (const ggml::Type t : vk_types()) {
            for (int c = 0; c < 3; ++c) {
                const std::string name =
                    lower(ggml::type_traits(t)->upper) + " " + std::to_string(c);
                QTest::newRow(name.c_str()) << int(t) << c;
            }
        }
    }

    void get_rows() {
        QFETCH(int, type);
        QFETCH(int, ctx);
        const auto t = static_cast<ggml::Type>(type);
        Context& c = this->ctx(ctx);
        const uint32_t ne0 = test_ne0(t, 299, 9), rows = 53;
        const HostWeight hw = make_weight(t, ne0, rows);
        const DeviceWeight w =
            DeviceWeight::upload(c, "token_embd", uint32_t(type), ne0, rows, hw.bytes.data());
        const std::vector<int32_t> ids = {52, 0, 17, 17, 3, 40, 1};
        Buffer idb = upload_ints(c, ids);
        Buffer yb = poisoned(c, ids.size() * ne0);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        k.get_rows(rec, w, idb, uint32_t(ids.size()), yb);
        rec.submit();
        const auto y = download(yb, ids.size() * ne0);
        std::vector<double> want;
        for (int32_t id : ids)
            for (uint32_t i = 0; i < ne0; ++i) want.push_back(hw.deq[size_t(id) * ne0 + i]);
        const double err = rel_error(y, want);
        QVERIFY2(err <= 1e-6,
                 qPrintable(QString("rel error %1").arg(err)));  // dequantization is exact
    }

    void rms_norm() {
        Context& c = ctx(0);
        const uint32_t n = 100, n_tok = 5;
        const auto x = rand_vec(n * n_tok, -3.0f, 3.0f), g = rand_vec(n);
        Buffer xb = upload_floats(c, x), gb = upload_floats(c, g), yb = poisoned(c, n * n_tok);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        k.rms_norm(rec, xb, gb, yb, n, n_tok, 1e-5f);
        rec.submit();
        std::vector<double> want;
        for (uint32_t t = 0; t < n_tok; ++t) {
            double ss = 0.0;
            for (uint32_t i = 0; i < n; ++i) ss += double(x[t * n + i]) * double(x[t * n + i]);
            const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
            for (uint32_t i = 0; i < n; ++i)
                want.push_back(double(x[t * n + i]) * scale * double(g[i]));
        }
        const double err = rel_error(download(yb, n * n_tok), want);
        QVERIFY2(err <= 1e-5, qPrintable(QString("rel error %1").arg(err)));
    }

    // x += b then y = RMSNorm(x) * g in one dispatch: both the updated
    // residual and the norm against float64 (the sum rounded to f32 first,
    // as the shader stores it). 300 > the reduction workgroup: several
    // elements per lane.
    void add_rms_norm() {
        Context& c = ctx(0);
        const uint32_t n = 300, n_tok = 7;
        const auto x = rand_vec(n * n_tok, -3.0f, 3.0f), b = rand_vec(n * n_tok, -3.0f, 3.0f),
                   g = rand_vec(n);
        Buffer xb = upload_floats(c, x), bb = upload_floats(c, b), gb = upload_floats(c, g),
               yb = poisoned(c, n * n_tok);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        k.add_rms_norm(rec, xb, bb, gb, yb, n, n_tok, 1e-5f);
        rec.submit();
        std::vector<double> want_x, want_y;
        for (uint32_t t = 0; t < n_tok; ++t) {
            double ss = 0.0;
            for (uint32_t i = 0; i < n; ++i) {
                const double v = double(x[t * n + i] + b[t * n + i]);  // f32 sum
                want_x.push_back(v);
                ss += v * v;
            }
            const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
            for (uint32_t i = 0; i < n; ++i)
                want_y.push_back(want_x[t * n + i] * scale * double(g[i]));
        }
        const double ex = rel_error(download(xb, n * n_tok), want_x);
        const double ey = rel_error(download(yb, n * n_tok), want_y);
        QVERIFY2(ex == 0.0, qPrintable(QString("residual rel error %1").arg(ex)));
        QVERIFY2(ey <= 1e-5, qPrintable(QString("norm rel error %1").arg(ey)));
    }

    void rope_data() {
        QTest::addColumn<bool>("neox");
        QTest::addColumn<int>("n_rot");
        QTest::newRow("normal full") << false << 8;
        QTest::newRow("neox full") << true << 8;
        QTest::newRow("normal partial") << false << 4;
        QTest::newRow("neox partial") << true << 4;
    }

    void rope() {
        QFETCH(bool, neox);
        QFETCH(int, n_rot);
        Context& c = ctx(0);
        // Q: 5 heads in rows of `stride` (wider than the heads); K: 2 heads
        // from column k_offset of rows of k_stride; both rotated by one dispatch.
        const uint32_t n_tok = 6, n_head = 5, n_head_kv = 2, hd = 8;
        const uint32_t offset = 2, stride = n_head * hd + 11, k_offset = 3,
                       k_stride = n_head_kv * hd + 7;
        const auto x = rand_vec(offset + n_tok * stride);
        const auto kx = rand_vec(k_offset + n_tok * k_stride);
        std::vector<int> pos(n_tok);
        std::uniform_int_distribution<int> pd(0, 4000);
        for (int& p : pos) p = pd(rng());
        const uint32_t half = uint32_t(n_rot) / 2;
        std::vector<float> cs(n_tok * half * 2);
        for (uint32_t t = 0; t < n_tok; ++t) {
            for (uint32_t i = 0; i < half; ++i) {
                const double th = pos[t] * std::pow(10000.0, -2.0 * i / n_rot);
                cs[(t * half + i) * 2] = float(std::cos(th));
                cs[(t * half + i) * 2 + 1] = float(std::sin(th));
            }
        }
        Buffer xb = upload_floats(c, x), kb = upload_floats(c, kx), csb = upload_floats(c, cs);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        k.rope_qk(rec, xb, kb, csb, n_tok, n_head, n_head_kv, hd, uint32_t(n_rot), stride, k_stride,
                  neox, k_offset, offset);
        rec.submit();
        // float64 rotation of the heads of `v` (the cos/sin the shader got).
        auto rotated = [&](const std::vector<float>& v, uint32_t heads, uint32_t off,
                           uint32_t str) {
            std::vector<double> want(v.begin(), v.end());
            for (uint32_t t = 0; t < n_tok; ++t) {
                for (uint32_t h = 0; h < heads; ++h) {
                    const uint32_t base = off + t * str + h * hd;
                    for (uint32_t i = 0; i < half; ++i) {
                        const uint32_t a = neox ? base + i : base + 2 * i;
                        const uint32_t b = neox ? base + i + half : base + 2 * i + 1;
                        const double co = cs[(t * half + i) * 2], si = cs[(t * half + i) * 2 + 1];
                        want[a] = double(v[a]) * co - double(v[b]) * si;
                        want[b] = double(v[a]) * si + double(v[b]) * co;
                    }
                }
            }
            return want;
        };
        const double err = rel_error(download(xb, x.size()), rotated(x, n_head, offset, stride));
        QVERIFY2(err <= 1e-5, qPrintable(QString("rel error %1").arg(err)));
        const double ek =
            rel_error(download(kb, kx.size()), rotated(kx, n_head_kv, k_offset, k_stride));
        QVERIFY2(ek <= 1e-5, qPrintable(QString("K rel error %1").arg(ek)));
    }

    // Every cache format (vk::KvFormat). F32 must be exact, F16 within
    // binary16 rounding; the block formats must give ggml's reference
    // quantizer's bytes (ggml::quantize_row, bit for bit as ggml's
    // quantize_row_q8_0_ref / _q4_0_ref): the scale within one f16 step and
    // each quant within one step of the reference (the GPU's 1/d may
    // differ in its last bit), at most 1% of quants not equal. n = 96 is 3
    // blocks a row, so rows of odd cells start at 2 mod 4 bytes and cells
    // 12 and 13 share a word; the bytes of cells not written must keep the
    // poison (a shader writing whole words would clobber a neighbour).
    void kv_write_data() {
        QTest::addColumn<int>("kv");
        QTest::addColumn<int>("n");
        QTest::newRow("f32") << int(KvFormat::F32) << 66;
        QTest::newRow("f16") << int(KvFormat::F16) << 66;
        QTest::newRow("q8_0") << int(KvFormat::Q8_0) << 96;
        QTest::newRow("q4_0") << int(KvFormat::Q4_0) << 96;
    }

    void kv_write() {
        QFETCH(int, kv);
        QFETCH(int, n);
        const KvFormat fmt = KvFormat(kv);
        Context& c = ctx(0);
        // K and V as columns of one buffer of wider rows (the fused QKV
        // output), at odd offsets so F16 pairs start mid-row.
        const uint32_t n_tok = 5, n_ctx = 40;
        const uint32_t stride = 2 * uint32_t(n) + 9, k_off = 3, v_off = k_off + uint32_t(n) + 4;
        const auto src = rand_vec(size_t(n_tok) * stride + v_off + uint32_t(n), -4.0f, 4.0f);
        const std::vector<int32_t> cells = {7, 0, 39, 12, 13};
        const uint32_t type = ggml_type_of(fmt);
        const size_t row_bytes = ggml::row_bytes(type, uint32_t(n));
        Buffer sb = upload_floats(c, src), slb = upload_ints(c, cells);
        Buffer cache(c, n_ctx * row_bytes, Memory::Device, Purpose::KvCache);
        Buffer cache2(c, n_ctx * row_bytes, Memory::Device, Purpose::KvCache);
        const uint32_t poison = fmt == KvFormat::F32 ? kNaN : 0x7E007E00u;
        cache.fill(poison);
        cache2.fill(poison);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        k.kv_write_kv(rec, sb, k_off, sb, v_off, stride, slb, cache, cache2, uint32_t(n), n_tok,
                      fmt);
        rec.submit();
        // The written rows of `buf` against `want_src`; the others poisoned.
        auto check = [&](const Buffer& buf, uint32_t off, const char* what) {
            std::vector<uint8_t> raw(buf.size());
            buf.download(raw.data(), raw.size());
            std::vector<bool> written(n_ctx, false);
            for (int32_t cell : cells) written[size_t(cell)] = true;
            for (uint32_t cell = 0; cell < n_ctx; ++cell) {
                if (written[cell]) continue;
                for (size_t b = cell * row_bytes; b < (cell + 1) * row_bytes; ++b)
                    QVERIFY2(raw[b] == uint8_t(poison >> (8 * (b % 4))),
                             qPrintable(QString("%1: byte %2 of unwritten cell %3 changed")
                                            .arg(what)
                                            .arg(b)
                                            .arg(cell)));
            }
            if (fmt == KvFormat::Q8_0 || fmt == KvFormat::Q4_0) {
                const size_t blocks = size_t(n) / 32, bb = row_bytes / blocks;
                size_t differ = 0;
                for (uint32_t t = 0; t < n_tok; ++t) {
                    std::vector<uint8_t> want(row_bytes);
                    ggml::quantize_row(type, &src[off + t * stride], want.data(), uint32_t(n));
                    const uint8_t* got = raw.data() + size_t(cells[t]) * row_bytes;
                    for (size_t blk = 0; blk < blocks; ++blk) {
                        const uint8_t *g = got + blk * bb, *w = want.data() + blk * bb;
                        uint16_t gd, wd;
                        std::memcpy(&gd, g, 2);
                        std::memcpy(&wd, w, 2);
                        QVERIFY2(std::abs(int(gd) - int(wd)) <= 1,
                                 qPrintable(QString("%1 token %2 block %3: scale %4, ggml's %5")
                                                .arg(what)
                                                .arg(t)
                                                .arg(blk)
                                                .arg(gd, 0, 16)
                                                .arg(wd, 0, 16)));
                        for (uint32_t j = 0; j < 32; ++j) {
                            int gq, wq;
                            if (fmt == KvFormat::Q8_0) {
                                gq = int8_t(g[2 + j]);
                                wq = int8_t(w[2 + j]);
                            } else {
                                gq = (g[2 + j % 16] >> (j < 16 ? 0 : 4)) & 15;
                                wq = (w[2 + j % 16] >> (j < 16 ? 0 : 4)) & 15;
                            }
                            QVERIFY2(std::abs(gq - wq) <= 1,
                                     qPrintable(QString("%1 token %2 block %3 value %4: %5, "
                                                        "ggml's %6")
                                                    .arg(what)
                                                    .arg(t)
                                                    .arg(blk)
                                                    .arg(j)
                                                    .arg(gq)
                                                    .arg(wq)));
                            differ += gq != wq;
                        }
                    }
                }
                QVERIFY2(
                    differ * 100 <= size_t(n_tok) * uint32_t(n),
                    qPrintable(QString("%1: %2 quants differ from ggml's").arg(what).arg(differ)));
                return;
            }
            std::vector<float> got;
            std::vector<double> want;
            for (uint32_t t = 0; t < n_tok; ++t) {
                for (uint32_t i = 0; i < uint32_t(n); ++i) {
                    const size_t idx = size_t(cells[t]) * uint32_t(n) + i;
                    float v;
                    if (fmt == KvFormat::F16) {
                        uint16_t h;
                        std::memcpy(&h, raw.data() + idx * 2, 2);
                        v = ggml::fp16_to_fp32(h);
                    } else {
                        std::memcpy(&v, raw.data() + idx * 4, 4);
                    }
                    got.push_back(v);
                    want.push_back(src[off + t * stride + i]);
                }
            }
            const double err = rel_error(got, want);
            QVERIFY2(err <= (fmt == KvFormat::F16 ? 1e-3 : 0.0),
                     qPrintable(QString("%1 rel error %2").arg(what).arg(err)));
        };
        check(cache, k_off, "K");
        check(cache2, v_off, "V");
    }

    // A row length that is not whole units of the format is refused.
    void kv_write_refuses_partial_blocks() {
        Context& c = ctx(0);
        Buffer b = poisoned(c, 1024);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, k.kv_write_kv(rec, b, 0, b, 0, 80, b, b, b,
                                                                      40, 1, KvFormat::Q8_0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 k.kv_write_kv(rec, b, 0, b, 0, 80, b, b, b, 7, 1, KvFormat::F16));
    }

    void attention_data() {
        QTest::addColumn<int>("kv");  // KvFormat of the cache
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("n_kv");        // cache cells
        QTest::addColumn<bool>("row");        // AttnPath::Row, else Group
        QTest::addColumn<int>("n_split");     // split-K chunks per span, at least
        QTest::addColumn<int>("window");      // sliding window (cells), 0 = none
        QTest::addColumn<double>("softcap");  // score soft-cap, 0 = none
        for (const bool row : {false, true}) {
            const char* path = row ? "row" : "group";
            auto name = [&](const char* what) { return QString("%1 %2").arg(what, path); };
            QTest::newRow(qPrintable(name("f32 hd8 150 cells")))
                << int(KvFormat::F32) << 8 << 150 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f16 hd8 150 cells")))
                << int(KvFormat::F16) << 8 << 150 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f32 hd72 3 cells")))
                << int(KvFormat::F32) << 72 << 3 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f16 hd130 333 cells")))
                << int(KvFormat::F16) << 130 << 333 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f32 hd256 70 cells")))
                << int(KvFormat::F32) << 256 << 70 << row << 1 << 0 << 0.0;
            // Long enough that llvmpipe's loop limit forces a split there.
            QTest::newRow(qPrintable(name("f32 hd64 3000 cells")))
                << int(KvFormat::F32) << 64 << 3000 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f16 hd8 5000 cells")))
                << int(KvFormat::F16) << 8 << 5000 << row << 1 << 0 << 0.0;
            if (!row)  // Row would need more than kMaxAttnSplit chunks here
                QTest::newRow(qPrintable(name("f32 hd256 9000 cells")))
                    << int(KvFormat::F32) << 256 << 9000 << row << 1 << 0 << 0.0;
            // Split-K: chunks not a multiple of the workgroup, a span of one
            // cell (token 0) leaving later chunks empty, 2 chunks of 3 cells.
            QTest::newRow(qPrintable(name("f32 hd8 150 cells split 3")))
                << int(KvFormat::F32) << 8 << 150 << row << 3 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f16 hd8 150 cells split 16")))
                << int(KvFormat::F16) << 8 << 150 << row << 16 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f32 hd72 3 cells split 2")))
                << int(KvFormat::F32) << 72 << 3 << row << 2 << 0 << 0.0;
            QTest::newRow(qPrintable(name("f16 hd130 333 cells split 5")))
                << int(KvFormat::F16) << 130 << 333 << row << 5 << 0 << 0.0;
            // Sliding window (gemma, mistral) and soft-capped scores
            // (gemma2; a cap of 1.5 bends these scores of a few units
            // strongly): spans longer and shorter than the window, with and
            // without a split.
            QTest::newRow(qPrintable(name("f32 hd64 300 cells window 32 cap 1.5")))
                << int(KvFormat::F32) << 64 << 300 << row << 1 << 32 << 1.5;
            QTest::newRow(qPrintable(name("f16 hd8 150 cells window 7 split 3")))
                << int(KvFormat::F16) << 8 << 150 << row << 3 << 7 << 0.0;
            QTest::newRow(qPrintable(name("f32 hd128 3000 cells window 1000 cap 2")))
                << int(KvFormat::F32) << 128 << 3000 << row << 1 << 1000 << 2.0;
            QTest::newRow(qPrintable(name("f32 hd72 3 cells cap 0.5")))
                << int(KvFormat::F32) << 72 << 3 << row << 1 << 0 << 0.5;
            // The block caches (kv_stride 2 * head_dim: rows of 2, 4 or 8
            // blocks), with a split, a window and a cap.
            QTest::newRow(qPrintable(name("q8_0 hd32 150 cells")))
                << int(KvFormat::Q8_0) << 32 << 150 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("q4_0 hd32 150 cells")))
                << int(KvFormat::Q4_0) << 32 << 150 << row << 1 << 0 << 0.0;
            QTest::newRow(qPrintable(name("q8_0 hd128 333 cells split 5")))
                << int(KvFormat::Q8_0) << 128 << 333 << row << 5 << 0 << 0.0;
            QTest::newRow(qPrintable(name("q4_0 hd64 300 cells window 32 cap 1.5")))
                << int(KvFormat::Q4_0) << 64 << 300 << row << 1 << 32 << 1.5;
        }
    }

    void attention() {
        QFETCH(int, kv);
        QFETCH(int, head_dim);
        QFETCH(int, n_kv);
        QFETCH(bool, row);
        QFETCH(int, n_split);
        QFETCH(int, window);
        QFETCH(double, softcap);
        Context& c = ctx(0);
        const uint32_t n_tok = 5, n_head = 6, n_head_kv = 2, hd = uint32_t(head_dim);
        const uint32_t kv_stride = n_head_kv * hd, q_stride = n_head * hd + 4,
                       o_stride = n_head * hd;
        const auto q = rand_vec(n_tok * q_stride, -2.0f, 2.0f);
        std::vector<float> kf = rand_vec(size_t(n_kv) * kv_stride, -2.0f, 2.0f),
                           vf = rand_vec(size_t(n_kv) * kv_stride);
        // The cache in its format (ggml's reference quantizer for the
        // block formats); the reference reads exactly the values it holds.
        const KvFormat fmt = KvFormat(kv);
        const uint32_t type = ggml_type_of(fmt);
        auto to_cache = [&](std::vector<float>& x) {
            std::vector<uint8_t> bytes(ggml::row_bytes(type, x.size()));
            ggml::quantize_row(type, x.data(), bytes.data(), x.size());
            ggml::dequantize_row(type, bytes.data(), x.data(), x.size());
            return bytes;
        };
        const std::vector<uint8_t> kbytes = to_cache(kf), vbytes = to_cache(vf);
        // Cell table: each token attends to a random subset of the cells in
        // random order (a gather, as after seq_rm frees and reuses cells),
        // of length 1 (token 0), all cells (token 1) or random.
        std::vector<uint32_t> table, spans;  // [n_entries], [n_tok, 2] (first, count)
        for (uint32_t t = 0; t < n_tok; ++t) {
            std::vector<uint32_t> perm(static_cast<size_t>(n_kv));
            std::iota(perm.begin(), perm.end(), 0u);
            std::shuffle(perm.begin(), perm.end(), rng());
            const uint32_t len = t == 0   ? 1u
                                 : t == 1 ? uint32_t(n_kv)
                                          : 1u + uint32_t(rng()() % uint32_t(n_kv));
            spans.push_back(uint32_t(table.size()));
            spans.push_back(len);
            table.insert(table.end(), perm.begin(), perm.begin() + len);
        }
        Buffer qb = upload_floats(c, q), ob = poisoned(c, n_tok * o_stride);
        Buffer tb(c, table.size() * 4, Memory::Host, Purpose::Activations),
            sb(c, spans.size() * 4, Memory::Host, Purpose::Activations);
        tb.upload(table.data(), table.size() * 4);
        sb.upload(spans.data(), spans.size() * 4);
        Buffer kb(c, kbytes.size(), Memory::Device, Purpose::KvCache);
        Buffer vb(c, vbytes.size(), Memory::Device, Purpose::KvCache);
        kb.upload(kbytes.data(), kbytes.size());
        vb.upload(vbytes.data(), vbytes.size());
        AttentionShape s = attn_shape(n_tok, n_head, n_head_kv, hd, uint32_t(n_kv));
        s.q_stride = q_stride;  // token 1 reads every cell (max_span)
        s.window = uint32_t(window);
        s.softcap = float(softcap);
        Kernels k(c);
        // The device's plan (it may split to respect a loop limit), with
        // more chunks where the row asks for them.
        AttentionPlan plan = k.plan_attention(s, row ? AttnPath::Row : AttnPath::Group);
        if (uint32_t(n_split) > plan.n_split) {
            plan.chunk = (s.effective_span() + uint32_t(n_split) - 1) / uint32_t(n_split);
            plan.n_split = (s.effective_span() + plan.chunk - 1) / plan.chunk;
        }
        Buffer part =
            poisoned(c, std::max<uint64_t>(Kernels::attention_partials_bytes(s, plan), 4) / 4);
        Recorder rec(c);
        rec.begin(false);
        k.attention(rec, qb, kb, vb, tb, sb, ob, s, fmt, plan, &part);
        rec.submit();

        std::vector<double> want(size_t(n_tok) * o_stride);
        for (uint32_t t = 0; t < n_tok; ++t) {
            for (uint32_t h = 0; h < n_head; ++h) {
                const uint32_t kvh = h / (n_head / n_head_kv);
                // [len] cells token t reads: the last `window` of its span
                const uint32_t skip = window > 0 && spans[2 * t + 1] > uint32_t(window)
                                          ? spans[2 * t + 1] - window
                                          : 0;
                const uint32_t* cells = &table[spans[2 * t] + skip];
                const uint32_t len = spans[2 * t + 1] - skip;
                std::vector<double> sc(len);
                double mx = -INFINITY;
                for (uint32_t j = 0; j < len; ++j) {
                    double d = 0.0;
                    for (uint32_t e = 0; e < hd; ++e)
                        d += double(q[t * q_stride + h * hd + e]) *
                             double(kf[size_t(cells[j]) * kv_stride + kvh * hd + e]);
                    sc[j] = d * double(s.scale);
                    if (softcap > 0.0) sc[j] = softcap * std::tanh(sc[j] / softcap);
                    mx = std::max(mx, sc[j]);
                }
                double sum = 0.0;
                for (double& v : sc) sum += (v = std::exp(v - mx));
                for (uint32_t e = 0; e < hd; ++e) {
                    double o = 0.0;
                    for (uint32_t j = 0; j < len; ++j)
                        o += sc[j] / sum * double(vf[size_t(cells[j]) * kv_stride + kvh * hd + e]);
                    want[t * o_stride + h * hd + e] = o;
                }
            }
        }
        const double err = rel_error(download(ob, want.size()), want);
        QVERIFY2(err <= 1e-5, qPrintable(QString("rel error %1").arg(err)));
    }

    // A NaN in q (token 2, head 3) and +inf in one K value (KV head 0, a
    // cell tokens 1-3 read) make those scores NaN / +inf; the softmax, and
    // the CPU reference, give NaN for exactly those (token, head) outputs
    // (a -inf score is only masked); the
    // shaders used to give them weight 0 (llvmpipe's exp(NaN) is finite), so
    // NaN norm weights or matrices showed in CPU logits and not in Vulkan's.
    void attention_propagates_non_finite_scores_data() {
        QTest::addColumn<bool>("row");
        QTest::addColumn<int>("n_split");
        for (const bool row : {false, true})
            for (const int split : {1, 4})
                QTest::newRow(
                    qPrintable(QString("%1 split %2").arg(row ? "row" : "group").arg(split)))
                    << row << split;
    }
    void attention_propagates_non_finite_scores() {
        QFETCH(bool, row);
        QFETCH(int, n_split);
        Context& c = ctx(0);
        const uint32_t n_tok = 4, n_head = 4, n_head_kv = 2, hd = 8, n_kv = 40;
        const uint32_t stride = n_head * hd, kv_stride = n_head_kv * hd;
        std::vector<float> q = rand_vec(n_tok * stride, -2.0f, 2.0f);
        std::vector<float> kf = rand_vec(n_kv * kv_stride, -2.0f, 2.0f),
                           vf = rand_vec(n_kv * kv_stride);
        q[2 * stride + 3 * hd + 5] = NAN;
        kf[17 * kv_stride + 0 * hd + 2] = INFINITY;  // cell 17, KV head 0
        for (uint32_t t = 0; t < n_tok; ++t)
            for (uint32_t h = 0; h < 2; ++h) q[t * stride + h * hd + 2] = 1.0f;  // score +inf
        kf[25 * kv_stride + 1 * hd + 4] = -INFINITY;  // KV head 1: a -inf score is masked, finite
        for (uint32_t t = 0; t < n_tok; ++t)
            for (uint32_t h = 2; h < 4; ++h) q[t * stride + h * hd + 4] = 1.0f;  // score -inf
        // Token t reads cells 0..10*t+9 (token 1: 0..19, so cell 17).
        std::vector<uint32_t> table, spans;
        for (uint32_t t = 0; t < n_tok; ++t) {
            spans.push_back(uint32_t(table.size()));
            spans.push_back(10 * t + 10);
            for (uint32_t j = 0; j < 10 * t + 10; ++j) table.push_back(j);
        }
        Buffer qb = upload_floats(c, q), ob = poisoned(c, n_tok * stride);
        Buffer kb = upload_floats(c, kf), vb = upload_floats(c, vf);
        Buffer tb(c, table.size() * 4, Memory::Host, Purpose::Activations),
            sb(c, spans.size() * 4, Memory::Host, Purpose::Activations);
        tb.upload(table.data(), table.size() * 4);
        sb.upload(spans.data(), spans.size() * 4);
        AttentionShape s = attn_shape(n_tok, n_head, n_head_kv, hd, 40);
        Kernels k(c);
        AttentionPlan plan = k.plan_attention(s, row ? AttnPath::Row : AttnPath::Group);
        if (uint32_t(n_split) > plan.n_split) {
            plan.chunk = (s.max_span + uint32_t(n_split) - 1) / uint32_t(n_split);
            plan.n_split = (s.max_span + plan.chunk - 1) / plan.chunk;
        }
        Buffer part =
            poisoned(c, std::max<uint64_t>(Kernels::attention_partials_bytes(s, plan), 4) / 4);
        Recorder rec(c);
        rec.begin(false);
        k.attention(rec, qb, kb, vb, tb, sb, ob, s, KvFormat::F32, plan, &part);
        rec.submit();
        const std::vector<float> got = download(ob, n_tok * stride);
        for (uint32_t t = 0; t < n_tok; ++t) {
            for (uint32_t h = 0; h < n_head; ++h) {
                const uint32_t kvh = h / (n_head / n_head_kv);
                const bool nan_q = t == 2 && h == 3;
                const bool inf_k = kvh == 0 && 10 * t + 10 > 17;  // reads cell 17
                for (uint32_t e = 0; e < hd; ++e) {
                    const float v = got[t * stride + h * hd + e];
                    if (nan_q || inf_k)
                        QVERIFY2(std::isnan(v),
                                 qPrintable(QString("t %1 h %2: %3").arg(t).arg(h).arg(v)));
                    else
                        QVERIFY2(std::isfinite(v),
                                 qPrintable(QString("t %1 h %2: %3").arg(t).arg(h).arg(v)));
                }
            }
        }
    }

    void attention_plan() {
        // Hand-worked, head_dim 8 (far from any loop limit): Group splits
        // while (token, head) pairs are fewer than the 128 workgroups a GPU
        // needs and spans hold 2 chunks of >= 128 cells; at most 16 chunks.
        // Row (CPU devices) splits only for the loop limit.
        Context& c = ctx(0);
        Kernels k(c);
        auto shape = [](uint32_t n_tok, uint32_t n_head, uint32_t hd, uint32_t max_span) {
            return attn_shape(n_tok, n_head, n_head, hd, max_span);
        };
        auto plan = [&](AttnPath path, uint32_t n_tok, uint32_t n_head, uint32_t max_span,
                        uint32_t hd = 8) {
            const AttentionPlan p = k.plan_attention(shape(n_tok, n_head, hd, max_span), path);
            return std::make_pair(p.n_split, p.chunk);
        };
        using P = std::pair<uint32_t, uint32_t>;
        QCOMPARE(plan(AttnPath::Group, 1, 8, 512), P(4, 128));      // 16 for the device, 4 by span
        QCOMPARE(plan(AttnPath::Group, 1, 8, 2048), P(16, 128));    // both 16
        QCOMPARE(plan(AttnPath::Group, 1, 8, 40000), P(16, 2500));  // capped at 16
        QCOMPARE(plan(AttnPath::Group, 1, 32, 4096), P(4, 1024));   // 128 / 32 groups
        QCOMPARE(plan(AttnPath::Group, 1, 8, 300), P(2, 150));      // 300 / 128 = 2
        QCOMPARE(plan(AttnPath::Group, 16, 8, 2048).first, 1u);     // 128 groups: busy
        QCOMPARE(plan(AttnPath::Group, 1, 8, 255).first, 1u);       // under 2 chunks
        QCOMPARE(plan(AttnPath::Row, 1, 8, 512).first, 1u);
        QCOMPARE(plan(AttnPath::Row, 1, 8, 2000).first, 1u);  // 25 * 2000 < 60000
        const bool cpu = c.info().type == VK_PHYSICAL_DEVICE_TYPE_CPU;
        QCOMPARE(int(k.plan_attention(shape(1, 8, 8, 1)).path),
                 int(cpu ? AttnPath::Row : AttnPath::Group));
        // [n_tok, n_head, n_split, head_dim + 2] floats
        QCOMPARE(Kernels::attention_partials_bytes(shape(1, 8, 64, 0),
                                                   AttentionPlan{AttnPath::Row, 4, 128}),
                 uint64_t(1 * 8 * 4 * 66 * 4));
        QCOMPARE(Kernels::attention_partials_bytes(shape(1, 8, 64, 0), AttentionPlan{}),
                 uint64_t(0));
        if (!cpu) return;
        // llvmpipe's loop limit (60000 iterations budgeted per invocation).
        // Row, head_dim 64: 2*64 + 8 once, 3*64 + 1 per cell -> 310 cells a chunk.
        QCOMPARE(plan(AttnPath::Row, 8, 8, 1000, 64), P(4, 250));
        QCOMPARE(plan(AttnPath::Row, 1, 8, 2500), P(2, 1250));  // head_dim 8: 2399 cells a chunk
        // Auto: Row would need 27 chunks of <= 155 cells (head_dim 128), so
        // Group: 128 + 12 + 5*64 + 8 per 64-cell tile, 127 tiles = 8128 cells.
        QCOMPARE(int(k.plan_attention(shape(512, 32, 128, 4096)).path), int(AttnPath::Group));
        QCOMPARE(plan(AttnPath::Group, 512, 32, 4096, 128).first, 1u);
        QCOMPARE(plan(AttnPath::Group, 512, 32, 8129, 128), P(2, 4065));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 k.plan_attention(shape(1, 8, 256, 1000000)));
    }

    void swiglu_and_add() {
        // g and u as the two halves of one buffer's rows (the fused gate/up
        // output), n not a multiple of the workgroup.
        Context& c = ctx(0);
        const uint32_t n = 333, n_tok = 3, stride = 2 * n + 3, g_off = 1, u_off = g_off + n + 2;
        const auto gu = rand_vec(size_t(n_tok) * stride + u_off + n, -6.0f, 6.0f),
                   a = rand_vec(size_t(n_tok) * n);
        Buffer gub = upload_floats(c, gu), yb = poisoned(c, n_tok * n), ab = upload_floats(c, a);
        Kernels k(c);
        Recorder rec(c);
        rec.begin(false);
        k.swiglu(rec, gub, g_off, gub, u_off, stride, yb, n, n_tok);
        k.add(rec, ab, yb, n_tok * n);
        rec.submit();
        std::vector<double> want_y(size_t(n_tok) * n), want_a(size_t(n_tok) * n);
        for (uint32_t t = 0; t < n_tok; ++t) {
            for (uint32_t i = 0; i < n; ++i) {
                const double g = gu[g_off + t * stride + i], u = gu[u_off + t * stride + i];
                const size_t o = size_t(t) * n + i;
                want_y[o] = g / (1.0 + std::exp(-g)) * u;
                want_a[o] = double(a[o]) + double(float(want_y[o]));
            }
        }
        const double ey = rel_error(download(yb, n_tok * n), want_y),
                     ea = rel_error(download(ab, n_tok * n), want_a);
        QVERIFY2(ey <= 1e-5, qPrintable(QString("swiglu rel error %1").arg(ey)));
        QVERIFY2(ea <= 1e-5, qPrintable(QString("add rel error %1").arg(ea)));
    }

    // The elementwise ops of the other architectures, each against float64
    // on fresh inputs with poisoned outputs: per-head RMSNorm (QK-norm) on
    // heads inside wider rows, a bias added to a column range, GeGLU (gemma;
    // inputs up to +-12 so tanh saturates), the embedding scale and the
    // logit soft-cap.
    void qk_norm_bias_geglu_scale_softcap() {
        Context& c = ctx(0);
        Kernels k(c);
        // head_rms_norm: 3 heads of 130 (more than the workgroup) from column 5 of rows of 400.
        {
            const uint32_t hd = 130, n_head = 3, n_tok = 4, off = 5, stride = 400;
            const auto x = rand_vec(size_t(n_tok) * stride + off, -3.0f, 3.0f), g = rand_vec(hd);
            Buffer xb = upload_floats(c, x), gb = upload_floats(c, g);
            Recorder rec(c);
            rec.begin(false);
            k.head_rms_norm(rec, xb, off, stride, gb, hd, n_head, n_tok, 1e-6f);
            rec.submit();
            std::vector<double> want(x.begin(), x.end());
            for (uint32_t t = 0; t < n_tok; ++t) {
                for (uint32_t h = 0; h < n_head; ++h) {
                    const size_t base = off + size_t(t) * stride + h * hd;
                    double ss = 0.0;
                    for (uint32_t i = 0; i < hd; ++i)
                        ss += double(x[base + i]) * double(x[base + i]);
                    const double sc = 1.0 / std::sqrt(ss / hd + 1e-6);
                    for (uint32_t i = 0; i < hd; ++i)
                        want[base + i] = double(x[base + i]) * sc * double(g[i]);
                }
            }
            const double err = rel_error(download(xb, x.size()), want);
            QVERIFY2(err <= 1e-5, qPrintable(QString("head_rms_norm rel error %1").arg(err)));
        }
        // add_bias: 300 columns from column 7 of rows of 311 (not a multiple of the workgroup).
        {
            const uint32_t n = 300, rows = 5, off = 7, stride = 311;
            const auto y = rand_vec(size_t(rows) * stride + off), b = rand_vec(n);
            Buffer yb = upload_floats(c, y), bb = upload_floats(c, b);
            Recorder rec(c);
            rec.begin(false);
            k.add_bias(rec, yb, off, stride, bb, n, rows);
            rec.submit();
            std::vector<double> want(y.begin(), y.end());
            for (uint32_t t = 0; t < rows; ++t)
                for (uint32_t i = 0; i < n; ++i) want[off + size_t(t) * stride + i] += double(b[i]);
            const double err = rel_error(download(yb, y.size()), want);
            QVERIFY2(err <= 1e-6, qPrintable(QString("add_bias rel error %1").arg(err)));
        }
        // geglu: gate and up as the two halves of one buffer's rows.
        {
            const uint32_t n = 333, n_tok = 3, stride = 2 * n + 3, g_off = 1, u_off = g_off + n + 2;
            const auto gu = rand_vec(size_t(n_tok) * stride + u_off + n, -12.0f, 12.0f);
            Buffer gub = upload_floats(c, gu), yb = poisoned(c, n_tok * n);
            Recorder rec(c);
            rec.begin(false);
            k.geglu(rec, gub, g_off, gub, u_off, stride, yb, n, n_tok);
            rec.submit();
            std::vector<double> want(size_t(n_tok) * n);
            for (uint32_t t = 0; t < n_tok; ++t) {
                for (uint32_t i = 0; i < n; ++i) {
                    const double g = gu[g_off + t * stride + i], u = gu[u_off + t * stride + i];
                    const double gelu =
                        0.5 * g *
                        (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)));
                    want[size_t(t) * n + i] = gelu * u;
                }
            }
            const double err = rel_error(download(yb, want.size()), want);
            QVERIFY2(err <= 1e-5, qPrintable(QString("geglu rel error %1").arg(err)));
        }
        // scale and softcap in place over n floats (more than one row of workgroups).
        {
            const uint32_t n = 70001;
            const auto x = rand_vec(n, -200.0f, 200.0f);
            Buffer sb = upload_floats(c, x), cb = upload_floats(c, x);
            Recorder rec(c);
            rec.begin(false);
            k.scale(rec, sb, n, 16.0f);
            k.softcap(rec, cb, n, 30.0f);
            rec.submit();
            std::vector<double> ws(n), wc(n);
            for (uint32_t i = 0; i < n; ++i) {
                ws[i] = double(x[i]) * 16.0;
                wc[i] = 30.0 * std::tanh(double(x[i]) / 30.0);
            }
            const double es = rel_error(download(sb, n), ws), ec = rel_error(download(cb, n), wc);
            QVERIFY2(es <= 1e-6, qPrintable(QString("scale rel error %1").arg(es)));
            QVERIFY2(ec <= 1e-5, qPrintable(QString("softcap rel error %1").arg(ec)));
        }
    }

    void weight_pieces_respect_binding_limit() {
        Context& c = ctx(2);
        const HostWeight hw = make_weight(ggml::Type::Q8_0, 64, 500);  // 68-byte rows, 34000 bytes
        const DeviceWeight w =
            DeviceWeight::upload(c, "big", uint32_t(ggml::Type::Q8_0), 64, 500, hw.bytes.data());
        uint32_t covered = 0;
        for (const auto& p : w.pieces()) {
            QVERIFY(p.buffer.size() <= c.binding_limit());
            QCOMPARE(p.row_begin, covered);
            covered += p.rows;
        }
        QCOMPARE(covered, 500u);
        QCOMPARE(w.pieces().size(), size_t(9));  // 4096 / 68 = 60 rows per piece
    }

    void memory_accounting() {
        Context& c = ctx(0);
        const uint64_t before = c.memory_report().bytes[int(Purpose::KvCache)];
        {
            Buffer b(c, 1000, Memory::Device, Purpose::KvCache);
            QCOMPARE(c.memory_report().bytes[int(Purpose::KvCache)], before + 1000);
        }
        QCOMPARE(c.memory_report().bytes[int(Purpose::KvCache)], before);
        QVERIFY(!c.memory_report().heaps.empty());
    }

    void no_driver_gives_clear_error() {
        // The loader finds no ICD: vkCreateInstance fails, and the message
        // names the result and what to install (never a crash).
        const QByteArray old_files = qgetenv("VK_DRIVER_FILES"),
                         old_icd = qgetenv("VK_ICD_FILENAMES");
        qputenv("VK_DRIVER_FILES", "/nonexistent/icd.json");
        qputenv("VK_ICD_FILENAMES", "/nonexistent/icd.json");
        std::string what;
        try {
            ContextOptions o;
            o.pipeline_cache = false;
            Context::create(o);
        } catch (const wb::vk::Error& e) {
            what = e.what();
        }
        for (const auto& [name, old] :
             {std::pair{"VK_DRIVER_FILES", old_files}, std::pair{"VK_ICD_FILENAMES", old_icd}}) {
            if (old.isEmpty())
                qunsetenv(name);
            else
                qputenv(name, old);
        }
        QVERIFY2(what.find("VK_ERROR_INCOMPATIBLE_DRIVER") != std::string::npos, what.c_str());
        QVERIFY2(what.find("mesa-vulkan-drivers") != std::string::npos, what.c_str());
    }

    void device_choice() {
        std::vector<DeviceInfo> devs(3);
        devs[0].index = 0, devs[0].name = "llvmpipe (LLVM 15)",
        devs[0].type = VK_PHYSICAL_DEVICE_TYPE_CPU;
        devs[1].index = 1, devs[1].name = "Intel UHD",
        devs[1].type = VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
        devs[2].index = 2, devs[2].name = "NVIDIA H200",
        devs[2].type = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
        QCOMPARE(choose_device(devs, ""), 2u);
        QCOMPARE(choose_device(devs, "0"), 0u);
        QCOMPARE(choose_device(devs, "intel"), 1u);
        for (const char* bad : {"amd", "7"}) {
            bool threw = false;
            try {
                choose_device(devs, bad);
            } catch (const wb::vk::Error&) {
                threw = true;
            }
            QVERIFY2(threw, bad);
        }
        devs.pop_back();
        QCOMPARE(choose_device(devs, ""), 1u);
        devs.pop_back();
        QCOMPARE(choose_device(devs, ""), 0u);
    }
};

QTEST_GUILESS_MAIN(TestVkKernels)
#include "test_vk_kernels.moc"
