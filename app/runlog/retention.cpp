#include "runlog/retention.h"

#include <filesystem>
#include <stdexcept>

#include "runlog/sqlite_db.h"

namespace wb::runlog {

namespace {

namespace fs = std::filesystem;

// The rows a purge changes: those still holding text (a NULL text with
// redacted = 0 cannot happen; redacted = 0 alone is counted too so the
// flag is set on every row the purge covers).
constexpr const char* kHasText = "(prompt IS NOT NULL OR output IS NOT NULL OR redacted = 0)";

// One sentence for a purge whose transaction could not run.
DbError not_changed(const Db& db, const DbError& e) {
    const int primary = e.code() & 0xff;
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
        return {db.path() +
                    ": the run log is locked by another program (a running generate, batch or the "
                    "app); nothing was changed: close it and try again",
                e.code()};
    return {std::string(e.what()) + "; nothing was changed", e.code()};
}

// After the commit: rebuild the file without the freed pages, then empty
// the -wal file. Why both, and in this order:
//  - UPDATE ... SET prompt = NULL only marks the text's cells free; its
//    bytes stay in the page (and in freelist pages) until overwritten.
//    secure_delete zeroes what this transaction frees, and VACUUM
//    (https://sqlite.org/lang_vacuum.html) writes every page anew, so no
//    old cell or free page is left.
//  - In WAL mode both the text written when a response was logged (frames
//    not yet checkpointed) and VACUUM's new pages live in the -wal file
//    until a checkpoint copies them into the database file. A PASSIVE or
//    RESTART checkpoint leaves old frames physically in the -wal; TRUNCATE
//    copies every frame back, shrinks the database file to its new size and
//    cuts the -wal to 0 bytes (https://sqlite.org/pragma.html#pragma_wal_checkpoint).
//    It cannot finish while another connection reads an older snapshot:
//    the pragma's first column is then 1, reported as wal_emptied = false.
// VACUUM runs even when no row changed: text deleted another way (`log
// prune`'s DELETE, an earlier purge whose VACUUM failed) can sit in free
// space inside pages still in use, where freelist_count does not see it.
// The price is one rewrite of the log per purge (the app: once per start).
bool vacuum_and_truncate(const Db& db) {
    db.exec("VACUUM",
            "VACUUM after removing text (the text is out of the rows; its bytes may stay "
            "in the file until the next purge)");
    Stmt ck(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    return ck.step() && ck.int64(0) == 0;
}

// Runs `purge` (the UPDATEs, returning the responses changed) in one
// transaction with secure_delete on, then vacuum_and_truncate.
template <typename Purge>
PurgeResult run_purge(RunLog& log, Purge&& purge) {
    PurgeResult res;
    res.bytes_before = log_file_bytes(log.path());
    log.with_connection([&](const Db& db) {
        // 0 off, 1 on, 2 fast: put back what the connection had.
        const std::string restore =
            "PRAGMA secure_delete = " +
            std::to_string(db.query_int("PRAGMA secure_delete", "read secure_delete"));
        db.exec("PRAGMA secure_delete = ON", "secure_delete on");
        try {
            try {
                Transaction tx(db);
                res.responses = purge(db);
                tx.commit();
            } catch (const DbError& e) {
                throw not_changed(db, e);
            }
            res.wal_emptied = vacuum_and_truncate(db);
        } catch (...) {
            db.exec(restore.c_str(), "restore secure_delete");
            throw;
        }
        db.exec(restore.c_str(), "restore secure_delete");
    });
    res.bytes_after = log_file_bytes(log.path());
    return res;
}

}  // namespace

int64_t log_file_bytes(const std::string& db_path) {
    int64_t n = 0;
    for (const std::string& p : {db_path, db_path + "-wal"}) {
        std::error_code ec;
        const auto size = fs::file_size(p, ec);
        if (!ec) n += static_cast<int64_t>(size);
    }
    return n;
}

int64_t count_text_older_than(const RunLog& log, int64_t cutoff_utc_ms) {
    Stmt st(log.db(),
            (std::string("SELECT count(*) FROM responses WHERE started_ms < ?1 AND ") + kHasText)
                .c_str());
    st.bind(1, cutoff_utc_ms);
    return st.step() ? st.int64(0) : 0;
}

PurgeResult purge_text_older_than(RunLog& log, int64_t cutoff_utc_ms) {
    return run_purge(log, [&](const Db& db) {
        Stmt up(db, (std::string("UPDATE responses SET prompt = NULL, output = NULL, redacted = 1 "
                                 "WHERE started_ms < ?1 AND ") +
                     kHasText)
                        .c_str());
        up.bind(1, cutoff_utc_ms).run();
        const int64_t n = sqlite3_changes64(db.get());
        Stmt runs(
            db,
            "UPDATE runs SET settings = json_remove(settings, '$.system_prompt') "
            "WHERE started_ms < ?1 AND json_extract(settings, '$.system_prompt') IS NOT NULL");
        runs.bind(1, cutoff_utc_ms).run();
        return n;
    });
}

PurgeResult redact_run(RunLog& log, int64_t run_id) {
    {
        Stmt st(log.db(), "SELECT 1 FROM runs WHERE id = ?1");
        st.bind(1, run_id);
        if (!st.step())
            throw std::invalid_argument("redact: no run with id " + std::to_string(run_id) +
                                        " in " + log.path() + "; nothing was changed");
    }
    return run_purge(log, [&](const Db& db) {
        Stmt up(db, (std::string("UPDATE responses SET prompt = NULL, output = NULL, redacted = 1 "
                                 "WHERE run_id = ?1 AND ") +
                     kHasText)
                        .c_str());
        up.bind(1, run_id).run();
        const int64_t n = sqlite3_changes64(db.get());
        Stmt runs(db,
                  "UPDATE runs SET settings = json_remove(settings, '$.system_prompt') "
                  "WHERE id = ?1 AND json_extract(settings, '$.system_prompt') IS NOT NULL");
        runs.bind(1, run_id).run();
        return n;
    });
}

}  // namespace wb::runlog
