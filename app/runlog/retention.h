#pragma once
// The run log's text kept only as long as the user wants ("the
// run log's data"): prompts and answers are often customer data. Retention
// removes the prompt and output text of responses older than a cutoff,
// redaction the text of one run; rows and figures stay (token counts,
// byte lengths, SHA-256, timings, settings), each row marked redacted = 1 so
// History and export show "[redacted]" instead of an empty answer.
//
// Each purge is ONE transaction (all rows or none), then VACUUM and a WAL
// checkpoint(TRUNCATE) outside it, so the deleted text is gone from the
// database file's bytes and from its -wal file, not merely unreachable
// (https://sqlite.org/lang_vacuum.html, https://sqlite.org/pragma.html#pragma_wal_checkpoint).

#include <cstdint>
#include <string>

#include "runlog/run_log.h"

namespace wb::runlog {

/// What a purge did. Sizes in bytes: the database file plus its -wal file.
struct PurgeResult {
    int64_t responses = 0;     ///< responses whose text was removed by this call
    int64_t bytes_before = 0;  ///< file + -wal before the purge
    int64_t bytes_after = 0;   ///< file + -wal after VACUUM and the checkpoint
    /// False when another program kept reading the log during the checkpoint,
    /// so the -wal file could not be emptied: the old pages stay there until
    /// that program closes the log (what the CLI and the app then say).
    bool wal_emptied = true;
};

/// Responses that started before `cutoff_utc_ms` (UTC ms since the Unix
/// epoch) and still hold prompt or output text: what purge_text_older_than
/// would change. Reads only. Throws DbError when the log cannot be read.
int64_t count_text_older_than(const RunLog& log, int64_t cutoff_utc_ms);

/// Removes the prompt and output text of every response that started
/// before `cutoff_utc_ms` (prompt, output := NULL, redacted := 1; the
/// SHA-256, byte lengths, token counts, finish reason, error, timings and
/// settings are kept), and the system prompt ("system_prompt") from the
/// settings of runs that started before it, in one transaction; then VACUUM
/// and checkpoint(TRUNCATE). Throws DbError, having changed nothing, when
/// the transaction cannot run: "<path>: the run log is locked by another
/// program ...; nothing was changed", or SQLite's reason; DbError when
/// VACUUM fails after the commit (the text is out of the rows then, but its
/// bytes may remain in the file until a later purge's VACUUM; the message
/// says so). A damaged log never gets here: RunLog::open refuses it.
PurgeResult purge_text_older_than(RunLog& log, int64_t cutoff_utc_ms);

/// The same for every response of run `run_id` (and that run's system
/// prompt), whatever its age. Throws std::invalid_argument naming the id
/// for an unknown run (nothing changed), DbError as purge_text_older_than.
PurgeResult redact_run(RunLog& log, int64_t run_id);

/// Bytes of `db_path` plus its -wal file (0 for a missing one).
int64_t log_file_bytes(const std::string& db_path);

}  // namespace wb::runlog
