// The CPU executor's kernels (engine/exec/cpu) against float64 references on
// fresh random inputs (the seed is printed and in every failure message):
//  - quantize_act: |x - d q| <= d / 2 for every element, d = max|x| / 127,
//    the stored sums equal the quants' sums; the AVX2 quantizer writes the
//    scalar one's bytes (ties, zero blocks, NaN and infinities included);
//  - every dot kernel (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K,
//    Q3_K, Q4_K, Q5_K, Q6_K) on the scalar path
//    and on AVX2 when the CPU has it, 1..4 tokens per call, weight rows at
//    odd byte offsets, row lengths off the block and SIMD widths where the
//    type allows. Two checks per result: against sum(w_deq * a_deq) in
//    double, within f32 rounding of the per-block sums (the integer part is
//    exact), and against sum(w_deq * x) with the unquantized activations,
//    within that plus the bound of activation rounding sum |w_i| d_i / 2;
//  - interleaved groups of 8 rows (F16, BF16, Q4_0, Q8_0, Q4_K, Q6_K): the layout's bytes where
//    cpu/interleave.h puts them, every row back unchanged, and the 8-row
//    kernels against the same float64 references per row;
//  - matmul: threaded results bit-identical to one thread, stacked parts
//    of different types and layouts, types without a kernel (dequantize
//    fallback), token counts off the tile width;
//  - axpy (attention's value sum): f32 and f16 rows against double sums,
//    one row or many in a call (the same bits either way); softmax's
//    numerator and SwiGLU's gate against exp in double; attention scores
//    over a span of f16/f32 keys against the dot in double;
//  - the f16 KV store: the nearest half to each f32 (ties to even mantissa,
//    checked against both neighbours in double), inf past 65520, NaN as
//    sign | 0x7E00, the same bits on every ISA;
//  - ThreadPool: every task runs exactly once, many runs in a row; the
//    process-wide shared pool with two callers at once.

#include <QtTest>
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exec/cpu/act_quant.h"
#include "exec/cpu/attn_scores.h"
#include "exec/cpu/axpy.h"
#include "exec/cpu/dot.h"
#include "exec/cpu/f16_store.h"
#include "exec/cpu/glu.h"
#include "exec/cpu/interleave.h"
#include "exec/cpu/isa.h"
#include "exec/cpu/matmul.h"
#include "exec/cpu/softmax.h"
#include "exec/cpu/thread_pool.h"
#include "ggml/fp16.h"
#include "ggml/types.h"

using namespace wb::cpu;
using wb::ggml::Type;

namespace {

uint32_t id(Type t) {
    return static_cast<uint32_t>(t);
}

std::vector<Isa> isas() {
    std::vector<Isa> v{Isa::Scalar};
    if (isa_available(Isa::Avx2)) v.push_back(Isa::Avx2);
    if (isa_available(Isa::AvxVnni)) v.push_back(Isa::AvxVnni);
    if (isa_available(Isa::Avx512)) v.push_back(Isa::Avx512);
    return v;
}

/// n_cells KV cache rows of n random values in [-2, 2), f16 or f32, `stride`
/// bytes apart from byte 1 of `bytes` (an odd address); `values`: the
/// stored values as double, [n_cells, n].
void make_cells(std::mt19937& rng, uint32_t n_cells, int64_t n, size_t stride, bool f16,
                std::vector<uint8_t>& bytes, std::vector<double>& values) {
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    bytes.assign(n_cells * stride + 1, 0);
    values.assign(n_cells * size_t(n), 0.0);
    for (uint32_t c = 0; c < n_cells; ++c)
        for (int64_t i = 0; i < n; ++i) {
            const float v = u(rng);
            uint8_t* at = &bytes[1 + c * stride + (f16 ? 2 : 4) * size_t(i)];
            if (f16) {
                const uint16_t h = wb::ggml::fp32_to_fp16(v);
                std::memcpy(at, &h, 2);
                values[c * size_t(n) + size_t(i)] = double(wb::ggml::fp16_to_fp32(h));
            } else {
                std::memcpy(at, &v, 4);
                values[c * size_t(n) + size_t(i)] = double(v);
            }
        }
}

/// Random floats of mixed magnitude (some blocks small, some large, a few
/// outliers) so block scales differ.
std::vector<float> random_row(std::mt19937& rng, size_t n) {
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::uniform_real_distribution<float> scale(0.05f, 3.0f);
    std::vector<float> v(n);
    float s = scale(rng);
    for (size_t i = 0; i < n; ++i) {
        if (i % 32 == 0) s = scale(rng);
        v[i] = nd(rng) * s;
        if (rng() % 97 == 0) v[i] *= 8.0f;
    }
    return v;
}

/// Activations in kernel form plus what they stand for: deq[i] = d q.
struct Acts {
    std::vector<uint64_t> buf;  // 8-byte aligned rows
    size_t stride = 0;
    std::vector<std::vector<double>> deq;   // [n_tok][n]
    std::vector<std::vector<double>> half;  // [n_tok][n] d / 2 per element (0 for F32)
};

Acts make_acts(ActKind kind, const std::vector<std::vector<float>>& x) {
    Acts a;
    const size_t n = x[0].size();
    a.stride = act_row_bytes(kind, static_cast<int64_t>(n));
    a.buf.assign((a.stride * x.size() + 7) / 8, 0);
    auto* base = reinterpret_cast<uint8_t*>(a.buf.data());
    for (size_t t = 0; t < x.size(); ++t) {
        uint8_t* row = base + t * a.stride;
        quantize_act(kind, x[t].data(), row, static_cast<int64_t>(n), Isa::Scalar);
        std::vector<double> d(n), h(n);
        for (size_t i = 0; i < n; ++i) {
            if (kind == ActKind::F32) {
                d[i] = x[t][i];
                h[i] = 0.0;
            } else if (kind == ActKind::Q8_0) {
                const auto* b = reinterpret_cast<const ActQ8_0*>(row) + i / 32;
                d[i] = double{b->d} * b->qs[i % 32];
                h[i] = double{b->d} / 2;
            } else {
                const auto* b = reinterpret_cast<const ActQ8_K*>(row) + i / 256;
                d[i] = double{b->d} * b->qs[i % 256];
                h[i] = double{b->d} / 2;
            }
        }
        a.deq.push_back(std::move(d));
        a.half.push_back(std::move(h));
    }
    return a;
}

/// A quantized weight row at byte offset `misalign` of its buffer, and its
/// dequantized values (the table's reference dequantizer).
struct WRow {
    std::vector<uint8_t> buf;
    const uint8_t* data = nullptr;
    std::vector<float> deq;
};

WRow make_weight(uint32_t type, const std::vector<float>& src, size_t misalign) {
    WRow w;
    const size_t bytes = wb::ggml::row_bytes(type, src.size());
    w.buf.assign(bytes + misalign, 0);
    wb::ggml::quantize_row(type, src.data(), w.buf.data() + misalign, src.size());
    w.data = w.buf.data() + misalign;
    w.deq.resize(src.size());
    wb::ggml::dequantize_row(type, w.data, w.deq.data(), src.size());
    return w;
}

}  // namespace

class TestCpuKernels : public QObject {
    Q_OBJECT

    uint32_t seed_ = 0;
    std::mt19937 rng_;

    std::string where(const std::string& what) const {
        return what + " (seed " + std::to_string(seed_) + ")";
    }

  private slots:
    void initTestCase() {
        seed_ = std::random_device{}();
        rng_.seed(seed_);
        qInfo("seed %u; AVX2 %s; AVX-VNNI %s; best ISA %s", seed_,
              isa_available(Isa::Avx2) ? "available" : "not available",
              isa_available(Isa::AvxVnni) ? "available" : "not available", isa_name(best_isa()));
    }

