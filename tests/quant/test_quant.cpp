// Quantizer and GGUF writer tests. Expected bytes come from llama.cpp:
// tests/data/golden/quant/blocks_q8_0_q4_0.json (ggml's reference quantizer)
// and the per-tensor / whole-file SHA-256 of the variant files that
// llama.cpp's tooling wrote (stories260K_quant_files.json).

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "common/file_hash.h"
#include "common/json_fixtures.h"
#include "ggml/fp16.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "quant/quantize_model.h"

using wb::gguf::Value;
using wb::gguf::ValueType;

namespace {

using wbtest::file_sha256;

const std::string kGolden = wbtest::data_dir() + "/golden/quant/";
const std::string kModel = wbtest::data_dir() + "/models/stories260K.gguf";

using wbtest::read_json;

QByteArray hex_bytes(const QJsonValue& v) {
    return QByteArray::fromHex(v.toString().toLatin1());
}

// Row input exactly as float32, from its bit patterns (not the decimal text).
std::vector<float> row_input(const QJsonObject& row) {
    std::vector<float> x;
    for (const QJsonValue& b : row["input_f32_bits"].toArray()) {
        const uint32_t bits = b.toString().toUInt(nullptr, 16);
        float f;
        std::memcpy(&f, &bits, 4);
        x.push_back(f);
    }
    return x;
}

QByteArray sha256(const void* p, size_t n) {
    return QCryptographicHash::hash(QByteArrayView(static_cast<const char*>(p), qsizetype(n)),
                                    QCryptographicHash::Sha256)
        .toHex();
}

const char* type_label(uint32_t t) {
    switch (static_cast<wb::ggml::Type>(t)) {
        case wb::ggml::Type::F32:
            return "F32";
        case wb::ggml::Type::F16:
            return "F16";
        case wb::ggml::Type::Q8_0:
            return "Q8_0";
        case wb::ggml::Type::Q4_0:
            return "Q4_0";
        default:
            return "?";
    }
}

Value scalar(ValueType t) {
    Value v;
    v.type = t;
    return v;
}

}  // namespace

