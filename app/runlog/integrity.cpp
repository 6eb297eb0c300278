#include "runlog/integrity.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <vector>

#include "gguf/path_kind.h"
#include "runlog/row_scan.h"
#include "runlog/run_log.h"
#include "runlog/schema.h"
#include "runlog/scratch_copy.h"
#include "runlog/sqlite_db.h"
#include "runlog/time_utc.h"

namespace wb::runlog {

namespace fs = std::filesystem;

const char* to_string(LogState s) {
    switch (s) {
        case LogState::Missing:
            return "missing";
        case LogState::Healthy:
            return "healthy";
        case LogState::Damaged:
            return "damaged";
        case LogState::NotSqlite:
            return "not-sqlite";
        case LogState::Foreign:
            return "foreign";
        case LogState::NewerSchema:
            return "newer-schema";
        case LogState::NotRegular:
            return "not-regular";
        case LogState::Unreadable:
            return "unreadable";
    }
    return "unreadable";
}

namespace {

bool folder_writable(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return ::access(parent.empty() ? "." : parent.c_str(), W_OK) == 0;
}

bool has_table(const Db& db, const char* name) {
    Stmt st(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    st.bind(1, std::string_view(name));
    return st.step() && st.int64(0) > 0;
}

// SQLite's quick_check: "" when it says ok, else its first finding.
std::string quick_check(const Db& db) {
    try {
        Stmt st(db, "PRAGMA quick_check(10)");
        std::string first;
        while (st.step()) {
            const std::string_view line = st.text(0);
            if (line == "ok") continue;
            if (first.empty()) first = std::string(line);
        }
        return first;
    } catch (const DbError& e) {
        if (!is_damage(e)) throw;
        return sqlite3_errstr(e.code());
    }
}

// The state of a SQLite file from its schema facts (as RunLog::open checks).
std::optional<LogState> schema_state(const Db& db, std::string& problem) {
    const int64_t app_id = db.query_int("PRAGMA application_id", "read application id");
    const int64_t version = db.query_int("PRAGMA user_version", "read schema version");
    const int64_t n_objects = db.query_int("SELECT count(*) FROM sqlite_schema", "read schema");
    if (app_id != kApplicationId && (app_id != 0 || version != 0 || n_objects != 0)) {
        problem = "it is a SQLite database, but not an Inference Workbench run log";
        return LogState::Foreign;
    }
    if (version > schema_version()) {
        problem = "it was written by a newer Inference Workbench (schema version " +
                  std::to_string(version) + "; this build knows " +
                  std::to_string(schema_version()) + ")";
        return LogState::NewerSchema;
    }
    return std::nullopt;
}

}  // namespace

std::string LogInspection::message() const {
    if (state == LogState::Healthy || state == LogState::Missing) return "";
    std::string m = path + ": " + problem + ".";
    if (state != LogState::Damaged) return m;
    m += " " + std::to_string(readable_responses) +
         (readable_responses == 1 ? " response can" : " responses can") + " still be read";
    if (unreadable_responses > 0)
        m += "; up to " + std::to_string(unreadable_responses) + " more could not be read";
    if (unreadable_other_rows > 0)
        m += "; " + std::to_string(unreadable_other_rows) +
             " runs, model versions or environments could not be read";
    return m + ".";
}

LogInspection inspect_log(const std::string& path) {
    LogInspection r;
    r.path = path;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return r;  // Missing
        r.state = LogState::Unreadable;
        r.problem = std::string("it cannot be read (") + std::strerror(errno) + ")";
        return r;
    }
    if (!S_ISREG(st.st_mode)) {
        r.state = LogState::NotRegular;
        r.problem = std::string("it is not a regular file (it is ") +
                    gguf::describe_path_kind(st.st_mode) + "), so it cannot hold a run log";
        return r;
    }
    if (::access(path.c_str(), R_OK) != 0) {
        r.state = LogState::Unreadable;
        r.problem = std::string("it cannot be read (") + std::strerror(errno) + ")";
        return r;
    }
    r.writable = ::access(path.c_str(), W_OK) == 0 && folder_writable(path);
    if (st.st_size == 0) {  // SQLite's empty database: a new log is made in it
        r.state = LogState::Healthy;
        return r;
    }
    if (!has_sqlite_header(path) && guess_page_size(path) == 0) {
        r.state = LogState::NotSqlite;
        r.problem = "it is not a SQLite database, so not a run log (a typo in the path?)";
        return r;
    }

