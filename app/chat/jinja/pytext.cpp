#include "chat/jinja/pytext.h"

#include <algorithm>
#include <stdexcept>

#include "tokenizer/utf8.h"

namespace wb::chat::jinja::py {

namespace {

uint32_t decode_at(std::string_view s, size_t i, size_t& n) {
    const auto b = static_cast<uint8_t>(s[i]);
    n = b < 0x80 ? 1 : b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    if (i + n > s.size()) n = 1;
    if (n == 1) return b;
    uint32_t cp = n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
    return cp;
}

// Simple case mappings (UnicodeData.txt) of the Latin-1, Latin Extended-A,
// Greek and Cyrillic letters; other code points map to themselves.
uint32_t to_upper_cp(uint32_t c) {
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c == 0xB5) return 0x39C;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x131) return 'I';
        if (c == 0x17F) return 'S';
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
            return (c % 2 == 0) ? c - 1 : c;
        if (c == 0x130 || c == 0x138 || c == 0x149) return c;
        return (c % 2 == 1) ? c - 1 : c;
    }
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c == 0x3C2) return 0x3A3;
    if (c == 0x3AC) return 0x386;
    if (c >= 0x3AD && c <= 0x3AF) return c - 37;
    if (c == 0x3CC) return 0x38C;
    if (c == 0x3CD || c == 0x3CE) return c - 63;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

uint32_t to_lower_cp(uint32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c < 0x80) return c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if (c == 0x178) return 0xFF;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x130) return 'i';
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
            return (c % 2 == 1) ? c + 1 : c;
        if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
        return (c % 2 == 0) ? c + 1 : c;
    }
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

bool is_cased_letter(uint32_t c) {
    return to_upper_cp(c) != c || to_lower_cp(c) != c || c == 0xDF;
}

}  // namespace

std::vector<uint32_t> code_points(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        size_t n = 0;
        out.push_back(decode_at(s, i, n));
        i += n;
    }
    return out;
}

std::string encode(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
    std::string out;
    for (size_t i = begin; i < end && i < cps.size(); ++i)
        tokenizer::utf8_append_codepoint(cps[i], out);
    return out;
}

size_t length(std::string_view s) {
    size_t n = 0;
    for (const char c : s) {
        if ((static_cast<uint8_t>(c) & 0xC0) != 0x80) ++n;
    }
    return n;
}

bool is_space(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

size_t space_at(std::string_view s, size_t i) {
    if (i >= s.size()) return 0;
    size_t n = 0;
    const uint32_t cp = decode_at(s, i, n);
    return is_space(cp) ? n : 0;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left,
                  bool right) {
    const std::vector<uint32_t> cps = code_points(s);
    std::vector<uint32_t> set;
    if (chars) set = code_points(*chars);
    auto drop = [&](uint32_t c) {
        return chars ? std::find(set.begin(), set.end(), c) != set.end() : is_space(c);
    };
    size_t b = 0, e = cps.size();
    if (left) {
        while (b < e && drop(cps[b])) ++b;
    }
    if (right) {
        while (e > b && drop(cps[e - 1])) --e;
    }
    return encode(cps, b, e);
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep,
                               int64_t maxsplit) {
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) throw std::invalid_argument("empty separator");
        size_t pos = 0;
        while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
            const size_t hit = s.find(*sep, pos);
            if (hit == std::string_view::npos) break;
            out.emplace_back(s.substr(pos, hit - pos));
            pos = hit + sep->size();
        }
        out.emplace_back(s.substr(pos));
        return out;
    }
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && space_at(s, i)) i += space_at(s, i);
        if (i >= s.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
            // The rest, with its trailing whitespace removed, is the last item.
            out.push_back(strip(s.substr(i), std::nullopt, false, true));
            return out;
        }
        const size_t start = i;
        while (i < s.size() && !space_at(s, i)) {
            size_t n = 0;
            decode_at(s, i, n);
            i += n;
        }
        out.emplace_back(s.substr(start, i - start));
    }
    return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                int64_t maxsplit) {
    if (maxsplit < 0) return split(s, sep, maxsplit);
    std::vector<std::string> out;
    if (sep) {
        if (sep->empty()) throw std::invalid_argument("empty separator");
        size_t end = s.size();
        while (static_cast<int64_t>(out.size()) < maxsplit) {
            if (end < sep->size()) break;
            const size_t hit = s.rfind(*sep, end - sep->size());
            if (hit == std::string_view::npos) break;
            out.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
            end = hit;
        }
        out.emplace_back(s.substr(0, end));
        std::reverse(out.begin(), out.end());
        return out;
    }
    // Whitespace rsplit: split everything, then join the leading words back.
    std::vector<std::string> all = split(s, std::nullopt, -1);
    if (static_cast<int64_t>(all.size()) <= maxsplit + 1) return all;
    const size_t keep = all.size() - static_cast<size_t>(maxsplit);
    // The first item is the text up to the start of word `keep`.
    const std::string stripped = strip(s, std::nullopt, true, false);
    size_t pos = 0;
    for (size_t w = 0; w < keep; ++w) {
        pos = stripped.find(all[w], pos) + all[w].size();
    }
    out.push_back(stripped.substr(0, pos));
    out.insert(out.end(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end());
    return out;
}

std::string replace(std::string_view s, std::string_view from, std::string_view to, int64_t count) {
    std::string out;
    if (from.empty()) {
        // Python inserts `to` before every code point and at the end.
        const std::vector<uint32_t> cps = code_points(s);
        int64_t done = 0;
        for (size_t i = 0; i <= cps.size(); ++i) {
            if (count < 0 || done < count) {
                out += to;
                ++done;
            }
            if (i < cps.size()) tokenizer::utf8_append_codepoint(cps[i], out);
        }
        return out;
    }
    size_t pos = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        const size_t hit = s.find(from, pos);
        if (hit == std::string_view::npos) break;
        out.append(s.substr(pos, hit - pos));
        out.append(to);
        pos = hit + from.size();
        ++done;
    }
    out.append(s.substr(pos));
    return out;
}

