#pragma once
// Reading what can still be read from a damaged SQLite table: every row
// whose b-tree pages are intact, in rowid order, stepping over damaged
// pages instead of stopping at the first SQLITE_CORRUPT.
//
// How: rows are read with "WHERE rowid >= ?next ORDER BY rowid". When a
// read fails, seeks at growing distances (next + 1, + 2, + 4, ...) find a
// rowid whose seek works again; a binary search between the last failing
// and the first working seek finds the first rowid past the damage, and
// the scan goes on from there. Only rows stored on damaged pages are lost;
// the rowid ranges stepped over are reported.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runlog/sqlite_db.h"

namespace wb::runlog {

/// What scan_table() read and stepped over.
struct ScanResult {
    int64_t rows = 0;  ///< rows handed to the callback
    /// Inclusive rowid ranges that could not be read (rows there, if any,
    /// are lost). Empty when the table read cleanly.
    std::vector<std::pair<int64_t, int64_t>> skipped;
    /// Rowids inside `skipped` ranges that lie between the smallest and
    /// largest rowid read: an upper bound on the rows lost in the middle.
    int64_t skipped_ids = 0;
    bool damaged() const { return !skipped.empty(); }
};

/// True for the SQLite errors that mean "this part of the file cannot be
/// read" (SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_IOERR, SQLITE_FORMAT,
/// SQLITE_RANGE of a damaged record) rather than a misuse.
bool is_damage(const DbError& e);

/// Calls `on_row(st)` for each readable row of `table`, oldest rowid
/// first; column 0 of `st` is the rowid, columns 1.. are `columns` (an SQL
/// column list, e.g. "kind, name"). Errors other than damage (is_damage)
/// are thrown as DbError, as are the callback's own exceptions.
ScanResult scan_table(const Db& db, const std::string& table, const std::string& columns,
                      const std::function<void(const Stmt&)>& on_row);

}  // namespace wb::runlog