    void act_quant_bounds() {
        for (ActKind kind : {ActKind::Q8_0, ActKind::Q8_K}) {
            for (size_t n : {256u, 512u, 2048u, 5632u}) {
                if (n % static_cast<size_t>(act_block_size(kind)) != 0) continue;
                std::vector<float> x = random_row(rng_, n);
                if (n == 512) std::fill(x.begin(), x.begin() + 256, 0.0f);  // an all-zero block
                const Acts a = make_acts(kind, {x});
                const auto* row = reinterpret_cast<const uint8_t*>(a.buf.data());
                const int bs = act_block_size(kind);
                for (size_t b = 0; b < n / static_cast<size_t>(bs); ++b) {
                    double amax = 0.0;
                    for (int i = 0; i < bs; ++i)
                        amax = std::max(amax, std::fabs(double{x[b * bs + i]}));
                    const double d = 2.0 * a.half[0][b * bs];
                    QVERIFY2(std::fabs(d - amax / 127.0) <= 1e-6 * amax,
                             where("block scale").c_str());
                    int64_t qsum = 0;
                    for (int i = 0; i < bs; ++i) {
                        const size_t k = b * bs + i;
                        // d / 2, plus f32 rounding: x * (127 / amax) (the
                        // reciprocal and the product, 2^-24 each) may round
                        // to the other integer near a half-integer, and the
                        // stored d = amax / 127 is off by 2^-24 of itself; with
                        // |q| <= 127 that is < 127 * 3 * 2^-24 d, bounded by
                        // 127 * 2^-22 d (seed 504541533 failed the former
                        // 5e-6 d margin).
                        QVERIFY2(std::fabs(double{x[k]} - a.deq[0][k]) <=
                                     d * (0.5 + 127 * 0x1p-22) + 1e-30,
                                 where("element off by more than d/2").c_str());
                        qsum += static_cast<int64_t>(std::lround(d > 0 ? a.deq[0][k] / d : 0.0));
                    }
                    if (kind == ActKind::Q8_0) {
                        QCOMPARE(int64_t{reinterpret_cast<const ActQ8_0*>(row)[b].sum}, qsum);
                    } else {
                        const auto& blk = reinterpret_cast<const ActQ8_K*>(row)[b];
                        int64_t bs_sum = 0;
                        for (int j = 0; j < 16; ++j) {
                            int s = 0;
                            for (int l = 0; l < 16; ++l) s += blk.qs[16 * j + l];
                            QCOMPARE(int{blk.bsums[j]}, s);
                            bs_sum += blk.bsums[j];
                        }
                        QCOMPARE(bs_sum, qsum);
                    }
                }
            }
        }
    }

    // The AVX2 quantizer writes the scalar one's bytes: random rows of
    // mixed magnitude, an all-zero block, exact ties (amax 127 makes the
    // scale 1, so k + 0.5 rounds to even), a NaN and an infinity.
    void f16_store_rounds_to_nearest_even() {
        std::vector<float> x;
        std::uniform_real_distribution<float> mant(1.0f, 2.0f);
        std::uniform_int_distribution<int> expo(-30, 17);
        for (int i = 0; i < 4000; ++i)
            x.push_back((rng_() & 1 ? -1.0f : 1.0f) * std::ldexp(mant(rng_), expo(rng_)));
        // Exact ties: a half plus half its ulp, normal and subnormal, odd
        // and even mantissas; the overflow edge; zeros, infinities, NaNs.
        for (const float t : {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 0x1p-24f * 1.5f,
                              0x1p-24f * 2.5f, 0x1p-25f, 0x1p-26f, 65504.0f, 65519.99f, 65520.0f,
                              1e6f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN})
            x.push_back(t);
        x.push_back(std::bit_cast<float>(0x7FC12345u));  // NaN with a payload
        for (Isa isa : isas()) {
            const F16StoreFn f = f16_store_kernel(isa);
            for (const size_t off : {0u, 1u}) {  // 8-wide body and scalar tail, odd address
                std::vector<uint8_t> out(2 * x.size() + 1, 0xAB);
                f(x.data() + off, out.data() + 1, static_cast<int64_t>(x.size() - off));
                QCOMPARE(out[0], uint8_t{0xAB});  // nothing before the row
                for (size_t i = 0; i + off < x.size(); ++i) {
                    const float xi = x[i + off];
                    uint16_t h;
                    std::memcpy(&h, out.data() + 1 + 2 * i, 2);
                    const std::string msg = std::string(isa_name(isa)) +
                                            " x=" + std::to_string(xi) +
                                            " half=" + std::to_string(h);
                    QVERIFY2(h == wb::ggml::fp32_to_fp16(xi), where("vs portable: " + msg).c_str());
                    const uint16_t sign = std::signbit(xi) ? 0x8000 : 0;
                    if (std::isnan(xi)) {
                        QVERIFY2(h == (sign | 0x7E00), where(msg).c_str());
                        continue;
                    }
                    if (std::fabs(xi) >= 65520.0f) {
                        QVERIFY2(h == (sign | 0x7C00), where(msg).c_str());
                        continue;
                    }
                    // Nearest of the half and its two neighbours in magnitude.
                    const uint16_t mag = h & 0x7FFF;
                    QVERIFY2(mag < 0x7C00, where("overflowed: " + msg).c_str());
                    const auto val = [&](uint16_t m) {
                        return double{wb::ggml::fp16_to_fp32(static_cast<uint16_t>(sign | m))};
                    };
                    const double e = std::fabs(val(mag) - double{xi});
                    const double up = std::fabs(val(static_cast<uint16_t>(mag + 1)) - double{xi});
                    QVERIFY2(e <= up, where("not nearest: " + msg).c_str());
                    if (mag > 0) {
                        const double down =
                            std::fabs(val(static_cast<uint16_t>(mag - 1)) - double{xi});
                        QVERIFY2(e <= down, where("not nearest: " + msg).c_str());
                        if (e == down)
                            QVERIFY2((h & 1) == 0, where("tie not even: " + msg).c_str());
                    }
                    if (e == up && e > 0)
                        QVERIFY2((h & 1) == 0, where("tie not even: " + msg).c_str());
                }
            }
        }
    }

    void act_quant_isas_agree() {
        for (const Isa isa : isas()) {
            for (ActKind kind : {ActKind::Q8_0, ActKind::Q8_K}) {
                for (size_t n : {256u, 512u, 2048u, 5632u}) {
                    if (n % static_cast<size_t>(act_block_size(kind)) != 0) continue;
                    for (int variant = 0; variant < 4; ++variant) {
                        std::vector<float> x = random_row(rng_, n);
                        if (variant == 1) std::fill(x.begin(), x.begin() + 256, 0.0f);
                        if (variant == 2) {
                            for (size_t i = 0; i < 256; ++i)
                                x[i] = static_cast<float>(static_cast<int>(i % 254) - 127) + 0.5f;
                            x[0] = 127.0f;  // amax of the first 32 and 256
                            x[1] = -126.5f;
                        }
                        if (variant == 3) {
                            x[40] = std::nanf("");
                            x[n - 3] = -INFINITY;
                        }
                        const size_t bytes = act_row_bytes(kind, static_cast<int64_t>(n));
                        std::vector<uint8_t> want(bytes, 0xAB), got(bytes, 0xAB);
                        quantize_act(kind, x.data(), want.data(), static_cast<int64_t>(n),
                                     Isa::Scalar);
                        quantize_act(kind, x.data(), got.data(), static_cast<int64_t>(n), isa);
                        for (size_t b = 0; b < bytes; ++b)
                            QVERIFY2(want[b] == got[b],
                                     where(std::string(isa_name(isa)) + " n " + std::to_string(n) +
                                           " variant " + std::to_string(variant) + " byte " +
                                           std::to_string(b))
                                         .c_str());
                    }
                }
            }
        }
    }