class TestQuant : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::string tmp(const char* name) { return dir_.filePath(name).toStdString(); }

  private slots:
    // --- row quantizers against ggml's reference bytes -------------------

    void blocks_match_ggml() {
        const QJsonObject g = read_json(kGolden + "blocks_q8_0_q4_0.json");
        const QJsonArray rows = g["rows"].toArray();
        QCOMPARE(rows.size(), 12);
        for (const QJsonValue& rv : rows) {
            const QJsonObject row = rv.toObject();
            const int id = row["row"].toInt();
            const std::vector<float> x = row_input(row);
            QCOMPARE(x.size(), size_t(64));

            std::vector<wb::ggml::BlockQ8_0> q8(2);
            wb::ggml::quantize_row(uint32_t(wb::ggml::Type::Q8_0), x.data(), q8.data(), 64);
            const QByteArray q8b(reinterpret_cast<const char*>(q8.data()), 68);
            QVERIFY2(q8b == hex_bytes(row["q8_0_hex"]), qPrintable(QString("q8_0 row %1").arg(id)));

            std::vector<wb::ggml::BlockQ4_0> q4(2);
            wb::ggml::quantize_row(uint32_t(wb::ggml::Type::Q4_0), x.data(), q4.data(), 64);
            const QByteArray q4b(reinterpret_cast<const char*>(q4.data()), 36);
            QVERIFY2(q4b == hex_bytes(row["q4_0_hex"]), qPrintable(QString("q4_0 row %1").arg(id)));

            std::vector<uint16_t> h(64);
            wb::ggml::quantize_row(uint32_t(wb::ggml::Type::F16), x.data(), h.data(), 64);
            const QByteArray hb(reinterpret_cast<const char*>(h.data()), 128);
            QVERIFY2(hb == hex_bytes(row["f16_hex"]), qPrintable(QString("f16 row %1").arg(id)));

            // Round trip through the engine's dequantizer gives ggml's values.
            std::vector<float> back(64);
            wb::ggml::dequantize_row(uint32_t(wb::ggml::Type::Q4_0), q4.data(), back.data(), 64);
            const QJsonArray dq = row["q4_0_dequant"].toArray();
            for (int i = 0; i < 64; ++i) QCOMPARE(back[i], float(dq[i].toDouble()));
        }
    }

    void row_length_not_multiple_of_32_throws() {
        std::vector<float> x(40, 1.0f);
        std::vector<wb::ggml::BlockQ8_0> q(2);
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            wb::ggml::quantize_row(uint32_t(wb::ggml::Type::Q8_0), x.data(), q.data(), 40));
    }

    // --- writer ----------------------------------------------------------

    void writer_round_trip() {
        const std::string path = tmp("rt.gguf");
        std::vector<float> w(8 * 3);  // [8, 3] f32
        for (size_t i = 0; i < w.size(); ++i) w[i] = float(i) * 0.25f - 1.0f;
        std::vector<uint8_t> q(34);  // one q8_0 block [32]
        for (size_t i = 0; i < q.size(); ++i) q[i] = uint8_t(i * 7);
        {
            wb::gguf::Writer wr(path);
            Value v = scalar(ValueType::Uint8);
            v.u = 200;
            wr.set_kv("k.u8", v);
            v = scalar(ValueType::Int8);
            v.i = -5;
            wr.set_kv("k.i8", v);
            v = scalar(ValueType::Uint16);
            v.u = 65000;
            wr.set_kv("k.u16", v);
            v = scalar(ValueType::Int16);
            v.i = -30000;
            wr.set_kv("k.i16", v);
            wr.set_kv("k.u32", wb::gguf::make_u32(4000000000u));
            v = scalar(ValueType::Int32);
            v.i = -2000000000;
            wr.set_kv("k.i32", v);
            v = scalar(ValueType::Float32);
            v.f = 1.5;
            wr.set_kv("k.f32", v);
            v = scalar(ValueType::Bool);
            v.u = 1;
            wr.set_kv("k.bool", v);
            wr.set_kv("k.str", wb::gguf::make_string("héllo"));
            v = scalar(ValueType::Uint64);
            v.u = 1ull << 40;
            wr.set_kv("k.u64", v);
            v = scalar(ValueType::Int64);
            v.i = -(1ll << 40);
            wr.set_kv("k.i64", v);
            v = scalar(ValueType::Float64);
            v.f = 0.25;
            wr.set_kv("k.f64", v);
            v = scalar(ValueType::Array);
            v.array_type = ValueType::String;
            v.array_str = {"a", "", "ccc"};
            wr.set_kv("k.arr_str", v);
            v = scalar(ValueType::Array);
            v.array_type = ValueType::Float32;
            v.array_f = {-1.0, 2.5};
            wr.set_kv("k.arr_f32", v);
            Value inner1 = scalar(ValueType::Array);
            inner1.array_type = ValueType::Int32;
            inner1.array_i = {1, 2};
            Value inner2 = inner1;
            inner2.array_i = {3};
            v = scalar(ValueType::Array);
            v.array_type = ValueType::Array;
            v.array_nested = {inner1, inner2};
            wr.set_kv("k.arr_arr", v);
            wr.set_kv("k.u32", wb::gguf::make_u32(7));  // overwrite keeps the place
            v = scalar(ValueType::Uint32);
            v.u = 64;
            wr.set_kv("general.alignment", v);
            QCOMPARE(wr.add_tensor("w", 0, 2, {8, 3, 1, 1}), uint64_t(96));
            QCOMPARE(wr.add_tensor("q", 8, 1, {32, 1, 1, 1}), uint64_t(34));
            wr.write_header();
            wr.write_tensor_data(w.data(), 40);  // in pieces
            wr.write_tensor_data(reinterpret_cast<const uint8_t*>(w.data()) + 40, 56);
            wr.write_tensor_data(q.data(), q.size());
            wr.finish();
        }
        const wb::gguf::File f = wb::gguf::File::open(path);
        QCOMPARE(f.version(), 3u);
        QCOMPARE(f.alignment(), 64u);
        QCOMPARE(f.data_offset() % 64, uint64_t(0));
        QCOMPARE(f.file_size() % 64, uint64_t(0));
        QCOMPARE(f.metadata().size(), size_t(16));
        QCOMPARE(f.metadata()[4].first, std::string("k.u32"));
        QCOMPARE(*f.get_int("k.u8"), int64_t(200));
        QCOMPARE(*f.get_int("k.i8"), int64_t(-5));
        QCOMPARE(*f.get_int("k.u16"), int64_t(65000));
        QCOMPARE(*f.get_int("k.i16"), int64_t(-30000));
        QCOMPARE(*f.get_int("k.u32"), int64_t(7));
        QCOMPARE(*f.get_int("k.i32"), int64_t(-2000000000));
        QCOMPARE(*f.get_float("k.f32"), 1.5);
        QCOMPARE(*f.get_bool("k.bool"), true);
        QCOMPARE(*f.get_string("k.str"), std::string("héllo"));
        QCOMPARE(*f.get_int("k.u64"), int64_t(1ll << 40));
        QCOMPARE(*f.get_int("k.i64"), int64_t(-(1ll << 40)));
        QCOMPARE(*f.get_float("k.f64"), 0.25);
        QCOMPARE(f.find("k.u8")->type, ValueType::Uint8);
        QCOMPARE(f.find("k.i16")->type, ValueType::Int16);
        const Value* as = f.get_array("k.arr_str", ValueType::String);
        QVERIFY(as);
        QCOMPARE(as->array_str, (std::vector<std::string>{"a", "", "ccc"}));
        QCOMPARE(f.get_array("k.arr_f32", ValueType::Float32)->array_f,
                 (std::vector<double>{-1.0, 2.5}));
        const Value* aa = f.get_array("k.arr_arr", ValueType::Array);
        QVERIFY(aa);
        QCOMPARE(aa->array_nested.size(), size_t(2));
        QCOMPARE(aa->array_nested[0].array_i, (std::vector<int64_t>{1, 2}));
        QCOMPARE(aa->array_nested[1].array_i, (std::vector<int64_t>{3}));
        QCOMPARE(f.tensors().size(), size_t(2));
        const auto& tw = f.tensor("w");
        QCOMPARE(tw.ne[0], uint64_t(8));
        QCOMPARE(tw.ne[1], uint64_t(3));
        QCOMPARE(tw.nbytes, uint64_t(96));
        QVERIFY(std::memcmp(tw.data, w.data(), 96) == 0);
        const auto& tq = f.tensor("q");
        QCOMPARE(tq.offset, uint64_t(128));  // 96 padded to 64-byte alignment
        QCOMPARE(tq.type, 8u);
        QVERIFY(std::memcmp(tq.data, q.data(), 34) == 0);
    }

    void writer_misuse_is_reported_and_leaves_no_file() {
        const std::string path = tmp("bad.gguf");
        {
            wb::gguf::Writer wr(path);
            wr.add_tensor("t", 0, 1, {4, 1, 1, 1});
            QVERIFY_THROWS_EXCEPTION(wb::gguf::WriteError, wr.add_tensor("t", 0, 1, {4, 1, 1, 1}));
            QVERIFY_THROWS_EXCEPTION(wb::gguf::WriteError, wr.add_tensor("q", 8, 1, {40, 1, 1, 1}));
            Value a = scalar(ValueType::Uint32);
            a.u = 48;
            QVERIFY_THROWS_EXCEPTION(wb::gguf::WriteError, wr.set_kv("general.alignment", a));
            wr.write_header();
            float data[8] = {};
            try {
                wr.write_tensor_data(data, sizeof data);  // 32 bytes into a 16-byte tensor
                QFAIL("no error for data past the tensor");
            } catch (const wb::gguf::WriteError& e) {
                QVERIFY2(std::string(e.what()).find("tensor 't'") != std::string::npos, e.what());
            }
            wr.write_tensor_data(data, 8);
            try {
                wr.finish();
                QFAIL("finish() accepted an incomplete tensor");
            } catch (const wb::gguf::WriteError& e) {
                QVERIFY2(std::string(e.what()).find("8 of its 16 bytes") != std::string::npos,
                         e.what());
            }
        }
        QVERIFY(!std::filesystem::exists(path));
    }

    // --- whole-file quantizer on stories260K -----------------------------

    void tensor_order_is_llama_quantize_order() {
        const auto got = wb::quant::llama_quantize_order(
            {"blk.10.a", "token_embd.weight", "blk.2.b", "blk.2.a", "output.weight", "blk.0.z"});
        const std::vector<std::string> want{"output.weight", "token_embd.weight", "blk.0.z",
                                            "blk.2.a",       "blk.2.b",           "blk.10.a"};
        QCOMPARE(got, want);
    }

    void stories260K_matches_golden_variants_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("golden");
        QTest::newRow("f16") << "f16"
                             << "stories260K-f16.gguf";
        QTest::newRow("q8_0") << "q8_0"
                              << "stories260K-q8_0.gguf";
        QTest::newRow("q4_0") << "q4_0"
                              << "stories260K-q4_0.gguf";
    }
    void stories260K_matches_golden_variants() {
        QFETCH(QString, type);
        QFETCH(QString, golden);
        const QJsonObject files =
            read_json(kGolden + "stories260K_quant_files.json")["files"].toObject();
        const QJsonObject want = files[golden].toObject();
        const std::string out = tmp(qPrintable("ours-" + type + ".gguf"));
        std::vector<std::string> seen;
        // The golden copies were written without llama.cpp's mix rules
        // (gguf-py, golden/quant/README.md): pure.
        wb::quant::QuantizeOptions pure;
        pure.pure = true;
        const auto report = wb::quant::quantize_file(
            kModel, out, wb::quant::parse_target(type.toStdString()),
            [&](size_t, size_t, const wb::quant::TensorPlan& p) { seen.push_back(p.name); }, pure);
        QCOMPARE(seen.size(), size_t(48));

        const wb::gguf::File f = wb::gguf::File::open(out);
        QCOMPARE(*f.get_int("general.file_type"), int64_t(want["general.file_type"].toInt()));
        QCOMPARE(*f.get_int("general.quantization_version"), int64_t(2));
        QCOMPARE(f.find("general.file_type")->type, ValueType::Uint32);
        QCOMPARE(f.metadata().size(), size_t(want["n_kv"].toInt()));
        QCOMPARE(f.data_offset(), uint64_t(want["data_start"].toInt()));

        const QJsonArray tensors = want["tensors"].toArray();
        QCOMPARE(f.tensors().size(), size_t(tensors.size()));
        for (int i = 0; i < tensors.size(); ++i) {
            const QJsonObject w = tensors[i].toObject();
            const auto& t = f.tensors()[size_t(i)];
            const QString ctx = QString::fromStdString(t.name);
            QCOMPARE(ctx, w["name"].toString());
            QCOMPARE(QString(type_label(t.type)), w["type"].toString());
            QCOMPARE(t.offset, uint64_t(w["offset"].toInteger()));
            QCOMPARE(t.nbytes, uint64_t(w["n_bytes"].toInteger()));
            QVERIFY2(sha256(t.data, t.nbytes) == w["tensor_sha256"].toString().toLatin1(),
                     qPrintable("tensor data differs: " + ctx));
            QCOMPARE(report.tensors[size_t(i)].dst_type, t.type);
        }
        // Same metadata order, tensor order and padding: the whole file is
        // byte-identical to the one llama.cpp's tooling wrote.
        QCOMPARE(file_sha256(out), want["sha256"].toString().toLatin1());
        QCOMPARE(report.output_bytes, uint64_t(want["size"].toInteger()));

        // The tensors not at the target type are the 1-D norms and, for the
        // block types, the 5 ffn_down matrices with rows of 172.
        int notes = 0;
        for (const auto& p : report.tensors) notes += p.note.empty() ? 0 : 1;
        QCOMPARE(notes, type == "f16" ? 11 : 16);
    }

    void requantizing_copies_tensors_already_in_the_type() {
        // Q8_0 file -> q8_0: every tensor is already in its output type.
        const std::string in = kGolden + "stories260K-q8_0.gguf";
        const std::string out = tmp("again-q8_0.gguf");
        wb::quant::quantize_file(in, out, wb::quant::Target::Q8_0);
        QCOMPARE(file_sha256(out), file_sha256(in));
        // Q8_0 file -> f16: matrices go through dequantization; loads and has
        // the F16 file's tensor types.
        const std::string out16 = tmp("q8-to-f16.gguf");
        wb::quant::quantize_file(in, out16, wb::quant::Target::F16);
        const auto f = wb::gguf::File::open(out16);
        QCOMPARE(f.tensor("blk.0.attn_q.weight").type, uint32_t(wb::ggml::Type::F16));
        QCOMPARE(f.tensor("blk.0.attn_norm.weight").type, uint32_t(wb::ggml::Type::F32));
        // Each F16 value is the half of the engine's dequantized Q8_0 value.
        const auto g = wb::gguf::File::open(in);
        const auto& src = g.tensor("blk.0.attn_q.weight");
        const auto& dst = f.tensor("blk.0.attn_q.weight");
        std::vector<float> a(64), b(64);
        wb::ggml::dequantize_row(src.type, src.data, a.data(), 64);
        wb::ggml::dequantize_row(dst.type, dst.data, b.data(), 64);
        for (int i = 0; i < 64; ++i) {
            QCOMPARE(b[i], wb::ggml::fp16_to_fp32(wb::ggml::fp32_to_fp16(a[i])));
        }
    }

    void bad_inputs_give_clear_errors() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, wb::quant::parse_target("q5_k"));
        try {
            wb::quant::quantize_file(wbtest::data_dir() + "/models/nope.gguf", tmp("x.gguf"),
                                     wb::quant::Target::Q8_0);
            QFAIL("missing input accepted");
        } catch (const std::exception& e) {
            QVERIFY2(std::string(e.what()).find("nope.gguf") != std::string::npos, e.what());
        }
        QVERIFY(!std::filesystem::exists(tmp("x.gguf")));
        const std::string copy = tmp("same.gguf");
        std::filesystem::copy_file(kModel, copy);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 wb::quant::quantize_file(copy, copy, wb::quant::Target::F16));
        QCOMPARE(std::filesystem::file_size(copy), std::filesystem::file_size(kModel));
    }
};

QTEST_GUILESS_MAIN(TestQuant)
#include "test_quant.moc"
