#pragma once
// Is this run-log file usable, and if not, what can still be read from it?
// inspect_log() answers without changing anything: it reads a private copy
// (scratch_copy.h), runs SQLite's quick_check there, and when the file is
// damaged counts the responses that can still be read (row_scan.h).
// salvage_log() copies every readable row into a new run log.
//
// Nothing here renames, moves or writes the inspected file: what to do
// with a damaged log is the user's choice (the app asks; the CLI says which
// command does what).

#include <cstdint>
#include <optional>
#include <string>

namespace wb::runlog {

/// What a run-log path holds.
enum class LogState {
    Missing,      ///< no file there (a new log would be created)
    Healthy,      ///< a run log that passes SQLite's quick_check
    Damaged,      ///< a run log SQLite reads only in part (or whose header is damaged)
    NotSqlite,    ///< not a SQLite file at all (a text file, a typo in --db)
    Foreign,      ///< a SQLite database of another application
    NewerSchema,  ///< a run log written by a newer build
    NotRegular,   ///< a folder, FIFO, device (/dev/null) or socket
    Unreadable,   ///< exists but cannot be read (permissions)
};

/// "missing", "healthy", "damaged", "not-sqlite", "foreign", "newer-schema",
/// "not-regular", "unreadable".
const char* to_string(LogState s);

/// The outcome of inspect_log().
struct LogInspection {
    std::string path;
    LogState state = LogState::Missing;
    bool writable = false;           ///< the file (and its folder) can be written
    bool header_damaged = false;     ///< Damaged: the 100-byte header was not a header
    int64_t readable_responses = 0;  ///< responses that can be read (salvage copies these)
    /// Damaged: ids between readable responses that could not be read, an
    /// upper bound on the responses lost (rows on damaged pages).
    int64_t unreadable_responses = 0;
    /// Damaged: runs, model versions and environments that could not be read.
    int64_t unreadable_other_rows = 0;
    /// One sentence on what is wrong, starting lower-case ("the run log is
    /// damaged: ..."); "" for Healthy and Missing.
    std::string problem;
    /// "<path>: <problem>. <what can be read>." — for every state but
    /// Healthy and Missing; ends with a period, without advice (each surface
    /// adds its own: the CLI names commands, the app offers buttons).
    std::string message() const;
};

/// Inspects the file at `path` without changing it or its -wal/-shm.
/// Cost: a copy of the file plus one quick_check over it (a few seconds
/// for a 1 GB log); never throws for a bad file (that is the answer), only
/// std::runtime_error when no private copy can be made (temp folder full).
LogInspection inspect_log(const std::string& path);

/// What salvage_log() copied.
struct SalvageReport {
    std::string from, to;
    int64_t responses = 0;  ///< responses copied (every readable one)
    int64_t runs = 0, model_versions = 0, environments = 0;
    int64_t unreadable_responses = 0;  ///< as LogInspection::unreadable_responses
    int64_t rejected_rows = 0;         ///< rows read but refused by the schema's checks (garbage)
    /// Runs / model versions / environments that readable responses refer
    /// to but that could not be read: recreated as "(lost ...)" rows so the
    /// responses keep their links.
    int64_t placeholders = 0;
    int64_t model_loads = 0;  ///< cold-start rows copied (schema 4)
    /// Cold-start rows left out: unreadable, refused by the schema, or
    /// whose model version, environment or run was not salvaged.
    int64_t model_loads_lost = 0;
    int64_t run_events = 0;  ///< run_events rows copied (schema 6)
    /// Run events left out: unreadable, refused, or whose run was not salvaged.
    int64_t run_events_lost = 0;
    bool header_rebuilt = false;
    std::string summary() const;  ///< "salvaged 80 responses ... from X into Y ..."
};

/// Copies every readable row (model versions, environments, runs,
/// responses with their ids, settings) of the run log at `from` into a new
/// run log at `to`, in one transaction. `from` is read through a private
/// copy and never changed. Throws std::runtime_error when `to` exists
/// (salvage never overwrites), when `from` is not a run log at all
/// (NotSqlite, Foreign, NewerSchema, NotRegular, Missing: the message
/// says which), or when writing `to` fails (then `to` is removed).
SalvageReport salvage_log(const std::string& from, const std::string& to);

/// "<dir>/<stem>-salvaged-<UTC time>.sqlite" beside `path` (a free name).
std::string salvage_path_for(const std::string& path);

}  // namespace wb::runlog