    // A NaN or an infinity among the activations makes every quantized dot
    // product that reads its block NaN, on every ISA, as the f32 kernels
    // (and the reference forward pass) make it: the int8 quantizer used to
    // skip a NaN when taking the block's max and go on with the rest, so
    // non-finite hidden states turned into ordinary logits.
    void act_quant_keeps_non_finite() {
        const size_t n = 512;
        const float bad[] = {std::nanf(""), INFINITY, -INFINITY};
        for (const float v : bad) {
            std::vector<float> x = random_row(rng_, n);
            x[300] = v;  // block 9 of 32, block 1 of 256
            for (ActKind kind : {ActKind::Q8_0, ActKind::Q8_K}) {
                const Acts a = make_acts(kind, {x});
                const int bs = act_block_size(kind);
                for (size_t b = 0; b < n / static_cast<size_t>(bs); ++b) {
                    const double d = 2.0 * a.half[0][b * bs];
                    QVERIFY2(std::isnan(d) == (b == 300 / static_cast<size_t>(bs)),
                             where("block scale").c_str());
                }
            }
            for (const Isa isa : isas()) {
                for (const Type t :
                     {Type::Q8_0, Type::Q4_0, Type::Q4_1, Type::Q5_0, Type::Q5_1, Type::IQ4_NL,
                      Type::Q2_K, Type::Q3_K, Type::Q4_K, Type::Q5_K, Type::Q6_K}) {
                    const WeightKernel* k = weight_kernel(id(t), isa);
                    QVERIFY(k != nullptr);
                    const WRow w = make_weight(id(t), random_row(rng_, n), 0);
                    const Acts a = make_acts(k->act, {x});
                    float out = 0.0f;
                    k->dot(static_cast<int64_t>(n), w.data,
                           reinterpret_cast<const uint8_t*>(a.buf.data()), a.stride, 1, &out, 1);
                    QVERIFY2(std::isnan(out),
                             where(std::string(isa_name(isa)) + " " + wb::ggml::type_name(id(t)) +
                                   ": " + std::to_string(out))
                                 .c_str());
                }
            }
        }
    }

    void dot_kernels_data() {
        QTest::addColumn<uint32_t>("type");
        QTest::addColumn<int>("isa");
        QTest::addColumn<int>("n");
        struct Case {
            Type t;
            std::vector<int> ns;
        };
        const std::vector<Case> cases = {
            {Type::F32, {1, 7, 17, 33, 100, 2048, 2055}},
            {Type::F16, {1, 7, 17, 33, 100, 2048, 2055}},
            {Type::BF16, {1, 7, 17, 33, 100, 2048, 2055}},
            {Type::Q8_0, {32, 96, 2048, 5632 + 32}},
            {Type::Q4_0, {32, 96, 2048, 5632 + 32}},
            {Type::Q4_1, {32, 96, 2048, 5632 + 32}},
            {Type::Q5_0, {32, 96, 2048, 5632 + 32}},
            {Type::Q5_1, {32, 96, 2048, 5632 + 32}},
            {Type::IQ4_NL, {32, 96, 2048, 5632 + 32}},
            {Type::Q2_K, {256, 768, 2048, 5632}},
            {Type::Q3_K, {256, 768, 2048, 5632}},
            {Type::Q4_K, {256, 768, 2048, 5632}},
            {Type::Q5_K, {256, 768, 2048, 5632}},
            {Type::Q6_K, {256, 768, 2048, 5632}},
        };
        for (Isa isa : isas()) {
            for (const Case& c : cases) {
                for (int n : c.ns) {
                    const std::string name = wb::ggml::type_upper_name(id(c.t)) + " " +
                                             isa_name(isa) + " n=" + std::to_string(n);
                    QTest::newRow(name.c_str()) << id(c.t) << static_cast<int>(isa) << n;
                }
            }
        }
    }

    void dot_kernels() {
        QFETCH(uint32_t, type);
        QFETCH(int, isa);
        QFETCH(int, n);
        const WeightKernel* k = weight_kernel(type, static_cast<Isa>(isa));
        QVERIFY(k != nullptr);
        // The table really hands out the ISA's own kernel.
        const WeightKernel* own =
            static_cast<Isa>(isa) == Isa::Avx512    ? detail::avx512_kernel(type)
            : static_cast<Isa>(isa) == Isa::AvxVnni ? detail::avxvnni_kernel(type)
            : static_cast<Isa>(isa) == Isa::Avx2    ? detail::avx2_kernel(type)
                                                    : detail::scalar_kernel(type);
        QCOMPARE(k, own);
        for (size_t misalign : {0u, 1u, 3u}) {
            const WRow w = make_weight(type, random_row(rng_, static_cast<size_t>(n)), misalign);
            std::vector<std::vector<float>> x;
            for (int t = 0; t < kMaxTile; ++t)
                x.push_back(random_row(rng_, static_cast<size_t>(n)));
            const Acts a = make_acts(k->act, x);
            for (int nt = 1; nt <= kMaxTile; ++nt) {
                std::vector<float> out(static_cast<size_t>(nt) * 3, NAN);  // stride 3, poisoned
                k->dot(n, w.data, reinterpret_cast<const uint8_t*>(a.buf.data()), a.stride, nt,
                       out.data(), 3);
                for (int t = 0; t < nt; ++t) {
                    double ref_q = 0.0, ref_x = 0.0, mag = 0.0, act_bound = 0.0;
                    for (int i = 0; i < n; ++i) {
                        ref_q += double{w.deq[i]} * a.deq[t][i];
                        ref_x += double{w.deq[i]} * double{x[t][i]};
                        mag += std::fabs(double{w.deq[i]} * a.deq[t][i]);
                        act_bound += std::fabs(double{w.deq[i]}) * a.half[t][i];
                    }
                    // f32 rounding of the per-block (or per-lane) partial sums
                    const double f32_tol = 4.0 * 0x1p-24 * (n / 8.0 + 16.0) * mag + 1e-30;
                    const double got = out[static_cast<size_t>(t) * 3];
                    const std::string msg = " type " + wb::ggml::type_upper_name(type) + " n " +
                                            std::to_string(n) + " tile " + std::to_string(nt) +
                                            " token " + std::to_string(t) + " misalign " +
                                            std::to_string(misalign) + ": got " +
                                            std::to_string(got) + " want " + std::to_string(ref_q);
                    QVERIFY2(std::fabs(got - ref_q) <= f32_tol,
                             where("vs quantized inputs" + msg).c_str());
                    QVERIFY2(std::fabs(got - ref_x) <= f32_tol + act_bound * (1 + 1e-6),
                             where("vs f32 activations" + msg).c_str());
                }
            }
        }
    }

    void interleave_f16_layout() {
        // F16 and BF16 (cpu/interleave.h): value j of row r at 16j + 2r of
        // its 8-value block; 3 blocks of 8 values; rows read back unchanged;
        // a row of 8k + 4 values has no whole blocks, so no form.
        for (const Type type : {Type::F16, Type::BF16}) {
            const size_t nb = 3, rb = nb * 16;
            QCOMPARE(interleave_block_bytes(id(type)), size_t{16});
            QVERIFY(wb::ggml::row_bytes(id(type), 20) % interleave_block_bytes(id(type)) != 0);
            std::vector<uint8_t> src(8 * rb), group(8 * rb + 1, 0xEE), back(rb);
            for (uint8_t& v : src) v = static_cast<uint8_t>(rng_());
            interleave_group(id(type), src.data(), rb, group.data());
            QCOMPARE(group[8 * rb], uint8_t{0xEE});
            for (size_t b = 0; b < nb; ++b)
                for (int r = 0; r < 8; ++r)
                    for (int j = 0; j < 8; ++j)
                        for (int k = 0; k < 2; ++k)
                            QCOMPARE(group[128 * b + 16 * j + 2 * r + k],
                                     src[r * rb + 16 * b + 2 * j + k]);
            for (int r = 0; r < 8; ++r) {
                deinterleave_row(id(type), group.data(), rb, r, back.data());
                QVERIFY(std::memcmp(back.data(), src.data() + r * rb, rb) == 0);
            }
        }
    }

