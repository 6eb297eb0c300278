#include "tokenizer/spm_tokenizer.h"

#include "tokenizer/spm_session.h"
#include "tokenizer/vocab.h"

namespace wb::tokenizer {

namespace {

constexpr std::string_view kEscapedSpace = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

// "<0xNN>" (upper- or lower-case hex) -> NN, else -1.
int parse_byte_token(std::string_view t) {
    if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(t[3]), lo = hex(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    for (size_t hit; (hit = s.find(from, pos)) != std::string_view::npos; pos = hit + from.size()) {
        out.append(s, pos, hit - pos);
        out.append(to);
    }
    out.append(s, pos, std::string_view::npos);
    return out;
}

}  // namespace

void SpmTokenizer::encode(const Vocab& vocab, std::string_view text, bool after_special,
                          std::vector<int32_t>& out) const {
    std::string escaped;
    escaped.reserve(text.size() + 8);
    if (vocab.add_space_prefix() && after_special) escaped += kEscapedSpace;
    for (const char c : text) {
        if (c == ' ') {
            escaped += kEscapedSpace;
        } else {
            escaped.push_back(c);
        }
    }
    SpmSession session(vocab);
    session.tokenize(escaped, out);
}

std::string SpmTokenizer::piece(const Vocab& vocab, int32_t id) const {
    const uint32_t attr = vocab.attr(id);
    const std::string& text = vocab.text(id);
    if (attr & (kAttrControl | kAttrUnknown | kAttrUserDefined)) return text;
    if (attr & kAttrNormal) return replace_all(text, kEscapedSpace, " ");
    if (attr & kAttrByte) {
        const int b = parse_byte_token(text);
        // A byte token without the <0xNN> form shows as its text.
        return b >= 0 ? std::string(1, static_cast<char>(b)) : text;
    }
    return {};  // Unused / Undefined
}

}  // namespace wb::tokenizer
