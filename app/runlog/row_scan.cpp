#include "runlog/row_scan.h"

#include <limits>

namespace wb::runlog {

bool is_damage(const DbError& e) {
    switch (e.code() & 0xff) {
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
        case SQLITE_IOERR:
        case SQLITE_FORMAT:
        case SQLITE_RANGE:
            return true;
        default:
            return false;
    }
}

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// True when a seek to the first rowid >= `at` works (whether or not a row
// is there).
bool seek_works(const Db& db, const std::string& table, int64_t at) {
    try {
        Stmt st(
            db,
            ("SELECT rowid FROM " + table + " WHERE rowid >= ?1 ORDER BY rowid LIMIT 1").c_str());
        st.bind(1, at);
        (void)st.step();
        return true;
    } catch (const DbError& e) {
        if (!is_damage(e)) throw;
        return false;
    }
}

}  // namespace

ScanResult scan_table(const Db& db, const std::string& table, const std::string& columns,
                      const std::function<void(const Stmt&)>& on_row) {
    ScanResult res;
    const std::string sql =
        "SELECT rowid, " + columns + " FROM " + table + " WHERE rowid >= ?1 ORDER BY rowid";
    int64_t next = std::numeric_limits<int64_t>::min();
    int64_t first_read = kMax, last_read = std::numeric_limits<int64_t>::min();
    for (;;) {
        try {
            Stmt st(db, sql.c_str());
            st.bind(1, next);
            while (st.step()) {
                const int64_t id = st.int64(0);
                on_row(st);
                ++res.rows;
                first_read = std::min(first_read, id);
                last_read = id;
                if (id == kMax) return res;
                next = id + 1;
            }
            break;  // the end of the table
        } catch (const DbError& e) {
            if (!is_damage(e)) throw;
        }
        // Every seek at `next` fails: find the first rowid past the damage.
        int64_t bad = next, good = 0;
        bool found = false;
        for (int64_t step = 1;; step *= 2) {
            if (bad > kMax - step) break;  // nothing readable up to the largest rowid
            const int64_t probe = bad + step;
            if (seek_works(db, table, probe)) {
                good = probe;
                found = true;
                break;
            }
            bad = probe;
            if (step > kMax / 2) break;
        }
        if (!found) {
            res.skipped.emplace_back(next, kMax);
            break;
        }
        while (good - bad > 1) {
            const int64_t mid = bad + (good - bad) / 2;
            if (seek_works(db, table, mid))
                good = mid;
            else
                bad = mid;
        }
        res.skipped.emplace_back(next, good - 1);
        next = good;
    }
    // Ids lost between rows that were read (a damaged range at either end
    // has no known bound).
    for (const auto& [a, b] : res.skipped) {
        const int64_t lo = std::max(a, first_read), hi = std::min(b, last_read);
        if (lo <= hi) res.skipped_ids += hi - lo + 1;
    }
    return res;
}

}  // namespace wb::runlog