    void interleave_layout_and_round_trip() {
        // The documented positions (cpu/interleave.h), checked byte by byte
        // on a hand-made group: block b's scale of row r at 2r, quant byte
        // 4l + j of row r at 16 + 32l + 4r + j (Q8_0's XOR 0x80); and each
        // row read back unchanged.
        struct Form {
            Type t;
            size_t block;
            int slices;
            uint8_t flip;
        };
        for (const Form f : {Form{Type::Q4_0, 18, 4, 0}, Form{Type::Q8_0, 34, 8, 0x80}}) {
            const size_t nb = 3, rb = nb * f.block;
            std::vector<uint8_t> src(8 * rb), group(8 * rb + 1, 0xEE), back(rb);
            for (uint8_t& v : src) v = static_cast<uint8_t>(rng_());
            interleave_group(id(f.t), src.data(), rb, group.data());
            QCOMPARE(group[8 * rb], uint8_t{0xEE});  // nothing past the group
            for (size_t b = 0; b < nb; ++b) {
                const uint8_t* gb = group.data() + b * 8 * f.block;
                for (int r = 0; r < 8; ++r) {
                    const uint8_t* blk = src.data() + r * rb + b * f.block;
                    QCOMPARE(gb[2 * r], blk[0]);
                    QCOMPARE(gb[2 * r + 1], blk[1]);
                    for (int l = 0; l < f.slices; ++l)
                        for (int j = 0; j < 4; ++j)
                            QCOMPARE(gb[16 + 32 * l + 4 * r + j],
                                     static_cast<uint8_t>(blk[2 + 4 * l + j] ^ f.flip));
                }
            }
            for (int r = 0; r < 8; ++r) {
                deinterleave_row(id(f.t), group.data(), rb, r, back.data());
                QVERIFY(std::memcmp(back.data(), src.data() + r * rb, rb) == 0);
            }
        }
        // Q4_K: d at 2r, dmin at 16 + 2r, scale byte k at 32 + 8k + r,
        // nibble byte 4 sl + j at 128 + 32 sl + 4r + j.
        const size_t nb = 2, rb = nb * 144;
        std::vector<uint8_t> src(8 * rb), group(8 * rb + 1, 0xEE), back(rb);
        for (uint8_t& v : src) v = static_cast<uint8_t>(rng_());
        interleave_group(id(Type::Q4_K), src.data(), rb, group.data());
        QCOMPARE(group[8 * rb], uint8_t{0xEE});
        for (size_t b = 0; b < nb; ++b) {
            const uint8_t* gb = group.data() + b * 8 * 144;
            for (int r = 0; r < 8; ++r) {
                const uint8_t* blk = src.data() + r * rb + b * 144;
                QVERIFY(std::memcmp(gb + 2 * r, blk, 2) == 0);
                QVERIFY(std::memcmp(gb + 16 + 2 * r, blk + 2, 2) == 0);
                for (int k = 0; k < 12; ++k) QCOMPARE(gb[32 + 8 * k + r], blk[4 + k]);
                for (int sl = 0; sl < 32; ++sl)
                    for (int j = 0; j < 4; ++j)
                        QCOMPARE(gb[128 + 32 * sl + 4 * r + j], blk[16 + 4 * sl + j]);
            }
        }
        for (int r = 0; r < 8; ++r) {
            deinterleave_row(id(Type::Q4_K), group.data(), rb, r, back.data());
            QVERIFY(std::memcmp(back.data(), src.data() + r * rb, rb) == 0);
        }
        // Q6_K: d (block bytes 208..209) at 2r, scale k (192 + k) at 16 + 8k + r,
        // ql byte 4 sl + j at 144 + 32 sl + 4r + j, qh byte 4 sl + j (128 + ...)
        // at 1168 + 32 sl + 4r + j.
        const size_t rb6 = 2 * 210;
        std::vector<uint8_t> src6(8 * rb6), group6(8 * rb6 + 1, 0xEE), back6(rb6);
        for (uint8_t& v : src6) v = static_cast<uint8_t>(rng_());
        interleave_group(id(Type::Q6_K), src6.data(), rb6, group6.data());
        QCOMPARE(group6[8 * rb6], uint8_t{0xEE});
        for (size_t b = 0; b < 2; ++b) {
            const uint8_t* gb = group6.data() + b * 8 * 210;
            for (int r = 0; r < 8; ++r) {
                const uint8_t* blk = src6.data() + r * rb6 + b * 210;
                QVERIFY(std::memcmp(gb + 2 * r, blk + 208, 2) == 0);
                for (int k = 0; k < 16; ++k) QCOMPARE(gb[16 + 8 * k + r], blk[192 + k]);
                for (int sl = 0; sl < 32; ++sl)
                    for (int j = 0; j < 4; ++j)
                        QCOMPARE(gb[144 + 32 * sl + 4 * r + j], blk[4 * sl + j]);
                for (int sl = 0; sl < 16; ++sl)
                    for (int j = 0; j < 4; ++j)
                        QCOMPARE(gb[1168 + 32 * sl + 4 * r + j], blk[128 + 4 * sl + j]);
            }
        }
        for (int r = 0; r < 8; ++r) {
            deinterleave_row(id(Type::Q6_K), group6.data(), rb6, r, back6.data());
            QVERIFY(std::memcmp(back6.data(), src6.data() + r * rb6, rb6) == 0);
        }
    }

    void dot_x8_kernels_data() {
        QTest::addColumn<uint32_t>("type");
        QTest::addColumn<int>("isa");
        QTest::addColumn<int>("n");
        for (Isa isa : isas())
            for (Type t : {Type::F16, Type::BF16, Type::Q4_0, Type::Q8_0, Type::Q4_K, Type::Q6_K})
                for (int n : t == Type::Q4_K || t == Type::Q6_K
                                 ? std::vector<int>{256, 768, 2048, 5632}
                             : t == Type::F16 || t == Type::BF16
                                 ? std::vector<int>{8, 40, 2048, 5632 + 8}
                                 : std::vector<int>{32, 96, 2048, 5632 + 32})
                    QTest::newRow((wb::ggml::type_upper_name(id(t)) + " " + isa_name(isa) +
                                   " n=" + std::to_string(n))
                                      .c_str())
                        << id(t) << static_cast<int>(isa) << n;
    }

    // The 8-row kernels: each row's result within the same bounds as the
    // one-row kernels' (dot_kernels), from a group at odd byte offsets,
    // written at a stride with poisoned gaps.
    void dot_x8_kernels() {
        QFETCH(uint32_t, type);
        QFETCH(int, isa);
        QFETCH(int, n);
        const WeightKernel* k = weight_kernel(type, static_cast<Isa>(isa));
        QVERIFY(k != nullptr && k->dot_x8 != nullptr);
        const size_t rb = wb::ggml::row_bytes(type, static_cast<uint64_t>(n));
        for (size_t misalign : {0u, 1u, 3u}) {
            std::vector<WRow> rows;
            std::vector<uint8_t> src(8 * rb), buf(8 * rb + misalign);
            for (int r = 0; r < 8; ++r) {
                rows.push_back(make_weight(type, random_row(rng_, static_cast<size_t>(n)), 0));
                std::memcpy(src.data() + r * rb, rows.back().data, rb);
            }
            interleave_group(type, src.data(), rb, buf.data() + misalign);
            std::vector<std::vector<float>> x;
            for (int t = 0; t < kMaxTile; ++t)
                x.push_back(random_row(rng_, static_cast<size_t>(n)));
            const Acts a = make_acts(k->act, x);
            for (int nt = 1; nt <= kMaxTile; ++nt) {
                const size_t os = 11;  // 8 rows, then 3 poisoned floats per token
                std::vector<float> out(static_cast<size_t>(nt) * os, NAN);
                k->dot_x8(n, buf.data() + misalign, reinterpret_cast<const uint8_t*>(a.buf.data()),
                          a.stride, nt, out.data(), os);
                for (int t = 0; t < nt; ++t) {
                    for (int r = 0; r < 8; ++r) {
                        double ref_q = 0.0, ref_x = 0.0, mag = 0.0, act_bound = 0.0;
                        for (int i = 0; i < n; ++i) {
                            const double wv = rows[size_t(r)].deq[size_t(i)];
                            ref_q += wv * a.deq[t][i];
                            ref_x += wv * double{x[t][i]};
                            mag += std::fabs(wv * a.deq[t][i]);
                            act_bound += std::fabs(wv) * a.half[t][i];
                        }
                        const double f32_tol = 4.0 * 0x1p-24 * (n / 8.0 + 16.0) * mag + 1e-30;
                        const double got = out[static_cast<size_t>(t) * os + size_t(r)];
                        const std::string msg =
                            " type " + wb::ggml::type_upper_name(type) + " n " + std::to_string(n) +
                            " tile " + std::to_string(nt) + " token " + std::to_string(t) +
                            " row " + std::to_string(r) + " misalign " + std::to_string(misalign) +
                            ": got " + std::to_string(got) + " want " + std::to_string(ref_q);
                        QVERIFY2(std::fabs(got - ref_q) <= f32_tol,
                                 where("vs quantized inputs" + msg).c_str());
                        QVERIFY2(std::fabs(got - ref_x) <= f32_tol + act_bound * (1 + 1e-6),
                                 where("vs f32 activations" + msg).c_str());
                    }
                    for (size_t g = 8; g < os; ++g)
                        QVERIFY2(std::isnan(out[static_cast<size_t>(t) * os + g]),
                                 "wrote between the token's rows");
                }
            }
        }
    }

