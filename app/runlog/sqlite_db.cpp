#include "runlog/sqlite_db.h"

#include <utility>

namespace wb::runlog {

Db::Db(const std::string& path, int flags) : path_(path) {
    const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw DbError(path + ": cannot open: " + msg, rc);
    }
    sqlite3_extended_result_codes(db_, 1);
    // Another connection (the GUI and a CLI export at once) may hold the
    // write lock briefly; wait for it instead of failing with SQLITE_BUSY.
    sqlite3_busy_timeout(db_, 5000);
}

Db::~Db() {
    if (db_) sqlite3_close_v2(db_);
}

Db::Db(Db&& o) noexcept : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)) {}

Db& Db::operator=(Db&& o) noexcept {
    if (this != &o) {
        if (db_) sqlite3_close_v2(db_);
        db_ = std::exchange(o.db_, nullptr);
        path_ = std::move(o.path_);
    }
    return *this;
}

void Db::fail(std::string_view action, int rc) const {
    const char* msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    throw DbError(path_ + ": " + std::string(action) + ": " + msg, rc);
}

void Db::exec(const char* sql, std::string_view action) const {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        throw DbError(path_ + ": " + std::string(action) + ": " + msg,
                      sqlite3_extended_errcode(db_));
    }
}

bool Db::has_column(std::string_view table, std::string_view column) const {
    Stmt st(*this, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
    st.bind(1, table).bind(2, column);
    return st.step();
}

int64_t Db::query_int(const char* sql, std::string_view action) const {
    Stmt st(*this, sql);
    if (!st.step()) throw DbError(path_ + ": " + std::string(action) + ": no result row", 0);
    return st.int64(0);
}

Stmt::Stmt(const Db& db, const char* sql) : db_(&db), sql_head_(std::string(sql).substr(0, 60)) {
    const int rc = sqlite3_prepare_v2(db.get(), sql, -1, &st_, nullptr);
    if (rc != SQLITE_OK) db.fail("prepare \"" + sql_head_ + "\"", rc);
}

Stmt::~Stmt() {
    sqlite3_finalize(st_);
}

Stmt& Stmt::bind(int i, int64_t v) {
    if (int rc = sqlite3_bind_int64(st_, i, v); rc != SQLITE_OK) db_->fail("bind", rc);
    return *this;
}

Stmt& Stmt::bind(int i, double v) {
    if (int rc = sqlite3_bind_double(st_, i, v); rc != SQLITE_OK) db_->fail("bind", rc);
    return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
    const int rc = sqlite3_bind_text64(st_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
    if (rc != SQLITE_OK) db_->fail("bind", rc);
    return *this;
}

Stmt& Stmt::bind_null(int i) {
    if (int rc = sqlite3_bind_null(st_, i); rc != SQLITE_OK) db_->fail("bind", rc);
    return *this;
}

Stmt& Stmt::bind(int i, const std::optional<double>& v) {
    return v ? bind(i, *v) : bind_null(i);
}
Stmt& Stmt::bind(int i, const std::optional<int64_t>& v) {
    return v ? bind(i, *v) : bind_null(i);
}
Stmt& Stmt::bind(int i, const std::optional<std::string>& v) {
    return v ? bind(i, std::string_view(*v)) : bind_null(i);
}

bool Stmt::step() {
    const int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_->fail("run \"" + sql_head_ + "\"", rc);
}

void Stmt::run() {
    while (step()) {
    }
    reset();
}

void Stmt::reset() {
    sqlite3_reset(st_);
    sqlite3_clear_bindings(st_);
}

bool Stmt::is_null(int col) const {
    return sqlite3_column_type(st_, col) == SQLITE_NULL;
}
int64_t Stmt::int64(int col) const {
    return sqlite3_column_int64(st_, col);
}
double Stmt::real(int col) const {
    return sqlite3_column_double(st_, col);
}
std::string_view Stmt::text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(st_, col))};
}
int Stmt::column_type(int col) const {
    return sqlite3_column_type(st_, col);
}
int Stmt::column_count() const {
    return sqlite3_column_count(st_);
}
const char* Stmt::column_name(int col) const {
    return sqlite3_column_name(st_, col);
}

Transaction::Transaction(const Db& db) : db_(db) {
    // Another program holding the write lock past the busy timeout: wait
    // twice more (as RunLog's response writes do) before giving up.
    for (int attempt = 1;; ++attempt) {
        try {
            db_.exec("BEGIN IMMEDIATE", "begin transaction");
            return;
        } catch (const DbError& e) {
            const int primary = e.code() & 0xff;
            if (attempt >= 3 || (primary != SQLITE_BUSY && primary != SQLITE_LOCKED)) throw;
        }
    }
}

Transaction::~Transaction() {
    if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    db_.exec("COMMIT", "commit");
    done_ = true;
}

}  // namespace wb::runlog