namespace {

// Appends the upper-case form of `c` ("ß" becomes "SS", as in Python).
void append_upper(uint32_t c, std::string& out) {
    if (c == 0xDF) {
        out += "SS";
    } else {
        tokenizer::utf8_append_codepoint(to_upper_cp(c), out);
    }
}

}  // namespace

std::string upper(std::string_view s) {
    std::string out;
    for (const uint32_t c : code_points(s)) append_upper(c, out);
    return out;
}

std::string lower(std::string_view s) {
    std::string out;
    for (const uint32_t c : code_points(s)) tokenizer::utf8_append_codepoint(to_lower_cp(c), out);
    return out;
}

std::string title(std::string_view s) {
    std::string out;
    bool prev_cased = false;
    for (const uint32_t c : code_points(s)) {
        if (prev_cased) {
            tokenizer::utf8_append_codepoint(to_lower_cp(c), out);
        } else if (c == 0xDF) {
            out += "Ss";
        } else {
            tokenizer::utf8_append_codepoint(to_upper_cp(c), out);
        }
        prev_cased = is_cased_letter(c);
    }
    return out;
}

std::string capitalize(std::string_view s) {
    const std::vector<uint32_t> cps = code_points(s);
    std::string out;
    for (size_t i = 0; i < cps.size(); ++i) {
        if (i == 0) {
            if (cps[0] == 0xDF) {
                out += "Ss";
            } else {
                tokenizer::utf8_append_codepoint(to_upper_cp(cps[0]), out);
            }
        } else {
            tokenizer::utf8_append_codepoint(to_lower_cp(cps[i]), out);
        }
    }
    return out;
}

std::vector<size_t> slice_indexes(size_t n, std::optional<int64_t> start,
                                  std::optional<int64_t> stop, std::optional<int64_t> step) {
    const int64_t st = step.value_or(1);
    if (st == 0) throw std::invalid_argument("slice step cannot be zero");
    const auto len = static_cast<int64_t>(n);
    auto clamp = [&](std::optional<int64_t> v, int64_t def, int64_t lo, int64_t hi) {
        if (!v) return def;
        int64_t x = *v;
        if (x < 0) x += len;
        return std::clamp(x, lo, hi);
    };
    std::vector<size_t> out;
    if (st > 0) {
        const int64_t b = clamp(start, 0, 0, len);
        const int64_t e = clamp(stop, len, 0, len);
        for (int64_t i = b; i < e; i += st) out.push_back(static_cast<size_t>(i));
    } else {
        const int64_t b = clamp(start, len - 1, -1, len - 1);
        const int64_t e = clamp(stop, -1, -1, len - 1);
        for (int64_t i = b; i > e; i += st) out.push_back(static_cast<size_t>(i));
    }
    return out;
}

}  // namespace wb::chat::jinja::py