    void dot_x16_kernels_data() {
        QTest::addColumn<uint32_t>("type");
        QTest::addColumn<int>("isa");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("rows");  // 16: dot_x16, 32: dot_x32
        bool any = false;
        for (Isa isa : isas())
            for (Type t :
                 {Type::F32, Type::F16, Type::BF16, Type::Q8_0, Type::Q4_0, Type::Q4_K, Type::Q6_K})
                for (int rows : {16, 32}) {
                    const WeightKernel* k = weight_kernel(id(t), isa);
                    if (k == nullptr || (rows == 16 ? k->dot_x16 : k->dot_x32) == nullptr) continue;
                    any = true;
                    const int blk = t == Type::F16 || t == Type::BF16    ? 8
                                    : t == Type::Q4_K || t == Type::Q6_K ? 256
                                                                         : 32;
                    for (int n : {blk, 5 * blk, 2048, 5632 + blk})
                        QTest::newRow((wb::ggml::type_upper_name(id(t)) + " " + isa_name(isa) +
                                       " x" + std::to_string(rows) + " n=" + std::to_string(n))
                                          .c_str())
                            << id(t) << static_cast<int>(isa) << n << rows;
                }
        // The AVX-512 level must bring its F16 and BF16 kernels (else this
        // test is empty there).
        if (isa_available(Isa::Avx512))
            for (Type t : {Type::F16, Type::BF16}) {
                QVERIFY(weight_kernel(id(t), Isa::Avx512)->dot_x16 != nullptr);
                QVERIFY(weight_kernel(id(t), Isa::Avx512)->dot_x32 != nullptr);
            }
        if (!any) QTest::newRow("no 16-row kernel on this CPU") << 0u << -1 << 0 << 16;
    }

    // The 16- and 32-row kernels: two or four adjacent groups in one call
    // give, bit for bit, what the 8-row kernel gives for each group (so a
    // row's sum does not depend on which kernel reads it), and within
    // dot_x8_kernels' bounds of the float64 reference; gaps between tokens
    // stay poisoned.
    void dot_x16_kernels() {
        QFETCH(uint32_t, type);
        QFETCH(int, isa);
        QFETCH(int, n);
        QFETCH(int, rows);
        if (isa < 0) QSKIP("no 16-row kernel on this CPU");
        const WeightKernel* k = weight_kernel(type, static_cast<Isa>(isa));
        QVERIFY(k != nullptr && k->dot_x8 != nullptr);
        const DotX8Fn wide = rows == 16 ? k->dot_x16 : k->dot_x32;
        const int max_tile = rows == 16 ? kMaxTile16 : kMaxTile32;
        QVERIFY(wide != nullptr);
        const int groups = rows / 8;
        const size_t rb = wb::ggml::row_bytes(type, static_cast<uint64_t>(n));
        for (size_t misalign : {0u, 3u}) {
            std::vector<WRow> w;
            std::vector<uint8_t> src(size_t(rows) * rb), buf(size_t(rows) * rb + misalign);
            for (int r = 0; r < rows; ++r) {
                w.push_back(make_weight(type, random_row(rng_, static_cast<size_t>(n)), 0));
                std::memcpy(src.data() + r * rb, w.back().data, rb);
            }
            for (int g = 0; g < groups; ++g)
                interleave_group(type, src.data() + g * 8 * rb, rb,
                                 buf.data() + misalign + g * 8 * rb);
            std::vector<std::vector<float>> x;
            for (int t = 0; t < max_tile; ++t)
                x.push_back(random_row(rng_, static_cast<size_t>(n)));
            const Acts a = make_acts(k->act, x);
            const auto* ab = reinterpret_cast<const uint8_t*>(a.buf.data());
            for (int nt = 1; nt <= max_tile; ++nt) {
                const size_t os = size_t(rows) + 3;  // the rows, then 3 poisoned floats per token
                std::vector<float> out(static_cast<size_t>(nt) * os, NAN), out8 = out;
                wide(n, buf.data() + misalign, ab, a.stride, nt, out.data(), os);
                for (int g = 0; g < groups; ++g)  // as matmul calls it: kMaxTile tokens a call
                    for (int s0 = 0; s0 < nt; s0 += kMaxTile)
                        k->dot_x8(n, buf.data() + misalign + g * 8 * rb, ab + s0 * a.stride,
                                  a.stride, std::min(kMaxTile, nt - s0),
                                  out8.data() + s0 * os + 8 * g, os);
                for (int t = 0; t < nt; ++t) {
                    for (int r = 0; r < rows; ++r) {
                        const size_t at = static_cast<size_t>(t) * os + size_t(r);
                        double ref = 0.0, mag = 0.0;
                        for (int i = 0; i < n; ++i) {
                            const double wv = w[size_t(r)].deq[size_t(i)];
                            ref += wv * a.deq[t][i];
                            mag += std::fabs(wv * a.deq[t][i]);
                        }
                        const std::string msg =
                            wb::ggml::type_upper_name(type) + " n " + std::to_string(n) + " tile " +
                            std::to_string(nt) + " token " + std::to_string(t) + " row " +
                            std::to_string(r) + ": got " + std::to_string(out[at]) + " dot_x8 " +
                            std::to_string(out8[at]);
                        QVERIFY2(std::memcmp(&out[at], &out8[at], sizeof(float)) == 0,
                                 where(std::to_string(rows) + "-row and 8-row sums differ: " + msg)
                                     .c_str());
                        QVERIFY2(std::fabs(double{out[at]} - ref) <=
                                     4.0 * 0x1p-24 * (n / 8.0 + 16.0) * mag + 1e-30,
                                 where("vs quantized inputs: " + msg).c_str());
                    }
                    for (size_t g = size_t(rows); g < os; ++g)
                        QVERIFY2(std::isnan(out[static_cast<size_t>(t) * os + g]),
                                 "wrote between the token's rows");
                }
            }
        }
    }

    void best_isa_follows_env() {
        qputenv("WB_CPU_ISA", "scalar");
        QCOMPARE(best_isa(), Isa::Scalar);
        qputenv("WB_CPU_ISA", "avx2");
        QCOMPARE(best_isa(), isa_available(Isa::Avx2) ? Isa::Avx2 : Isa::Scalar);
        qputenv("WB_CPU_ISA", "avx-vnni");
        QCOMPARE(best_isa(), isa_available(Isa::AvxVnni) ? Isa::AvxVnni
                             : isa_available(Isa::Avx2)  ? Isa::Avx2
                                                         : Isa::Scalar);
        qunsetenv("WB_CPU_ISA");
        QCOMPARE(best_isa(), isa_available(Isa::Avx512)    ? Isa::Avx512
                             : isa_available(Isa::AvxVnni) ? Isa::AvxVnni
                             : isa_available(Isa::Avx2)    ? Isa::Avx2
                                                           : Isa::Scalar);
    }

    void thread_pool_runs_every_task_once() {
        ThreadPool pool(3);
        QCOMPARE(pool.size(), 3u);
        for (uint32_t run = 0; run < 300; ++run) {
            const uint32_t n = 1 + run % 37;
            std::vector<std::atomic<int>> hits(n);
            std::atomic<unsigned> max_thread{0};
            pool.run(n, [&](uint32_t task, unsigned thread) {
                hits[task].fetch_add(1);
                unsigned m = max_thread.load();
                while (thread > m && !max_thread.compare_exchange_weak(m, thread)) {
                }
            });
            for (uint32_t i = 0; i < n; ++i) QCOMPARE(hits[i].load(), 1);
            QVERIFY(max_thread.load() < 3u);
        }
    }

