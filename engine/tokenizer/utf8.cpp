#include "tokenizer/utf8.h"

namespace wb::tokenizer {

size_t utf8_sequence_length(uint8_t lead) {
    // Indexed by the high nibble: 0x0-0xB -> 1, 0xC-0xD -> 2, 0xE -> 3, 0xF -> 4.
    static constexpr uint8_t kByNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kByNibble[lead >> 4];
}

namespace {

// Byte range the second byte of a sequence may take, by lead byte (Unicode
// Table 3-7). The narrower ranges after E0, ED, F0 and F4 exclude overlong
// forms, UTF-16 surrogates and code points above U+10FFFF.
struct LeadRule {
    size_t length = 0;  ///< 0: the byte cannot start a sequence
    uint8_t second_lo = 0x80;
    uint8_t second_hi = 0xBF;
};

LeadRule rule_for(uint8_t b) {
    if (b < 0x80) return {1, 0, 0};
    if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
    if (b == 0xE0) return {3, 0xA0, 0xBF};
    if (b == 0xED) return {3, 0x80, 0x9F};
    if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
    if (b == 0xF0) return {4, 0x90, 0xBF};
    if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
    if (b == 0xF4) return {4, 0x80, 0x8F};
    return {};  // 0x80-0xC1 (continuation or overlong lead), 0xF5-0xFF
}

}  // namespace

size_t utf8_append_valid(std::string_view in, bool final, std::string& out) {
    size_t i = 0;
    while (i < in.size()) {
        const auto lead = static_cast<uint8_t>(in[i]);
        const LeadRule rule = rule_for(lead);
        if (rule.length == 1) {
            out.push_back(in[i]);
            ++i;
            continue;
        }
        if (rule.length == 0) {
            out += kReplacementChar;
            ++i;
            continue;
        }
        // Walk the continuation bytes; `k` counts the bytes of the maximal
        // subpart seen so far (lead included).
        size_t k = 1;
        bool broken = false;
        while (k < rule.length) {
            if (i + k >= in.size()) break;  // cut off by the end of the input
            const auto b = static_cast<uint8_t>(in[i + k]);
            const uint8_t lo = k == 1 ? rule.second_lo : 0x80;
            const uint8_t hi = k == 1 ? rule.second_hi : 0xBF;
            if (b < lo || b > hi) {
                broken = true;
                break;
            }
            ++k;
        }
        if (k == rule.length) {
            out.append(in.substr(i, k));
            i += k;
        } else if (broken || final) {
            // The maximal subpart becomes one U+FFFD; the byte that broke it
            // is looked at again as a possible lead.
            out += kReplacementChar;
            i += k;
        } else {
            break;  // incomplete but still possibly valid: wait for more bytes
        }
    }
    return i;
}

std::vector<uint32_t> utf8_decode_lenient(std::string_view text) {
    std::vector<uint32_t> out;
    out.reserve(text.size());
    const size_t n = text.size();
    auto cont = [&](size_t i) { return i < n && (static_cast<uint8_t>(text[i]) & 0xC0) == 0x80; };
    auto bits = [&](size_t i) {
        return static_cast<uint32_t>(static_cast<uint8_t>(text[i]) & 0x3F);
    };
    for (size_t i = 0; i < n;) {
        const auto b = static_cast<uint8_t>(text[i]);
        if (b < 0x80) {
            out.push_back(b);
            i += 1;
        } else if (b < 0xC0) {
            out.push_back(0xFFFD);  // continuation byte without a lead
            i += 1;
        } else if (b < 0xE0) {
            if (cont(i + 1)) {
                out.push_back((static_cast<uint32_t>(b & 0x1F) << 6) | bits(i + 1));
                i += 2;
            } else {
                out.push_back(0xFFFD);
                i += 1;
            }
        } else if (b < 0xF0) {
            if (cont(i + 1) && cont(i + 2)) {
                out.push_back((static_cast<uint32_t>(b & 0x0F) << 12) | (bits(i + 1) << 6) |
                              bits(i + 2));
                i += 3;
            } else {
                out.push_back(0xFFFD);
                i += 1;
            }
        } else if (b < 0xF8) {
            if (cont(i + 1) && cont(i + 2) && cont(i + 3)) {
                const uint32_t cp = (static_cast<uint32_t>(b & 0x07) << 18) | (bits(i + 1) << 12) |
                                    (bits(i + 2) << 6) | bits(i + 3);
                out.push_back(cp <= 0x10FFFF ? cp : 0xFFFD);
                i += 4;
            } else {
                out.push_back(0xFFFD);
                i += 1;
            }
        } else {
            out.push_back(0xFFFD);  // F8-FF start no sequence
            i += 1;
        }
    }
    return out;
}

void utf8_append_codepoint(uint32_t cp, std::string& out) {
    if (cp > 0x10FFFF) cp = 0xFFFD;
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

}  // namespace wb::tokenizer
