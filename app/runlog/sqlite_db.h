#pragma once
// Thin RAII wrappers over SQLite's C API (https://sqlite.org/c3ref/intro.html)
// for the run log: a connection, a prepared statement with typed binds and
// column reads, and a transaction guard. Every failure becomes a
// runlog::DbError whose text names the database file, what was being done
// and SQLite's own message.

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wb::runlog {

/// A SQLite call failed. what() reads "<db path>: <action>: <sqlite message>".
/// code() is SQLite's extended result code (SQLITE_CORRUPT, SQLITE_NOTADB, ...).
class DbError : public std::runtime_error {
  public:
    DbError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
    int code() const { return code_; }

  private:
    int code_;
};

/// An open SQLite connection; closes it on destruction (sqlite3_close_v2).
class Db {
  public:
    Db() = default;
    /// Opens `path` with sqlite3_open_v2 and `flags` (SQLITE_OPEN_*).
    /// Throws DbError when SQLite cannot open the file at all; note that
    /// SQLite reads the header lazily, so "not a database" shows up on the
    /// first statement, not here.
    Db(const std::string& path, int flags);
    ~Db();
    Db(Db&& o) noexcept;
    Db& operator=(Db&& o) noexcept;
    Db(const Db&) = delete;
    Db& operator=(const Db&) = delete;

    sqlite3* get() const { return db_; }
    const std::string& path() const { return path_; }

    /// Runs one or more statements without results (sqlite3_exec). Throws
    /// DbError "<path>: <action>: <message>".
    void exec(const char* sql, std::string_view action) const;
    /// The single integer result of `sql` (e.g. "PRAGMA user_version").
    int64_t query_int(const char* sql, std::string_view action) const;
    /// True when `table` has a column named `column` (PRAGMA table_info):
    /// readers of a log opened read-only, which is not migrated, ask before
    /// selecting a column a later schema added. Throws DbError on a read
    /// failure.
    bool has_column(std::string_view table, std::string_view column) const;
    /// Throws DbError built from the connection's last error.
    [[noreturn]] void fail(std::string_view action, int rc) const;

  private:
    sqlite3* db_ = nullptr;
    std::string path_;
};

/// A prepared statement. Bind indexes are 1-based, column indexes 0-based
/// (SQLite's convention).
class Stmt {
  public:
    Stmt(const Db& db, const char* sql);
    ~Stmt();
    Stmt(const Stmt&) = delete;
    Stmt& operator=(const Stmt&) = delete;

    Stmt& bind(int i, int64_t v);
    Stmt& bind(int i, double v);
    Stmt& bind(int i, std::string_view v);  ///< bound as TEXT (copied)
    Stmt& bind_null(int i);
    Stmt& bind(int i, const std::optional<double>& v);
    Stmt& bind(int i, const std::optional<int64_t>& v);
    Stmt& bind(int i, const std::optional<std::string>& v);

    /// Advances one row: true when a row is ready, false when done. Throws
    /// DbError (naming the SQL's first 60 characters) on any other result.
    bool step();
    /// step() for a statement without rows; resets it for reuse.
    void run();
    /// Resets the statement and clears its bindings for the next use.
    void reset();

    bool is_null(int col) const;
    int64_t int64(int col) const;
    double real(int col) const;
    /// TEXT column as a view valid until the next step()/reset(); "" for NULL.
    std::string_view text(int col) const;
    int column_type(int col) const;  ///< SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_NULL
    int column_count() const;
    const char* column_name(int col) const;
    /// The raw statement, for copying values as they are (sqlite3_bind_value
    /// of sqlite3_column_value) when salvaging rows.
    sqlite3_stmt* get() const { return st_; }

  private:
    const Db* db_;
    sqlite3_stmt* st_ = nullptr;
    std::string sql_head_;  // for messages
};

/// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit()
/// was called. IMMEDIATE takes the write lock up front so two writers never
/// deadlock upgrading a read lock.
class Transaction {
  public:
    explicit Transaction(const Db& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

  private:
    const Db& db_;
    bool done_ = false;
};

}  // namespace wb::runlog