    void axpy_matches_double_reference() {
        // y += a * x over f32 and f16 rows, every length 1..80 (the AVX2
        // kernel's 8-wide body and every tail) and head_dim-like 64..256;
        // expected: the same sums in double from the stored values.
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        for (const Isa isa : isas()) {
            for (const bool f16 : {false, true}) {
                const AxpyFn axpy = axpy_kernel(f16, isa);
                std::vector<int64_t> lengths;
                for (int64_t n = 1; n <= 80; ++n) lengths.push_back(n);
                for (int64_t n : {64, 128, 256}) lengths.push_back(n);
                for (const int64_t n : lengths) {
                    std::vector<uint8_t> x(size_t(n) * 4 + 1);  // +1: read at an odd address
                    std::vector<double> xv(static_cast<size_t>(n));
                    for (int64_t i = 0; i < n; ++i) {
                        const float v = u(rng);
                        if (f16) {
                            const uint16_t h = wb::ggml::fp32_to_fp16(v);
                            std::memcpy(&x[1 + 2 * size_t(i)], &h, 2);
                            xv[size_t(i)] = double(wb::ggml::fp16_to_fp32(h));
                        } else {
                            std::memcpy(&x[1 + 4 * size_t(i)], &v, 4);
                            xv[size_t(i)] = double(v);
                        }
                    }
                    std::vector<float> y(static_cast<size_t>(n));
                    for (float& v : y) v = u(rng);
                    const float a = u(rng);
                    std::vector<double> want(static_cast<size_t>(n));
                    for (size_t i = 0; i < size_t(n); ++i)
                        want[i] = double(y[i]) + double(a) * xv[i];
                    // the same row into 1..8 outputs at once (the query heads
                    // sharing a kv head), rows n + 3 apart: each against
                    // double, and head 0 bit for bit what a lone call gives
                    const int n_y = 1 + static_cast<int>(n % kMaxAxpyOutputs);
                    const size_t ys_stride = size_t(n) + 3;
                    std::vector<float> ys(static_cast<size_t>(n_y) * ys_stride, NAN);
                    std::vector<float> as(static_cast<size_t>(n_y));
                    for (int h = 0; h < n_y; ++h) {
                        as[size_t(h)] = h == 0 ? a : u(rng);
                        for (size_t i = 0; i < size_t(n); ++i)
                            ys[size_t(h) * ys_stride + i] = h == 0 ? y[i] : u(rng);
                    }
                    const std::vector<float> ys0 = ys;
                    axpy(n, &a, 0, 1, x.data() + 1, 0, nullptr, 1, y.data(), 0);
                    axpy(n, as.data(), 1, n_y, x.data() + 1, 0, nullptr, 1, ys.data(), ys_stride);
                    for (int h = 0; h < n_y; ++h) {
                        for (size_t i = 0; i < size_t(n); ++i) {
                            const size_t k = size_t(h) * ys_stride + i;
                            const double w = double(ys0[k]) + double(as[size_t(h)]) * xv[i];
                            QVERIFY2(std::abs(double(ys[k]) - w) <= 1e-6 * (1 + std::abs(w)),
                                     qPrintable(QString("multi-output head %1 of %2, n=%3 i=%4")
                                                    .arg(h)
                                                    .arg(n_y)
                                                    .arg(n)
                                                    .arg(i)));
                        }
                        for (size_t i = size_t(n); i < ys_stride && h + 1 < n_y; ++i)
                            QVERIFY2(std::isnan(ys[size_t(h) * ys_stride + i]),
                                     "wrote between the outputs");
                    }
                    for (size_t i = 0; i < size_t(n); ++i)
                        QVERIFY2(ys[i] == y[i], "head 0 of a multi-output call differs from alone");
                    for (size_t i = 0; i < size_t(n); ++i)
                        QVERIFY2(std::abs(double(y[i]) - want[i]) <= 1e-6 * (1 + std::abs(want[i])),
                                 qPrintable(QString("%1 %2 n=%3 i=%4: %5 vs %6")
                                                .arg(isa_name(isa))
                                                .arg(f16 ? "f16" : "f32")
                                                .arg(n)
                                                .arg(i)
                                                .arg(double(y[i]))
                                                .arg(want[i])));
                }
            }
        }
    }

    // Attention scores over a span of cached keys picked out of order
    // (every key count 1..37 covers the 16-key blocks and 1..3-key tails),
    // 1..8 heads (pairs and a lone one), head sizes 8..256: against the dot
    // in double from the stored keys, within f32 rounding of the sum of
    // magnitudes; gaps between heads' rows stay poisoned.
    void attn_scores_match_double_reference() {
        std::mt19937 rng(19);
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        for (const Isa isa : isas()) {
            for (const bool f16 : {false, true}) {
                const ScoresFn f = scores_kernel(f16, isa);
                for (const int64_t n : {8, 64, 80, 128, 256}) {
                    const uint32_t n_cells = 41;
                    const size_t ks = size_t(n) * 4 + 6;  // a cell's bytes
                    std::vector<uint8_t> k;
                    std::vector<double> kv;
                    make_cells(rng, n_cells, n, ks, f16, k, kv);
                    for (uint32_t n_keys = 1; n_keys <= 37; n_keys += (n == 64 ? 1 : 12)) {
                        std::vector<uint32_t> rows(n_keys);
                        for (uint32_t& r : rows) r = static_cast<uint32_t>(rng() % n_cells);
                        // 37 heads: more than the AVX-512 kernel takes a pass (32)
                        const int n_q = n_keys == 37 ? 37 : 1 + static_cast<int>(n_keys % 8);
                        const size_t qs = size_t(n) + 5, ss = n_keys + 2;
                        std::vector<float> q(size_t(n_q) * qs);
                        for (float& v : q) v = u(rng);
                        std::vector<float> out(size_t(n_q) * ss, NAN);
                        f(n, q.data(), qs, n_q, k.data() + 1, ks, rows.data(), n_keys, out.data(),
                          ss);
                        // Every FMA level sums as the AVX2 kernel: the same bits.
                        std::vector<float> out2 = out;
                        if (uses_avx2(isa))
                            scores_kernel(f16, Isa::Avx2)(n, q.data(), qs, n_q, k.data() + 1, ks,
                                                          rows.data(), n_keys, out2.data(), ss);
                        QVERIFY2(std::memcmp(out.data(), out2.data(), out.size() * 4) == 0,
                                 qPrintable(QString("%1 n=%2 keys=%3: not the AVX2 kernel's bits")
                                                .arg(isa_name(isa))
                                                .arg(n)
                                                .arg(n_keys)));
                        for (int h = 0; h < n_q; ++h) {
                            for (uint32_t j = 0; j < n_keys; ++j) {
                                double want = 0.0, mag = 0.0;
                                for (int64_t i = 0; i < n; ++i) {
                                    const double t = double(q[size_t(h) * qs + size_t(i)]) *
                                                     kv[rows[j] * size_t(n) + size_t(i)];
                                    want += t;
                                    mag += std::abs(t);
                                }
                                const double got = out[size_t(h) * ss + j];
                                QVERIFY2(std::abs(got - want) <= 2.0 * double(n) * 0x1p-24 * mag,
                                         qPrintable(QString("%1 %2 n=%3 keys=%4 heads=%5 h=%6 "
                                                            "j=%7: %8 vs %9")
                                                        .arg(isa_name(isa))
                                                        .arg(f16 ? "f16" : "f32")
                                                        .arg(n)
                                                        .arg(n_keys)
                                                        .arg(n_q)
                                                        .arg(h)
                                                        .arg(j)
                                                        .arg(got)
                                                        .arg(want)));
                            }
                            for (size_t j = n_keys; j < ss; ++j)
                                QVERIFY2(std::isnan(out[size_t(h) * ss + j]),
                                         "wrote between the heads' scores");
                        }
                    }
                }
            }
        }
    }

