#pragma once
// Readers for the JSON / JSON Lines golden fixtures in tests/data/golden.
// A missing file is fatal: the test cannot say anything without it.

#include <QByteArray>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QtGlobal>
#include <cstdint>
#include <string>
#include <vector>

namespace wbtest {

inline QJsonObject read_json(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
    return QJsonDocument::fromJson(f.readAll()).object();
}

/// One object per non-blank line.
inline std::vector<QJsonObject> read_jsonl(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", path.c_str());
    std::vector<QJsonObject> out;
    for (const QByteArray& line : f.readAll().split('\n')) {
        if (!line.trimmed().isEmpty()) out.push_back(QJsonDocument::fromJson(line).object());
    }
    return out;
}

/// A JSON array of token ids.
inline std::vector<int32_t> ids(const QJsonValue& v) {
    std::vector<int32_t> out;
    for (const QJsonValue& x : v.toArray()) out.push_back(x.toInt());
    return out;
}

}  // namespace wbtest
