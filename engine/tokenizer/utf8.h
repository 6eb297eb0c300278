#pragma once
// UTF-8 helpers shared by the SPM tokenizer and the streaming detokenizer.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace wb::tokenizer {

/// U+FFFD REPLACEMENT CHARACTER in UTF-8 (EF BF BD).
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

/// Length in bytes of the UTF-8 sequence that starts with `lead`, judged only
/// by its high 4 bits: 1 for ASCII and for stray continuation bytes, 2 for
/// 0xC_/0xD_, 3 for 0xE_, 4 for 0xF_. This is the table llama.cpp's
/// `unicode_len_utf8` uses to split text into SPM symbols; it does not
/// validate (a malformed lead still yields a length), so callers clip it to
/// the bytes that remain.
size_t utf8_sequence_length(uint8_t lead);

/// Appends the well-formed UTF-8 prefix of `in` to `out`, with every
/// ill-formed sequence replaced by one U+FFFD per maximal subpart (Unicode
/// 15, §3.9 "U+FFFD Substitution of Maximal Subparts", Table 3-7 byte
/// ranges: no overlongs, no surrogates, nothing above U+10FFFF).
///
/// When `final` is false, a sequence cut off by the end of `in` that could
/// still become valid with more bytes is left unconsumed; when `final` is
/// true it is replaced by U+FFFD. Returns the number of bytes of `in`
/// consumed (the caller keeps `in.substr(result)` for later). Never throws
/// except std::bad_alloc.
size_t utf8_append_valid(std::string_view in, bool final, std::string& out);

}  // namespace wb::tokenizer
