#pragma once
// UTC timestamps as the run log stores them (milliseconds since the Unix
// epoch) and their ISO 8601 text form (RFC 3339 profile).

#include <cstdint>
#include <string>
#include <string_view>

namespace wb::runlog {

/// Now, UTC, in ms since 1970-01-01T00:00:00Z (system_clock).
int64_t now_utc_ms();

/// The current UTC time as "20261129T230501Z" (ISO 8601 basic format, to
/// the second), for file names.
std::string compact_utc_now();

/// "2026-11-29T23:05:01.042Z" for `ms` since the epoch.
std::string format_utc_ms(int64_t ms);

/// Parses an ISO 8601 date or date-time: "YYYY-MM-DD" (midnight UTC),
/// "YYYY-MM-DDTHH:MM[:SS[.fff]]" with an optional "Z" or "+HH:MM"/"-HH:MM"
/// offset (no offset = UTC); a space may replace the "T". Returns ms since
/// the epoch. Throws std::invalid_argument "bad time \"<text>\": <why>".
int64_t parse_utc_ms(std::string_view text);

}  // namespace wb::runlog
