#pragma once
// SHA-256 of a whole file, for tests that compare a written file with a
// checksum from an independent source (llama.cpp's quantized copies in
// golden/quant/SHA256SUMS) or with another file. Qt's QCryptographicHash
// does the hashing, not the code under test.

#include <QByteArray>
#include <QCryptographicHash>
#include <QFile>
#include <QString>
#include <string>

namespace wbtest {

/// Lower-case hex SHA-256 (64 characters) of the file at `path`; an empty
/// array when the file cannot be opened, so a comparison with an expected
/// checksum fails and shows the empty value.
inline QByteArray file_sha256(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return h.result().toHex();
}

/// The same for a std::string path.
inline QByteArray file_sha256(const std::string& path) {
    return file_sha256(QString::fromStdString(path));
}

}  // namespace wbtest