    // softmax's numerator against exp in double: every length 1..40 (the
    // AVX2 kernel's body and tails) and a few spans, scores spread over
    // [-40, 40] (so some exponents reach 0 in f32) or near each other; the
    // sum within the same bound; a NaN score makes the sum NaN.
    void softmax_matches_double_reference() {
        std::mt19937 rng(13);
        for (const Isa isa : isas()) {
            const SoftmaxFn softmax = softmax_kernel(isa);
            std::vector<uint32_t> lengths;
            for (uint32_t n = 1; n <= 40; ++n) lengths.push_back(n);
            for (uint32_t n : {64u, 257u, 1000u}) lengths.push_back(n);
            for (const uint32_t n : lengths) {
                for (const float spread : {40.0f, 0.5f}) {
                    std::uniform_real_distribution<float> u(-spread, spread);
                    std::vector<float> s(n + 1, NAN);  // one poisoned float past the end
                    for (uint32_t j = 0; j < n; ++j) s[j] = u(rng);
                    const float scale = 0.125f;
                    // the exponent as the kernel forms it: f32 scores and max,
                    // one f32 subtraction (its rounding is the input's, not exp's)
                    float mx = -INFINITY;
                    for (uint32_t j = 0; j < n; ++j) mx = std::max(mx, s[j] * scale);
                    std::vector<double> want(n);
                    double sum = 0.0;
                    for (uint32_t j = 0; j < n; ++j) {
                        want[j] = std::exp(double(s[j] * scale - mx));
                        sum += want[j];
                    }
                    const float got_sum = softmax(s.data(), n, scale);
                    const QString msg =
                        QString("%1 n=%2 spread %3").arg(isa_name(isa)).arg(n).arg(spread);
                    for (uint32_t j = 0; j < n; ++j)
                        QVERIFY2(
                            std::abs(double(s[j]) - want[j]) <= 4e-7 * want[j] + 1e-37,
                            qPrintable(
                                msg +
                                QString(" j=%1: %2 vs %3").arg(j).arg(double(s[j])).arg(want[j])));
                    QVERIFY2(std::abs(double(got_sum) - sum) <= 1e-6 * sum, qPrintable(msg));
                    QVERIFY2(std::isnan(s[n]), "wrote past the scores");
                    s[n / 2] = NAN;
                    QVERIFY2(std::isnan(softmax(s.data(), n, scale)), qPrintable(msg + " NaN"));
                }
            }
        }
    }

    // SwiGLU's gate against silu(g) * u in double: every length 1..40 (the
    // AVX2 body and tails) and an FFN width; gates over [-30, 30] with
    // +-0, +-100 and +-infinity among them; a NaN gate gives a NaN.
    void silu_glu_matches_double_reference() {
        std::mt19937 rng(17);
        std::uniform_real_distribution<float> ug(-30.0f, 30.0f), uu(-2.0f, 2.0f);
        for (const Isa isa : isas()) {
            const SiluGluFn f = silu_glu_kernel(isa);
            std::vector<int64_t> lengths;
            for (int64_t n = 1; n <= 40; ++n) lengths.push_back(n);
            lengths.push_back(5632);
            for (const int64_t n : lengths) {
                std::vector<float> g(static_cast<size_t>(n)), u(static_cast<size_t>(n)),
                    y(static_cast<size_t>(n) + 1, NAN);
                for (int64_t i = 0; i < n; ++i) {
                    g[size_t(i)] = ug(rng);
                    u[size_t(i)] = uu(rng);
                }
                const float special[] = {0.0f, -0.0f, 100.0f, -100.0f, INFINITY};
                for (size_t k = 0; k < 5 && k < size_t(n); ++k) g[size_t(n) - 1 - k] = special[k];
                f(n, g.data(), u.data(), y.data());
                for (int64_t i = 0; i < n; ++i) {
                    const double x = g[size_t(i)];
                    const double want = std::isinf(x)
                                            ? double(u[size_t(i)]) * x
                                            : x / (1.0 + std::exp(-x)) * double(u[size_t(i)]);
                    const double got = y[size_t(i)];
                    QVERIFY2(std::isinf(want)
                                 ? got == want
                                 : std::abs(got - want) <= 1e-6 * std::abs(want) + 1e-37,
                             qPrintable(QString("%1 n=%2 i=%3 g=%4: %5 vs %6")
                                            .arg(isa_name(isa))
                                            .arg(n)
                                            .arg(i)
                                            .arg(x)
                                            .arg(got)
                                            .arg(want)));
                }
                QVERIFY2(std::isnan(y[size_t(n)]), "wrote past the row");
                g[0] = std::nanf("");
                f(n, g.data(), u.data(), y.data());
                QVERIFY2(std::isnan(y[0]), "a NaN gate gave a number");
            }
        }
    }

    // Many cached rows in one call (attention's value sum over a span of
    // cells, picked out of order): the sum in double from the stored values
    // within f32 rounding of the sum of magnitudes, and bit for bit the
    // result of one call per row (what a quantized V cache does).
    void axpy_many_rows() {
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> u(-2.0f, 2.0f);
        for (const Isa isa : isas()) {
            for (const bool f16 : {false, true}) {
                const AxpyFn axpy = axpy_kernel(f16, isa);
                for (const int64_t n : {8, 24, 48, 64, 80, 128, 130}) {
                    const uint32_t n_cells = 53, n_rows = 37;
                    const size_t xs = size_t(n) * 4 + 12;  // a cell's bytes
                    std::vector<uint8_t> x;
                    std::vector<double> xv;
                    make_cells(rng, n_cells, n, xs, f16, x, xv);
                    std::vector<uint32_t> rows(n_rows);
                    for (uint32_t& r : rows) r = static_cast<uint32_t>(rng() % n_cells);
                    for (int n_y = 1; n_y <= kMaxAxpyOutputs; ++n_y) {
                        const size_t as = n_rows + 2, ys = size_t(n) + 3;
                        std::vector<float> a(size_t(n_y) * as);
                        for (float& v : a) v = u(rng);
                        std::vector<float> y(size_t(n_y) * ys, NAN);
                        for (int h = 0; h < n_y; ++h)
                            for (int64_t i = 0; i < n; ++i) y[size_t(h) * ys + size_t(i)] = u(rng);
                        std::vector<float> y1 = y;
                        const std::vector<float> y0 = y;
                        axpy(n, a.data(), as, n_y, x.data() + 1, xs, rows.data(), n_rows, y.data(),
                             ys);
                        for (uint32_t j = 0; j < n_rows; ++j)
                            axpy(n, a.data() + j, as, n_y, x.data() + 1 + rows[j] * xs, 0, nullptr,
                                 1, y1.data(), ys);
                        // Every FMA level adds the same terms in the same
                        // order: the AVX2 kernel's bits.
                        std::vector<float> y2 = y0;
                        if (uses_avx2(isa))
                            axpy_kernel(f16, Isa::Avx2)(n, a.data(), as, n_y, x.data() + 1, xs,
                                                        rows.data(), n_rows, y2.data(), ys);
                        for (int h = 0; h < n_y; ++h) {
                            for (int64_t i = 0; i < n; ++i) {
                                const size_t k = size_t(h) * ys + size_t(i);
                                double want = y0[k], mag = std::abs(double(y0[k]));
                                for (uint32_t j = 0; j < n_rows; ++j) {
                                    const double t = double(a[size_t(h) * as + j]) *
                                                     xv[rows[j] * size_t(n) + size_t(i)];
                                    want += t;
                                    mag += std::abs(t);
                                }
                                const QString msg = QString("%1 %2 n=%3 heads=%4 h=%5 i=%6")
                                                        .arg(isa_name(isa))
                                                        .arg(f16 ? "f16" : "f32")
                                                        .arg(n)
                                                        .arg(n_y)
                                                        .arg(h)
                                                        .arg(i);
                                QVERIFY2(std::memcmp(&y[k], &y1[k], 4) == 0,
                                         qPrintable("differs from a call per row: " + msg));
                                if (uses_avx2(isa))
                                    QVERIFY2(std::memcmp(&y[k], &y2[k], 4) == 0,
                                             qPrintable("differs from the AVX2 kernel: " + msg));
                                QVERIFY2(std::abs(double(y[k]) - want) <=
                                             2.0 * n_rows * 0x1p-24 * mag + 1e-30,
                                         qPrintable("vs double: " + msg));
                            }
                            for (size_t i = size_t(n); i < ys && h + 1 < n_y; ++i)
                                QVERIFY2(std::isnan(y[size_t(h) * ys + i]),
                                         "wrote between the outputs");
                        }
                    }
                }
            }
        }
    }

