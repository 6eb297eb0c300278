#pragma once
// History export: one row per response joined with its run, model version
// and environment, as CSV (RFC 4180, UTF-8, header row) or JSON Lines
// (https://jsonlines.org, one object per line). Rows stream from a
// sqlite3_step loop straight to the output, so memory stays flat however
// many responses match.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "runlog/run_log.h"

namespace wb::runlog {

enum class ExportFormat { Csv, Jsonl };

/// Which responses to export; every set field must match (AND).
struct ExportFilter {
    std::optional<int64_t> run_id;
    /// A model's SHA-256 prefix (hex, any case) or its exact general.name.
    std::optional<std::string> model;
    std::optional<int64_t> since_ms;  ///< started_ms >= since (UTC ms, inclusive)
    std::optional<int64_t> until_ms;  ///< started_ms <  until (UTC ms, exclusive)
    std::optional<std::string> finish_reason;
};

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
                         std::ostream& out);

}  // namespace wb::runlog
