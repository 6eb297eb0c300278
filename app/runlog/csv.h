#pragma once
// CSV fields per RFC 4180 section 2: a field holding a comma, a double
// quote, CR or LF is enclosed in double quotes and its quotes are doubled;
// records end with CRLF. Output is UTF-8: invalid input bytes become U+FFFD.

#include <ostream>
#include <string_view>

namespace wb::runlog {

/// Writes `field` to `out`, quoted only when RFC 4180 requires it (and when
/// it starts or ends with a space, so spreadsheet importers keep it).
void write_csv_field(std::ostream& out, std::string_view field);

/// The record separator, "\r\n" (RFC 4180 2.1).
inline constexpr std::string_view kCsvRecordEnd = "\r\n";

}  // namespace wb::runlog