    const ScratchCopy copy(path);
    r.header_damaged = copy.header_rebuilt();
    try {
        const Db db(copy.path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
        std::string problem;
        if (auto s = schema_state(db, problem)) {
            r.state = *s;
            r.problem = problem;
            return r;
        }
        const std::string finding = quick_check(db);
        if (finding.empty() && !r.header_damaged) {
            r.state = LogState::Healthy;
            if (has_table(db, "responses"))
                r.readable_responses = db.query_int("SELECT count(*) FROM responses", "count");
            return r;
        }
        r.state = LogState::Damaged;
        if (r.header_damaged)
            r.problem = finding.empty()
                            ? "the run log's header (its first 100 bytes) is damaged; the "
                              "rest of the file reads cleanly"
                            : "the run log's header (its first 100 bytes) is damaged, and so "
                              "are some of its pages (SQLite's integrity check: " +
                                  finding + ")";
        else
            r.problem = "the run log is damaged (SQLite's integrity check: " + finding + ")";
        if (has_table(db, "responses")) {
            const ScanResult res = scan_table(db, "responses", "1", [](const Stmt&) {});
            r.readable_responses = res.rows;
            r.unreadable_responses = res.skipped_ids;
        }
        for (const char* t :
             {"runs", "model_versions", "environments", "model_loads", "run_events"})
            if (has_table(db, t))
                r.unreadable_other_rows += scan_table(db, t, "1", [](const Stmt&) {}).skipped_ids;
    } catch (const DbError& e) {
        if (!is_damage(e)) throw;
        if ((e.code() & 0xff) == SQLITE_NOTADB && !r.header_damaged) {
            r.state = LogState::NotSqlite;
            r.problem = "it is not a SQLite database, so not a run log (a typo in the path?)";
        } else {
            r.state = LogState::Damaged;
            r.problem = std::string("the run log is damaged beyond reading (SQLite: ") +
                        sqlite3_errstr(e.code()) + ")";
        }
    }
    return r;
}

std::string SalvageReport::summary() const {
    std::string s = "salvaged " + std::to_string(responses) + " responses (" +
                    std::to_string(runs) + " runs, " + std::to_string(model_versions) +
                    " model versions, " + std::to_string(environments) + " environments) from " +
                    from + " into " + to + "; " + from + " was not changed";
    if (header_rebuilt) s += "; its damaged header was rebuilt in a private copy to read it";
    if (unreadable_responses > 0)
        s += "; up to " + std::to_string(unreadable_responses) +
             " responses on damaged pages could not be read";
    if (rejected_rows > 0)
        s += "; " + std::to_string(rejected_rows) + " damaged rows were left out";
    if (model_loads > 0) s += "; " + std::to_string(model_loads) + " model loads copied";
    if (run_events > 0) s += "; " + std::to_string(run_events) + " run events copied";
    if (run_events_lost > 0)
        s += "; " + std::to_string(run_events_lost) +
             " run events lost (unreadable or their run was)";
    if (model_loads_lost > 0)
        s += "; " + std::to_string(model_loads_lost) +
             " model loads could not be read or lost their model, environment or run";
    if (placeholders > 0)
        s += "; " + std::to_string(placeholders) +
             " runs, model versions or environments could not be read and were recreated as "
             "\"(lost)\" entries";
    return s;
}

std::string salvage_path_for(const std::string& path) {
    const fs::path p(path);
    const std::string base =
        (p.parent_path() / (p.stem().string() + "-salvaged-" + compact_utc_now())).string();
    std::error_code ec;
    for (int i = 1;; ++i) {
        const std::string cand = base + (i > 1 ? "-" + std::to_string(i) : "") + ".sqlite";
        if (!fs::exists(cand, ec)) return cand;
    }
}

namespace {

// Column names of `table` in `db` (PRAGMA table_info), in order.
std::vector<std::string> columns_of(const Db& db, const std::string& table) {
    std::vector<std::string> cols;
    Stmt st(db, ("PRAGMA table_info(" + table + ")").c_str());
    while (st.step()) cols.emplace_back(st.text(1));
    return cols;
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

// Copies the readable rows of `table` (the columns both files have, id
// kept) and returns how many; `accept(st)` may veto a row (returns false)
// before it is written.
struct CopyResult {
    int64_t rows = 0, rejected = 0;
    ScanResult scan;
};
CopyResult copy_table(
    const Db& src, const Db& dst, const std::string& table,
    const std::function<bool(const Stmt&, const std::vector<std::string>&)>& before_insert = {}) {
    CopyResult out;
    if (!has_table(src, table.c_str())) return out;
    const std::vector<std::string> dst_cols = columns_of(dst, table);
    const std::set<std::string> src_cols = [&] {
        const auto v = columns_of(src, table);
        return std::set<std::string>(v.begin(), v.end());
    }();
    std::vector<std::string> cols;
    for (const std::string& c : dst_cols)
        if (src_cols.count(c)) cols.push_back(c);
    if (cols.empty()) return out;
    std::string marks;
    for (size_t i = 0; i < cols.size(); ++i) marks += (i ? ", ?" : "?") + std::to_string(i + 1);
    Stmt ins(dst,
             ("INSERT INTO " + table + " (" + join(cols) + ") VALUES (" + marks + ")").c_str());
    out.scan = scan_table(src, table, join(cols), [&](const Stmt& row) {
        if (before_insert && !before_insert(row, cols)) {
            ++out.rejected;
            return;
        }
        for (size_t i = 0; i < cols.size(); ++i)
            sqlite3_bind_value(ins.get(), static_cast<int>(i + 1),
                               sqlite3_column_value(row.get(), static_cast<int>(i + 1)));
        try {
            ins.run();
            ++out.rows;
        } catch (const DbError& e) {
            ins.reset();
            if ((e.code() & 0xff) != SQLITE_CONSTRAINT) throw;
            ++out.rejected;  // garbage that passed as a row: the schema refuses it
        }
    });
    return out;
}

int64_t column_int(const Stmt& row, const std::vector<std::string>& cols, const char* name) {
    for (size_t i = 0; i < cols.size(); ++i)
        if (cols[i] == name) return row.int64(static_cast<int>(i + 1));
    return 0;
}

}  // namespace

SalvageReport salvage_log(const std::string& from, const std::string& to) {
    std::error_code ec;
    if (fs::exists(to, ec) || fs::exists(to + "-wal", ec))
        throw std::runtime_error(to +
                                 ": already exists; salvage writes a new file and never "
                                 "overwrites one: choose another path");
    const LogInspection insp = inspect_log(from);
    if (insp.state != LogState::Healthy && insp.state != LogState::Damaged)
        throw std::runtime_error(insp.state == LogState::Missing
                                     ? from + ": no run log here, nothing to salvage"
                                     : insp.message() + " Nothing to salvage.");
    SalvageReport rep;
    rep.from = from;
    rep.to = to;
    const ScratchCopy copy(from);
    rep.header_rebuilt = copy.header_rebuilt();
    const Db src(copy.path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX);
    bool done = false;
    try {
        RunLog log = RunLog::open(to);
        const Db& dst = log.db();
        Transaction tx(dst);
        std::set<int64_t> have_mv, have_env, have_run;
        auto remember = [](std::set<int64_t>& ids) {
            return [&ids](const Stmt& row, const std::vector<std::string>&) {
                ids.insert(row.int64(0));
                return true;
            };
        };
        const CopyResult mv = copy_table(src, dst, "model_versions", remember(have_mv));
        const CopyResult env = copy_table(src, dst, "environments", remember(have_env));
        const CopyResult runs = copy_table(src, dst, "runs", remember(have_run));
        (void)copy_table(src, dst, "settings");
        // A row that was read but refused by the schema must not count as present.
        auto present = [&](const char* table, int64_t id) {
            Stmt st(dst, ("SELECT 1 FROM " + std::string(table) + " WHERE id = ?1").c_str());
            st.bind(1, id);
            return st.step();
        };
        auto ensure_parent = [&](const char* table, int64_t id) {
            if (present(table, id)) return;
            const std::string lost =
                "(lost: row " + std::to_string(id) + " could not be read from the damaged log)";
            if (std::string(table) == "model_versions") {
                char sha[65];
                std::snprintf(sha, sizeof sha, "%064llx", static_cast<unsigned long long>(id));
                Stmt st(dst,
                        "INSERT INTO model_versions (id, sha256, path, file_size, name, "
                        "tensor_types, n_params, first_seen_ms) VALUES (?1, ?2, '', 0, ?3, '{}', "
                        "0, 0)");
                st.bind(1, id).bind(2, std::string_view(sha)).bind(3, std::string_view(lost));
                st.run();
            } else if (std::string(table) == "environments") {
                Stmt st(dst,
                        "INSERT INTO environments (id, app_version, git_commit, os, kernel, cpu, "
                        "backend, first_seen_ms) VALUES (?1, ?2, '', '', '', '', 'cpu', 0)");
                st.bind(1, id).bind(2, std::string_view(lost)).run();
            } else {
                Stmt st(dst,
                        "INSERT INTO runs (id, kind, name, started_ms, settings) "
                        "VALUES (?1, 'batch', ?2, 0, '{}')");
                st.bind(1, id).bind(2, std::string_view(lost)).run();
            }
            ++rep.placeholders;
        };
        const CopyResult resp = copy_table(
            src, dst, "responses", [&](const Stmt& row, const std::vector<std::string>& cols) {
                ensure_parent("runs", column_int(row, cols, "run_id"));
                ensure_parent("model_versions", column_int(row, cols, "model_version_id"));
                ensure_parent("environments", column_int(row, cols, "environment_id"));
                return true;
            });
        // Cold starts (schema 4) whose model version, environment and run
        // were salvaged too; the others are lost with their parents.
        const CopyResult loads = copy_table(
            src, dst, "model_loads", [&](const Stmt& row, const std::vector<std::string>& cols) {
                const int64_t run = column_int(row, cols, "run_id");  // 0 for NULL: no run
                return present("model_versions", column_int(row, cols, "model_version_id")) &&
                       present("environments", column_int(row, cols, "environment_id")) &&
                       (run == 0 || present("runs", run));
            });
        // Run events (schema 6) of salvaged runs; the others go with their run.
        const CopyResult events = copy_table(
            src, dst, "run_events", [&](const Stmt& row, const std::vector<std::string>& cols) {
                return present("runs", column_int(row, cols, "run_id"));
            });
        tx.commit();
        rep.run_events = events.rows;
        rep.run_events_lost = events.rejected + events.scan.skipped_ids;
        rep.model_versions = mv.rows;
        rep.environments = env.rows;
        rep.runs = runs.rows;
        rep.responses = resp.rows;
        rep.unreadable_responses = resp.scan.skipped_ids;
        rep.rejected_rows = mv.rejected + env.rejected + runs.rejected + resp.rejected;
        rep.model_loads = loads.rows;
        rep.model_loads_lost = loads.rejected + loads.scan.skipped_ids;
        done = true;
    } catch (...) {
        if (!done) {
            fs::remove(to, ec);
            fs::remove(to + "-wal", ec);
            fs::remove(to + "-shm", ec);
        }
        throw;
    }
    return rep;
}

}  // namespace wb::runlog
