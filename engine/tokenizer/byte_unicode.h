#pragma once
// The byte-to-character table of byte-level BPE (GPT-2's `bytes_to_unicode`,
// openai/gpt-2 src/encoder.py; llama.cpp unicode_byte_to_utf8): every byte
// 0-255 stands for one printable character, so BPE runs over text without
// raw control bytes or spaces. Bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map
// to the code point of the same value; the 68 others (0x00-0x20, 0x7F-0xA0,
// 0xAD) map, in byte order, to U+0100, U+0101, ... (so ' ' is "Ġ" U+0120 and
// '\n' is "Ċ" U+010A).

#include <cstdint>
#include <string>
#include <string_view>

namespace wb::tokenizer {

/// UTF-8 of the character that stands for byte `b` (1 or 2 bytes).
std::string_view byte_to_unicode(uint8_t b);

/// The byte that code point `cp` stands for, or -1 if `cp` is not one of the
/// 256 characters of the table.
int unicode_to_byte(uint32_t cp);

/// Appends the byte-level form of `bytes`: each byte replaced by its
/// character (llama.cpp unicode_byte_encoding_process for one word).
void append_byte_encoded(std::string_view bytes, std::string& out);

/// The raw bytes a byte-level BPE token text stands for (llama.cpp
/// llama_decode_text): each code point of `token_text` (decoded as
/// utf8_decode_lenient) is mapped back through the table. A code point
/// outside the table is kept visible the way llama.cpp shows it:
/// "[UNK_BYTE_0x" + its UTF-8 bytes in lower-case hex + the whole token text
/// + "]".
std::string byte_decode_text(std::string_view token_text);

}  // namespace wb::tokenizer
