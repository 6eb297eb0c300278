#pragma once
// UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF) for the exports, which promise valid UTF-8 even when a
// stored text is not (e.g. a prompt file in Latin-1).

#include <cstddef>
#include <string>
#include <string_view>

namespace wb::runlog {

/// Length (1-4) of the valid UTF-8 sequence starting at s[i], or 0 when the
/// bytes there are not valid UTF-8. Requires i < s.size().
size_t utf8_sequence_length(std::string_view s, size_t i);

/// True when all of `s` is valid UTF-8.
bool is_valid_utf8(std::string_view s);

/// `s` with each invalid byte replaced by U+FFFD (EF BF BD).
std::string to_valid_utf8(std::string_view s);

}  // namespace wb::runlog
