// Every computable type of the type table against ggml's own vectors
// (tests/data/golden2/quant_blocks.json, made by llama.cpp's
// ggml_quantize_chunk and type_traits->to_float, see golden2/README.md §1):
// the table's id, block and byte sizes equal ggml's; quantizing each input
// row gives ggml's block bytes exactly, and dequantizing those bytes gives
// ggml's floats bit for bit (sign of zero included). 15 row kinds (zeros,
// 1e-8 noise, constants, +-1e4, outliers, mixed sub-block scales, ...) at
// 32 to 512 values.

#include <QtTest>
#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/data_dir.h"
#include "ggml/types.h"

using namespace wb::ggml;

namespace {

const std::string kBlocks = wbtest::data_dir() + "/golden2/quant_blocks.json";

// nlohmann keeps "-0.0" negative (Qt's JSON reader turns it into integer 0,
// losing the sign the dequantizers must reproduce).
using Json = nlohmann::json;

Json read(const std::string& path) {
    std::ifstream f(path);
    if (!f) qFatal("cannot open %s", path.c_str());
    return Json::parse(f);
}

std::vector<float> floats(const Json& v) {
    std::vector<float> out;
    for (const Json& x : v) out.push_back(static_cast<float>(x.get<double>()));
    return out;
}

QString hex(const std::vector<uint8_t>& b) {
    return QString(
        QByteArray(reinterpret_cast<const char*>(b.data()), qsizetype(b.size())).toHex());
}

}  // namespace

class TestQuantBlocks : public QObject {
    Q_OBJECT

    Json golden_;

  private slots:
    void initTestCase() { golden_ = read(kBlocks); }

    void every_golden_type_is_in_the_table() {
        QCOMPARE(golden_["types"].size(), size_t(11));
        for (const auto& [name, t] : golden_["types"].items()) {
            const TypeTraits* tt = type_traits(t["ggml_type_id"].get<uint32_t>());
            QVERIFY2(tt, name.c_str());
            QCOMPARE(std::string(tt->name), t["ggml_type_name"].get<std::string>());
            QCOMPARE(std::string(tt->upper), name);
            QCOMPARE(tt->block_size, t["block_size"].get<uint32_t>());
            QCOMPARE(tt->type_size, t["type_size"].get<uint32_t>());
            QVERIFY2(tt->computable && tt->vulkan, name.c_str());
        }
    }

    void blocks_and_dequant_match_ggml_data() {
        QTest::addColumn<QString>("type");
        for (const auto& [name, t] : golden_["types"].items())
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
    }

    void blocks_and_dequant_match_ggml() {
        QFETCH(QString, type);
        const Json& rows = golden_["rows"];
        const Json& t = golden_["types"][type.toStdString()];
        const uint32_t id = t["ggml_type_id"].get<uint32_t>();
        const Json& cases = t["cases"];
        QVERIFY(cases.size() >= 30);
        int n_bad_bytes = 0, n_bad_values = 0;
        QString first_bad;
        for (const auto& [row, c] : cases.items()) {
            const QString key = QString::fromStdString(row);
            const std::vector<float> x = floats(rows[row]);
            const QByteArray want =
                QByteArray::fromHex(QByteArray::fromStdString(c["bytes_hex"].get<std::string>()));
            QCOMPARE(size_t(want.size()), row_bytes(id, x.size()));

            std::vector<uint8_t> got(want.size());
            quantize_row(id, x.data(), got.data(), x.size(), row);
            if (QByteArray(reinterpret_cast<const char*>(got.data()), qsizetype(got.size())) !=
                want) {
                ++n_bad_bytes;
                if (first_bad.isEmpty())
                    first_bad = key + ": got " + hex(got).left(96) + "\n want " +
                                QString(want.toHex()).left(96);
            }

            const std::vector<float> dq = floats(c["dequant"]);
            std::vector<float> back(x.size());
            dequantize_row(id, want.data(), back.data(), x.size());
            for (size_t i = 0; i < x.size(); ++i) {
                if (std::bit_cast<uint32_t>(back[i]) != std::bit_cast<uint32_t>(dq[i])) {
                    ++n_bad_values;
                    if (first_bad.isEmpty())
                        first_bad = key + QString(": value %1 got %2 want %3")
                                              .arg(i)
                                              .arg(double(back[i]), 0, 'g', 9)
                                              .arg(double(dq[i]), 0, 'g', 9);
                    break;
                }
            }
        }
        QVERIFY2(n_bad_bytes == 0 && n_bad_values == 0,
                 qPrintable(QString("%1 cases with other bytes, %2 with other values; first: %3")
                                .arg(n_bad_bytes)
                                .arg(n_bad_values)
                                .arg(first_bad)));
    }
};

QTEST_APPLESS_MAIN(TestQuantBlocks)
#include "test_quant_blocks.moc"
