#pragma once
// Raw SQLite access for run-log tests: reads rows and runs statements
// through the SQLite C API directly, independent of wb_runlog, so a test's
// expected values never come from the code under test. Aborts the test
// (qFatal) on any SQLite error, naming the statement.

#include <sqlite3.h>

#include <QList>
#include <QString>
#include <QStringList>
#include <QtGlobal>
#include <string>
#include <vector>

namespace wbtest {

/// One connection to the SQLite file `path`, read-only unless `write`.
struct RawSqlite {
    sqlite3* db = nullptr;
    explicit RawSqlite(const std::string& path, bool write = false) {
        if (sqlite3_open_v2(path.c_str(), &db, write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY,
                            nullptr) != SQLITE_OK)
            qFatal("raw open failed: %s", path.c_str());
    }
    explicit RawSqlite(const QString& path, bool write = false)
        : RawSqlite(path.toStdString(), write) {}
    ~RawSqlite() { sqlite3_close_v2(db); }
    RawSqlite(const RawSqlite&) = delete;
    RawSqlite& operator=(const RawSqlite&) = delete;

    /// Every row of `sql`, each column as text ("<null>" for NULL).
    std::vector<std::vector<std::string>> rows(const std::string& sql) const {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
            qFatal("prepare: %s: %s", sql.c_str(), sqlite3_errmsg(db));
        std::vector<std::vector<std::string>> out;
        while (sqlite3_step(st) == SQLITE_ROW) {
            std::vector<std::string> r;
            for (int i = 0; i < sqlite3_column_count(st); ++i) {
                const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(st, i));
                r.push_back(t ? std::string(t, size_t(sqlite3_column_bytes(st, i))) : "<null>");
            }
            out.push_back(r);
        }
        sqlite3_finalize(st);
        return out;
    }

    /// Runs `sql` (one or more statements).
    void exec(const char* sql) const {
        if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK)
            qFatal("exec: %s: %s", sql, sqlite3_errmsg(db));
    }
};

/// Every row of `sql` on the SQLite file `path` (opened read-only), each
/// column as text (a null QString for NULL): the Qt-typed form GUI tests
/// compare with QCOMPARE. Aborts the test on any SQLite error, as RawSqlite.
inline QList<QStringList> query_rows(const QString& path, const QString& sql) {
    QList<QStringList> out;
    for (const auto& r : RawSqlite(path).rows(sql.toStdString())) {
        QStringList row;
        for (const std::string& c : r)
            row << (c == "<null>" ? QString() : QString::fromStdString(c));
        out << row;
    }
    return out;
}

}  // namespace wbtest
