// The whole-file quantizer against llama-quantize: every tiny golden2 model
// (8 architectures' tensor layouts: untied and tied embeddings, fused QKV,
// 4 and 5 query heads per KV head, rows of 320 that no K block divides)
// quantized to each of the 15 file types gives, tensor by tensor, the type
// and the SHA-256 of the bytes that llama-quantize wrote
// (tests/data/golden2/<model>/quant_files.json, golden2/README.md §3), and
// the bits per weight that follow from them.

#include <QCryptographicHash>
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "common/data_dir.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "quant/quantize_model.h"

using Json = nlohmann::json;
namespace quant = wb::quant;

namespace {

const std::string kGolden2 = wbtest::data_dir() + "/golden2/";
const char* kModels[] = {"llama-spm", "llama3", "qwen2",  "qwen3",
                         "phi3",      "gemma2", "gemma3", "smollm-fallback"};

Json read(const std::string& path) {
    std::ifstream f(path);
    if (!f) qFatal("cannot open %s", path.c_str());
    return Json::parse(f);
}

std::string sha256(const uint8_t* p, uint64_t n) {
    return QCryptographicHash::hash(QByteArrayView(reinterpret_cast<const char*>(p), qsizetype(n)),
                                    QCryptographicHash::Sha256)
        .toHex()
        .toStdString();
}

}  // namespace

class TestQuantMix : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

  private slots:
    void matches_llama_quantize_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("variant");
        for (const char* m : kModels) {
            const Json files = read(kGolden2 + m + "/quant_files.json");
            for (const auto& [variant, v] : files["variants"].items()) {
                if (variant == "F16") continue;  // the input itself
                QTest::newRow((std::string(m) + " " + variant).c_str())
                    << QString(m) << QString::fromStdString(variant);
            }
        }
    }

    void matches_llama_quantize() {
        QFETCH(QString, model);
        QFETCH(QString, variant);
        const std::string m = model.toStdString();
        const Json want =
            read(kGolden2 + m + "/quant_files.json")["variants"][variant.toStdString()];
        const std::string in = kGolden2 + m + "/" + m + "-f16.gguf";
        const std::string out = dir_.filePath(model + "-" + variant + ".gguf").toStdString();
        const quant::Target target = quant::parse_target(variant.toStdString());
        const quant::QuantizeReport rep = quant::quantize_file(in, out, target);

        const wb::gguf::File f = wb::gguf::File::open(out);
        QCOMPARE(f.get_int("general.file_type").value_or(-1),
                 want["metadata"]["general.file_type"].get<int64_t>());
        QCOMPARE(f.tensors().size(), want["tensors"].size());
        uint64_t bytes = 0, elements = 0;
        for (const Json& t : want["tensors"]) {
            const std::string name = t["name"].get<std::string>();
            const wb::gguf::TensorInfo* got = f.find_tensor(name);
            QVERIFY2(got, name.c_str());
            QCOMPARE(QString::fromStdString(wb::ggml::type_upper_name(got->type) + " " + name),
                     QString::fromStdString(t["type"].get<std::string>() + " " + name));
            QCOMPARE(got->nbytes, t["nbytes"].get<uint64_t>());
            QCOMPARE(QString::fromStdString(sha256(got->data, got->nbytes) + " " + name),
                     QString::fromStdString(t["sha256"].get<std::string>() + " " + name));
            bytes += got->nbytes;
            elements += got->n_elements();
        }
        QCOMPARE(rep.bpw(), 8.0 * double(bytes) / double(elements));
        std::remove(out.c_str());
    }
};

QTEST_APPLESS_MAIN(TestQuantMix)
#include "test_quant_mix.moc"
