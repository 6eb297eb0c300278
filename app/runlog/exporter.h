#pragma once
// History export: one row per response joined with its run, model version
// and environment, as CSV (RFC 4180, UTF-8, header row) or JSON Lines
// (https://jsonlines.org, one object per line). Rows stream from a
// sqlite3_step loop straight to the output, so memory stays flat however
// many responses match.
//
// The one exporter of the project: `workbench-cli export` and the GUI's
// History tab both call it, and the History table selects its rows with
// the same filter SQL (filter_sql), so what the table shows is what the
// export writes.

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "runlog/run_log.h"

namespace wb::runlog {

enum class ExportFormat { Csv, Jsonl };

/// Which responses to export; every set field must match (AND).
struct ExportFilter {
    std::optional<int64_t> run_id;
    /// A model's SHA-256 prefix (hex, any case) or its exact general.name.
    std::optional<std::string> model;
    /// One model version by its row id (model_versions.id), as the History
    /// tab's model list picks it.
    std::optional<int64_t> model_version_id;
    std::optional<int64_t> since_ms;  ///< started_ms >= since (UTC ms, inclusive)
    std::optional<int64_t> until_ms;  ///< started_ms <  until (UTC ms, exclusive)
    std::optional<std::string> finish_reason;
    /// Text search, the History tab's search box: the response's prompt OR
    /// its output contains `text` as a substring. SQLite LIKE semantics
    /// (https://sqlite.org/lang_expr.html#like), as History always had:
    /// ASCII letters match case-insensitively, every other character
    /// (é, 日, ...) only exactly; '%', '_' and '\' in `text` are literal
    /// (escaped), newlines and quotes are ordinary characters. Redacted
    /// responses (prompt and output NULL) never match. An empty text is no
    /// filter (an empty search box shows every row).
    std::optional<std::string> text;
};

/// One value bound to a `?` of filter_sql(): an integer or a UTF-8 text.
using SqlValue = std::variant<int64_t, std::string>;

/// An ExportFilter as SQL: `condition` is a boolean expression over the
/// aliases r (responses), u (runs) and m (model_versions) with anonymous
/// `?` placeholders, "1" when no field is set; `binds` are the values for
/// those placeholders in order (never spliced into the text). The text
/// search is `(r.prompt LIKE ? ESCAPE '\' OR r.output LIKE ? ESCAPE '\')`
/// with the pattern "%<text, escaped>%". Throws std::invalid_argument for
/// a finish reason that is not stop, length, timeout, cancelled, rejected
/// or error.
struct FilterSql {
    std::string condition;
    std::vector<SqlValue> binds;
};
FilterSql filter_sql(const ExportFilter& filter);

class Stmt;  // runlog/sqlite_db.h

/// Binds `binds` to the statement's placeholders 1..n in order (the
/// statement was prepared from text holding a FilterSql's condition).
/// Throws what Stmt::bind throws.
void bind_all(Stmt& st, const std::vector<SqlValue>& binds);

/// Called while exporting with the rows written so far and the number of
/// rows the filter matches (counted with one SELECT COUNT(*) before the
/// first row, only when a callback is given): every 1024 rows and once at
/// the end. Called on the exporting thread.
using ExportProgress = std::function<void(int64_t done, int64_t total)>;

/// Column names, in output order (the CSV header and the JSONL keys).
/// Times end in _utc (ISO 8601, ms, "Z"); durations in _ms; rates in _tps.
const std::vector<std::string>& export_columns();

/// Writes the matching responses, oldest first (by started_ms, then id), to
/// `out` and returns how many were written. CSV: header row, empty field
/// for NULL, settings as JSON text. JSONL: numbers as numbers, NULL as
/// null, settings and tensor_types as nested objects. Throws
/// std::invalid_argument for a bad filter (unknown finish reason),
/// DbError on a read failure, std::runtime_error when `out` fails (e.g. a
/// full disk).
int64_t export_responses(const RunLog& log, const ExportFilter& filter, ExportFormat format,
                         std::ostream& out, const ExportProgress& progress = {});

/// export_responses() through a connection of its own to the run log at
/// `db_path`, opened read-only: it never creates, migrates or prunes the
/// file, and may run on any thread while the app keeps logging (WAL mode
/// lets a reader and the writer work at once). The GUI's History export.
/// Runs SQLite's quick integrity check first. Throws OpenError (CannotOpen:
/// no such file; Foreign: a SQLite file that is not a run log;
/// NewerSchema: written by a newer build); std::runtime_error with one
/// sentence naming the file and the cause for a file that is not SQLite
/// ("<db>: not a SQLite database ..."), "<db>: cannot export: ..." for a
/// damaged log (saying how many responses can still be read and how to
/// salvage them) or any other read failure; and what export_responses()
/// throws for the output.
int64_t export_responses_readonly(const std::string& db_path, const ExportFilter& filter,
                                  ExportFormat format, std::ostream& out,
                                  const ExportProgress& progress = {});

/// export_responses_readonly() into the file `out_path` ("-" = standard
/// output, written through a 64 KiB buffer): the CLI's `export -o` and the
/// History tab's Export both call it. Returns the rows written. Throws
/// std::runtime_error "<file>: cannot write the export: <cause>" when the
/// file cannot be opened, and "... (the export is incomplete)" when a
/// write or the close fails (a full disk, a closed pipe); and what
/// export_responses_readonly() throws for the log. On any failure a
/// regular file this call wrote in part is removed (never a device, a
/// FIFO or a symlink's target), so half an export never looks whole.
int64_t export_responses_to_file(const std::string& db_path, const ExportFilter& filter,
                                 ExportFormat format, const std::string& out_path,
                                 const ExportProgress& progress = {});

}  // namespace wb::runlog
