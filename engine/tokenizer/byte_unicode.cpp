#include "tokenizer/byte_unicode.h"

#include <array>
#include <cstdio>

#include "tokenizer/utf8.h"

namespace wb::tokenizer {

namespace {

// Bytes whose character is their own code point (GPT-2's printable set).
constexpr bool maps_to_itself(int b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

struct Table {
    std::array<uint32_t, 256> cp_of_byte{};  // [256] byte -> code point
    std::array<std::string, 256> utf8_of_byte;
    std::array<int16_t, 324> byte_of_cp{};  // [0x144] code point -> byte, -1 if none

    Table() {
        byte_of_cp.fill(-1);
        uint32_t next = 256;
        for (int b = 0; b < 256; ++b) {
            cp_of_byte[static_cast<size_t>(b)] =
                maps_to_itself(b) ? static_cast<uint32_t>(b) : next++;
        }
        for (int b = 0; b < 256; ++b) {
            const uint32_t cp = cp_of_byte[static_cast<size_t>(b)];
            utf8_append_codepoint(cp, utf8_of_byte[static_cast<size_t>(b)]);
            byte_of_cp[cp] = static_cast<int16_t>(b);
        }
    }
};

const Table& table() {
    static const Table t;
    return t;
}

}  // namespace

std::string_view byte_to_unicode(uint8_t b) {
    return table().utf8_of_byte[b];
}

int unicode_to_byte(uint32_t cp) {
    const Table& t = table();
    return cp < t.byte_of_cp.size() ? t.byte_of_cp[cp] : -1;
}

void append_byte_encoded(std::string_view bytes, std::string& out) {
    const Table& t = table();
    for (const char c : bytes) out += t.utf8_of_byte[static_cast<uint8_t>(c)];
}

std::string byte_decode_text(std::string_view token_text) {
    std::string out;
    out.reserve(token_text.size());
    for (const uint32_t cp : utf8_decode_lenient(token_text)) {
        const int b = unicode_to_byte(cp);
        if (b >= 0) {
            out.push_back(static_cast<char>(b));
            continue;
        }
        std::string utf8;
        utf8_append_codepoint(cp, utf8);
        out += "[UNK_BYTE_0x";
        for (const char c : utf8) {
            char hex[3];
            std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(static_cast<uint8_t>(c)));
            out += hex;
        }
        out += token_text;
        out += ']';
    }
    return out;
}

}  // namespace wb::tokenizer
