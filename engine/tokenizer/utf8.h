#pragma once
// UTF-8 helpers shared by the tokenizers and the streaming detokenizer.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

/// Code points of `text`, decoded as llama.cpp's `unicode_cpts_from_utf8`
/// does, so that byte-level BPE sees exactly what llama.cpp sees: the lead
/// byte's pattern and the continuation bytes (10xxxxxx) are checked but
/// overlong forms and surrogates are not (C0 80 decodes to U+0000, ED A0 80
/// to U+D800); a byte that does not start such a sequence (a stray
/// continuation byte, F8-FF, or a sequence cut short) becomes U+FFFD and
/// decoding resumes at the next byte. A 4-byte pattern can encode up to
/// U+1FFFFF; values above U+10FFFF (which llama.cpp cannot re-encode and
/// throws on) become U+FFFD here. Result: [n_code_points].
std::vector<uint32_t> utf8_decode_lenient(std::string_view text);

/// Appends the UTF-8 form of `cp` (1-4 bytes, as llama.cpp's
/// `unicode_cpt_to_utf8`: surrogates are encoded like any other value).
/// `cp` above U+10FFFF is written as U+FFFD.
void utf8_append_codepoint(uint32_t cp, std::string& out);

}  // namespace wb::tokenizer
