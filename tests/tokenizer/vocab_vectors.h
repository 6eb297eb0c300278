#pragma once
// Readers for llama.cpp's tokenizer test vectors (.inp/.out next to the
// vocab GGUFs, tests/data/models/MANIFEST.md §2) and golden records
// (tests/data/golden2/tokenizer/*.jsonl, tests/data/golden2/README.md §6).

#include <QFile>
#include <QJsonObject>
#include <QJsonValue>
#include <QStringList>
#include <stdexcept>
#include <string>
#include <vector>

namespace wbtest {

inline std::string read_bytes(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) throw std::runtime_error("cannot read " + path);
    const QByteArray b = f.readAll();
    return std::string(b.constData(), static_cast<size_t>(b.size()));
}

/// Cases of an .inp file: separated by "\n__ggml_vocab_test__\n"; a final
/// separator does not start another case.
inline std::vector<std::string> read_inp(const std::string& path) {
    const std::string all = read_bytes(path);
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> cases;
    size_t pos = 0;
    while (pos < all.size()) {
        const size_t hit = all.find(sep, pos);
        if (hit == std::string::npos) {
            cases.push_back(all.substr(pos));
            break;
        }
        cases.push_back(all.substr(pos, hit - pos));
        pos = hit + sep.size();
    }
    return cases;
}

/// One line of ids per case; an empty line is an empty list.
inline std::vector<std::vector<int32_t>> read_out(const std::string& path) {
    std::vector<std::vector<int32_t>> out;
    QStringList lines = QString::fromStdString(read_bytes(path)).split('\n');
    if (!lines.isEmpty() && lines.back().isEmpty()) lines.pop_back();
    for (const QString& line : lines) {
        std::vector<int32_t> ids;
        for (const QString& tok : line.trimmed().split(' ', Qt::SkipEmptyParts)) {
            ids.push_back(tok.toInt());
        }
        out.push_back(ids);
    }
    return out;
}

/// A golden text field: a JSON string, or {"invalid_utf8_hex": "..."} for
/// bytes that are not valid UTF-8.
inline std::string golden_bytes(const QJsonValue& v) {
    if (v.isString()) return v.toString().toStdString();
    const QByteArray hex = v.toObject().value("invalid_utf8_hex").toString().toLatin1();
    const QByteArray raw = QByteArray::fromHex(hex);
    return std::string(raw.constData(), static_cast<size_t>(raw.size()));
}

}  // namespace wbtest
