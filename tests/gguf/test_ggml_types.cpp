// ggml type layouts and CPU dequantization, against hand-worked values.

#include <QtTest>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "ggml/fp16.h"
#include "ggml/types.h"

using namespace wb::ggml;

class TestGgmlTypes : public QObject {
    Q_OBJECT
  private slots:
    void fp16_hand_values() {
        QCOMPARE(fp16_to_fp32(0x3C00), 1.0f);
        QCOMPARE(fp16_to_fp32(0xC000), -2.0f);
        QCOMPARE(fp16_to_fp32(0x7BFF), 65504.0f);
        QCOMPARE(fp16_to_fp32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
        QCOMPARE(fp16_to_fp32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
        QCOMPARE(fp16_to_fp32(0x3555), 0.333251953125f);
        QVERIFY(std::isinf(fp16_to_fp32(0x7C00)));
        QVERIFY(std::isnan(fp16_to_fp32(0x7E00)));
        QCOMPARE(fp32_to_fp16(1.0f), uint16_t(0x3C00));
        QCOMPARE(fp32_to_fp16(65504.0f), uint16_t(0x7BFF));
        QCOMPARE(fp32_to_fp16(65520.0f), uint16_t(0x7C00));  // ties to even -> overflow
        QCOMPARE(fp32_to_fp16(65519.0f), uint16_t(0x7BFF));
        QCOMPARE(fp32_to_fp16(1e-8f), uint16_t(0x0000));
        QCOMPARE(fp32_to_fp16(-0.0f), uint16_t(0x8000));
        // 1 + 2^-11 is exactly halfway between 1 and 1 + 2^-10: ties to even (1.0)
        QCOMPARE(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)), uint16_t(0x3C00));
        // 1 + 3*2^-11 is halfway between 1+2^-10 (odd) and 1+2^-9: rounds up to even
        QCOMPARE(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), uint16_t(0x3C02));
        // 3 * 2^-26 lies between subnormals 0 and 2^-24, above half: rounds to 2^-24
        QCOMPARE(fp32_to_fp16(3 * std::ldexp(1.0f, -26)), uint16_t(0x0001));
    }

    void fp16_round_trips_every_half() {
        for (uint32_t h = 0; h < 65536; ++h) {
            const float f = fp16_to_fp32(static_cast<uint16_t>(h));
            if (std::isnan(f)) continue;
            QCOMPARE(fp32_to_fp16(f), static_cast<uint16_t>(h));
        }
    }

    void fp16_rounding_matches_double_reference() {
        // Independent reference: nearest half by exhaustive search in double.
        std::vector<double> halves;
        for (uint32_t h = 0; h < 0x7C00; ++h)
            halves.push_back(fp16_to_fp32(static_cast<uint16_t>(h)));
        uint32_t seed = 12345;
        for (int k = 0; k < 20000; ++k) {
            seed = seed * 1664525u + 1013904223u;
            const float x = std::ldexp(static_cast<float>(seed >> 8) / 16777216.0f,
                                       static_cast<int>(seed % 40) - 26);
            auto it = std::lower_bound(halves.begin(), halves.end(), static_cast<double>(x));
            uint16_t want;
            if (it == halves.end()) {
                want = 0x7C00;
            } else {
                const size_t hi = static_cast<size_t>(it - halves.begin());
                const size_t lo = hi ? hi - 1 : 0;
                const double xd = static_cast<double>(x);
                const double dl = xd - halves[lo], dh = halves[hi] - xd;
                want = static_cast<uint16_t>((dl < dh || (dl == dh && lo % 2 == 0)) ? lo : hi);
            }
            QCOMPARE(fp32_to_fp16(x), want);
        }
    }

    void bf16() {
        QCOMPARE(bf16_to_fp32(0x3F80), 1.0f);
        QCOMPARE(bf16_to_fp32(0xC040), -3.0f);
        QCOMPARE(fp32_to_bf16(1.0f), uint16_t(0x3F80));
        QCOMPARE(fp32_to_bf16(std::bit_cast<float>(0x3F808000u)), uint16_t(0x3F80));  // tie -> even
        QCOMPARE(fp32_to_bf16(std::bit_cast<float>(0x3F818000u)), uint16_t(0x3F82));  // tie -> even
        const uint16_t src[2] = {0x4000, 0xBF00};
        float dst[2];
        dequantize_row(static_cast<uint32_t>(Type::BF16), src, dst, 2);
        QCOMPARE(dst[0], 2.0f);
        QCOMPARE(dst[1], -0.5f);
    }

    void q8_0_block_by_hand() {
        BlockQ8_0 b;
        b.d = fp32_to_fp16(0.5f);
        for (int i = 0; i < 32; ++i) b.qs[i] = static_cast<int8_t>(i * 8 - 128);
        float out[32];
        dequantize_row(8, &b, out, 32);
        QCOMPARE(out[0], -64.0f);
        QCOMPARE(out[1], -60.0f);
        QCOMPARE(out[31], (31 * 8 - 128) * 0.5f);
    }

    void q4_0_block_by_hand() {
        BlockQ4_0 b;
        b.d = fp32_to_fp16(2.0f);
        for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>((j & 0xF) | ((15 - j) << 4));
        float out[32];
        dequantize_row(2, &b, out, 32);
        QCOMPARE(out[0], -16.0f);   // (0 - 8) * 2
        QCOMPARE(out[15], 14.0f);   // (15 - 8) * 2
        QCOMPARE(out[16], 14.0f);   // high nibble of byte 0: 15
        QCOMPARE(out[31], -16.0f);  // high nibble of byte 15: 0
    }

    void unaligned_source_is_fine() {
        std::vector<uint8_t> buf(1 + 2 * sizeof(BlockQ8_0));
        BlockQ8_0 b{};
        b.d = 0x3C00;
        b.qs[3] = 7;
        std::memcpy(buf.data() + 1 + sizeof b, &b, sizeof b);
        float out[64];
        dequantize_row(8, buf.data() + 1, out, 64);
        QCOMPARE(out[32 + 3], 7.0f);
    }

    void unsupported_type_names_tensor() {
        float out[256];
        uint8_t in[256] = {};
        try {
            dequantize_row(16, in, out, 256, "blk.0.ffn_up.weight");  // iq2_xxs
            QFAIL("no exception");
        } catch (const UnsupportedType& e) {
            QCOMPARE(QString(e.what()),
                     QString("unsupported tensor type IQ2_XXS in tensor blk.0.ffn_up.weight "
                             "(supported: %1)")
                         .arg(QString::fromStdString(supported_type_names(Backend::Cpu))));
            QVERIFY(QString(e.what()).contains("Q8_0"));
        }
        QCOMPARE(type_name(4), std::string("type#4"));
        QVERIFY(type_traits(4) == nullptr);
        QCOMPARE(row_bytes(2, 64), size_t(36));
        QCOMPARE(row_bytes(8, 64), size_t(68));
        QCOMPARE(row_bytes(1, 172), size_t(344));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, row_bytes(2, 33));
    }
};

QTEST_APPLESS_MAIN(TestGgmlTypes)
#include "test_ggml_types.moc"
