#pragma once
// Python str operations on UTF-8 text, as Jinja templates see them through
// Python: lengths and indexes count code points, strip() removes what
// str.isspace() accepts. Case mapping covers ASCII, Latin-1, Latin
// Extended-A, Greek and Cyrillic (templates apply it to role names and
// headings); other scripts are left unchanged where Python would map them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wb::chat::jinja::py {

/// Code points of `s` (well-formed UTF-8 expected; a stray byte counts as one).
std::vector<uint32_t> code_points(std::string_view s);
/// UTF-8 of code points [begin, end) of `cps`.
std::string encode(const std::vector<uint32_t>& cps, size_t begin, size_t end);
/// Number of code points (Python len()).
size_t length(std::string_view s);

/// Python str.isspace() for one code point.
bool is_space(uint32_t cp);
/// Byte length of the Python-whitespace code point at s[i], 0 if none.
size_t space_at(std::string_view s, size_t i);

/// str.strip/lstrip/rstrip: without `chars`, Python whitespace; with it,
/// any of its code points.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left,
                  bool right);
/// str.split(sep, maxsplit): without `sep`, runs of whitespace separate and
/// empty strings are dropped. Throws std::invalid_argument("empty separator").
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep,
                               int64_t maxsplit);
/// str.rsplit(sep, maxsplit), splitting from the right.
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                int64_t maxsplit);
/// str.replace(old, new, count); count < 0 replaces all.
std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
/// str.title(): a letter after a non-letter is upper-cased, others lower-cased.
std::string title(std::string_view s);
/// str.capitalize(): first character upper, the rest lower.
std::string capitalize(std::string_view s);

/// Python slice semantics on `n` items: indexes of s[start:stop:step].
/// Throws std::invalid_argument for step 0.
std::vector<size_t> slice_indexes(size_t n, std::optional<int64_t> start,
                                  std::optional<int64_t> stop, std::optional<int64_t> step);

}  // namespace wb::chat::jinja::py
