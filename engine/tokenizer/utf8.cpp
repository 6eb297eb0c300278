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

}  // namespace wb::tokenizer