    void shared_thread_pool_serves_several_callers() {
        // One pool per thread count, kept while held.
        const auto a = ThreadPool::shared(3), b = ThreadPool::shared(3), c = ThreadPool::shared(2);
        QCOMPARE(a.get(), b.get());
        QVERIFY(a.get() != c.get());
        QCOMPARE(a->size(), 3u);
        // Two callers at once (two models decoding on two threads): their
        // loops are serialized, so each task of each loop runs exactly once
        // and no task of one loop sees the other's function.
        constexpr uint32_t kRuns = 20000;
        std::atomic<int> wrong{0};
        auto caller = [&](int id) {
            for (uint32_t run = 0; run < kRuns; ++run) {
                const uint32_t n = 1 + (run * 7 + uint32_t(id)) % 41;
                std::vector<std::atomic<int>> hits(n);
                a->run(n, [&](uint32_t task, unsigned) {
                    if (task < n) hits[task].fetch_add(1);  // n: this loop's own size
                });
                for (uint32_t i = 0; i < n; ++i)
                    if (hits[i].load() != 1) wrong.fetch_add(1);
            }
        };
        std::thread t1(caller, 1), t2(caller, 2);
        t1.join();
        t2.join();
        QCOMPARE(wrong.load(), 0);
    }

    void matmul_data() {
        QTest::addColumn<QString>("types");  // parts stacked by rows
        QTest::addColumn<int>("ne0");
        QTest::addColumn<int>("isa");
        for (Isa isa : isas()) {
            const auto add = [&](const char* types, int ne0) {
                QTest::newRow(
                    (std::string(types) + " " + isa_name(isa) + " ne0=" + std::to_string(ne0))
                        .c_str())
                    << QString(types) << ne0 << static_cast<int>(isa);
            };
            add("F32", 71);
            add("F16", 512);
            add("Q8_0", 544);
            add("Q4_0", 512);
            add("Q4_K+Q6_K+Q4_K", 512);  // Q|K|V of a Q4_K_M layer
            add("Q6_K", 768);
            add("Q5_K+Q6_K+Q5_K", 512);  // Q|K|V of a Q5_K_M layer
            add("Q4_1+Q5_0+Q5_1+IQ4_NL", 256);
            add("Q2_K+Q3_K", 512);
            add("BF16+Q8_0", 256);  // f32 activations stacked with int8 ones
            // "x8": interleaved groups of 8 rows (cpu/interleave.h), beside
            // parts in ggml's layout as a matrix's last rows % 8 are
            add("Q4_0x8+Q4_0", 512);
            add("Q8_0x8+Q6_K+Q4_0x8", 512);
            add("Q8_0x8", 544);
            add("Q4_Kx8+Q6_Kx8+Q4_Kx8+Q4_K", 512);  // Q|K|V of a Q4_K_M layer, repacked
            add("Q6_Kx8+Q6_K", 768);
            add("F16x8+F16", 520);
            add("BF16x8+BF16", 520);
            // "x8w": 256-312 interleaved rows, so that one thread's chunks
            // (rows / 8) reach the 32-row kernels and three threads' (16
            // rows) do not: their sums must agree bit for bit
            add("F16x8w+F16", 264);
            add("BF16x8w", 264);
        }
    }

    void matmul() {
        QFETCH(QString, types);
        QFETCH(int, ne0);
        QFETCH(int, isa);
        const size_t n = static_cast<size_t>(ne0);
        Weight w;
        w.ne0 = n;
        std::vector<WRow> rows;  // keeps the bytes alive
        std::vector<std::vector<float>> deq;
        std::vector<std::vector<uint8_t>> parts;
        bool interleaved = false;
        for (QString tn : types.split('+')) {
            const bool wide = tn.endsWith("x8w");
            if (wide) tn.chop(1);
            const bool x8 = tn.endsWith("x8");
            if (x8) tn.chop(2);
            interleaved |= x8;
            const auto* tr = wb::ggml::type_by_name(tn.toStdString());
            QVERIFY(tr != nullptr);
            const uint32_t t = static_cast<uint32_t>(tr->type);
            const uint64_t n_rows = wide ? 8 * (32 + rng_() % 8)
                                    : x8 ? 8 * (3 + rng_() % 5)
                                         : 37 + rng_() % 20;
            const size_t rb = wb::ggml::row_bytes(t, n);
            parts.emplace_back(rb * n_rows);
            for (uint64_t r = 0; r < n_rows; ++r) {
                const WRow wr = make_weight(t, random_row(rng_, n), 0);
                std::memcpy(parts.back().data() + r * rb, wr.data, rb);
                deq.push_back(wr.deq);
            }
            if (x8) {
                std::vector<uint8_t> packed(parts.back().size());
                for (uint64_t g = 0; g < n_rows / 8; ++g)
                    interleave_group(t, parts.back().data() + g * 8 * rb, rb,
                                     packed.data() + g * 8 * rb);
                parts.back() = std::move(packed);
            }
            w.parts.push_back(
                {t, parts.back().data(), n_rows, rb, x8 ? Layout::Interleaved8 : Layout::Rows});
            w.rows += n_rows;
        }
        for (size_t n_tok : {1u, 3u, 9u}) {
            const size_t ldx = n + 5, ldy = w.rows + 3;
            std::vector<float> x(n_tok * ldx);
            for (size_t t = 0; t < n_tok; ++t) {
                const std::vector<float> r = random_row(rng_, n);
                std::copy(r.begin(), r.end(), x.begin() + static_cast<ptrdiff_t>(t * ldx));
            }
            std::vector<float> y1(n_tok * ldy, NAN), y3(n_tok * ldy, NAN), yf(n_tok * ldy, NAN);
            ThreadPool one(1), three(3);
            MatmulScratch s1, s3, sf;
            wb::cpu::matmul(one, static_cast<Isa>(isa), w, x.data(), ldx, n_tok, y1.data(), ldy,
                            s1);
            wb::cpu::matmul(three, static_cast<Isa>(isa), w, x.data(), ldx, n_tok, y3.data(), ldy,
                            s3);
            // f32 activations (the dequantize fallback, which reads single
            // rows out of interleaved groups): within f32 rounding
            if (interleaved) {
                wb::cpu::matmul(three, static_cast<Isa>(isa), w, x.data(), ldx, n_tok, yf.data(),
                                ldy, sf, false);
                for (size_t t = 0; t < n_tok; ++t) {
                    for (uint64_t r = 0; r < w.rows; ++r) {
                        double ref = 0.0, mag = 0.0;
                        for (size_t i = 0; i < n; ++i) {
                            ref += double{deq[r][i]} * double{x[t * ldx + i]};
                            mag += std::fabs(double{deq[r][i]} * double{x[t * ldx + i]});
                        }
                        QVERIFY2(std::fabs(double{yf[t * ldy + r]} - ref) <= 1e-5 * mag + 1e-20,
                                 where("f32-activation matmul vs float64, row " + std::to_string(r))
                                     .c_str());
                    }
                }
            }
            for (size_t t = 0; t < n_tok; ++t) {
                for (uint64_t r = 0; r < w.rows; ++r) {
                    const float a = y1[t * ldy + r], b = y3[t * ldy + r];
                    QVERIFY2(std::memcmp(&a, &b, sizeof a) == 0,
                             where("threaded result differs from one thread").c_str());
                    // vs float64 with f32 activations: activation rounding at
                    // most d/2 = max|x|/254 per element of its block
                    double ref = 0.0, bound = 0.0, mag = 0.0;
                    for (size_t i = 0; i < n; ++i) {
                        const double xi = x[t * ldx + i];
                        ref += double{deq[r][i]} * xi;
                        mag += std::fabs(double{deq[r][i]} * xi);
                        bound += std::fabs(double{deq[r][i]});
                    }
                    double amax = 0.0;
                    for (size_t i = 0; i < n; ++i)
                        amax = std::max(amax, std::fabs(double{x[t * ldx + i]}));
                    // quantized activations: d <= max|x| / 127 in any block
                    const double tol = bound * amax / 254.0 + 1e-5 * mag + 1e-20;
                    QVERIFY2(std::fabs(double{a} - ref) <= tol,
                             where("matmul vs float64: " + std::to_string(a) + " vs " +
                                   std::to_string(ref) + " row " + std::to_string(r))
                                 .c_str());
                }
                QVERIFY2(std::isnan(y1[t * ldy + w.rows]), "wrote past the rows");
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestCpuKernels)
#include "test_cpu_kernels.moc"
