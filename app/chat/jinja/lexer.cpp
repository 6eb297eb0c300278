#include "chat/jinja/lexer.h"

#include <array>
#include <cstdint>

#include "chat/jinja/error.h"
#include "chat/jinja/pytext.h"
#include "tokenizer/utf8.h"

namespace wb::chat::jinja {

namespace {

bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

class Lexer {
  public:
    Lexer(std::string_view src, const std::string& name) : src_(src), name_(name) {}

    std::vector<Token> run() {
        bool line_starting = true;  // jinja2: the previous match ended a line
        while (pos_ < src_.size()) {
            const size_t open = find_open(pos_);
            if (open == std::string_view::npos) {
                emit_data(src_.substr(pos_));
                pos_ = src_.size();
                break;
            }
            const char kind = src_[open + 1];  // '{', '%' or '#'
            const char mod = open + 2 < src_.size() ? src_[open + 2] : '\0';
            std::string_view text = src_.substr(pos_, open - pos_);
            if (mod == '-') {
                // Strip all whitespace between the text and the tag.
                size_t e = text.size();
                while (e > 0) {
                    const size_t b = last_cp_start(text, e);
                    if (!py::space_at(text, b)) break;
                    e = b;
                }
                text = text.substr(0, e);
            } else if (mod != '+' && kind != '{') {
                // lstrip_blocks: only whitespace between the line start and the tag.
                const size_t nl = text.rfind('\n');
                const size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
                if ((l_pos > 0 || line_starting) && l_pos < text.size() &&
                    all_space(text.substr(l_pos))) {
                    text = text.substr(0, l_pos);
                }
            }
            emit_data(text);
            advance_to(open);
            pos_ = open + 2 + ((mod == '-' || mod == '+') ? 1 : 0);
            if (kind == '#') {
                line_starting = comment();
            } else if (kind == '{') {
                tokens_.push_back({TokenKind::VarBegin, "{{", line_});
                line_starting = tag("}}", TokenKind::VarEnd, false);
            } else {
                tokens_.push_back({TokenKind::BlockBegin, "{%", line_});
                line_starting = tag("%}", TokenKind::BlockEnd, true);
            }
        }
        tokens_.push_back({TokenKind::End, "", line_});
        return std::move(tokens_);
    }

  private:
    [[noreturn]] void fail(const std::string& msg) const {
        throw Error(Error::Kind::Syntax, name_, line_, msg);
    }

    size_t find_open(size_t from) const {
        for (size_t i = src_.find('{', from); i != std::string_view::npos;
             i = src_.find('{', i + 1)) {
            if (i + 1 < src_.size() &&
                (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
                return i;
            }
        }
        return std::string_view::npos;
    }

    static size_t last_cp_start(std::string_view s, size_t end) {
        size_t b = end - 1;
        while (b > 0 && (static_cast<uint8_t>(s[b]) & 0xC0) == 0x80) --b;
        return b;
    }

    static bool all_space(std::string_view s) {
        for (size_t i = 0; i < s.size();) {
            const size_t n = py::space_at(s, i);
            if (!n) return false;
            i += n;
        }
        return true;
    }

    void emit_data(std::string_view text) {
        if (text.empty()) return;
        // Data tokens start where the text starts; count its lines from
        // there (pos_ is the text's start in the source).
        tokens_.push_back({TokenKind::Data, std::string(text), line_});
    }

    // Moves the line counter to source offset `to`.
    void advance_to(size_t to) {
        for (size_t i = line_pos_; i < to; ++i) {
            if (src_[i] == '\n') ++line_;
        }
        line_pos_ = std::max(line_pos_, to);
    }

    // After a closing tag: "-" strips all following whitespace; for block and
    // comment tags without "+", trim_blocks drops one newline. Returns
    // whether the consumed text ended with a newline (jinja2 line_starting).
    bool after_close(bool strip, bool keep, bool trim) {
        bool ended_newline = false;
        if (strip) {
            while (pos_ < src_.size()) {
                const size_t n = py::space_at(src_, pos_);
                if (!n) break;
                ended_newline = src_[pos_] == '\n';
                pos_ += n;
            }
        } else if (trim && !keep && pos_ < src_.size() && src_[pos_] == '\n') {
            ++pos_;
            ended_newline = true;
        }
        advance_to(pos_);
        return ended_newline;
    }

    bool comment() {
        const size_t start_line = line_;
        const size_t close = src_.find("#}", pos_);
        if (close == std::string_view::npos) {
            line_ = static_cast<int>(start_line);
            fail("comment opened here is never closed with '#}'");
        }
        const bool strip = close > pos_ && src_[close - 1] == '-';
        const bool keep = close > pos_ && src_[close - 1] == '+';
        pos_ = close + 2;
        advance_to(pos_);
        return after_close(strip, keep, true);
    }

    bool tag(std::string_view close, TokenKind end_kind, bool block) {
        const int open_line = line_;
        while (true) {
            // Whitespace inside the tag.
            while (pos_ < src_.size()) {
                const size_t n = py::space_at(src_, pos_);
                if (!n) break;
                pos_ += n;
            }
            advance_to(pos_);
            if (pos_ >= src_.size()) {
                line_ = open_line;
                fail(std::string("tag opened here is never closed with '") + std::string(close) +
                     "'");
            }
            // Closing delimiter, optionally with - or + glued to it.
            for (const std::string_view mod :
                 {std::string_view("-"), std::string_view("+"), std::string_view("")}) {
                if (src_.compare(pos_, mod.size(), mod) == 0 &&
                    src_.compare(pos_ + mod.size(), close.size(), close) == 0) {
                    tokens_.push_back({end_kind, std::string(close), line_});
                    pos_ += mod.size() + close.size();
                    advance_to(pos_);
                    return after_close(mod == "-", mod == "+", block);
                }
            }
            lex_one();
        }
    }

    void lex_one() {
        const char c = src_[pos_];
        const int line = line_;
        if (is_name_start(c)) {
            const size_t b = pos_;
            while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
            tokens_.push_back({TokenKind::Name, std::string(src_.substr(b, pos_ - b)), line});
            return;
        }
        if (is_digit(c)) {
            number(line);
            return;
        }
        if (c == '\'' || c == '"') {
            string_literal(c, line);
            return;
        }
        static constexpr std::array<std::string_view, 6> kTwo = {
            "**", "//", "==", "!=", ">=", "<="};
        for (const std::string_view op : kTwo) {
            if (src_.compare(pos_, 2, op) == 0) {
                tokens_.push_back({TokenKind::Operator, std::string(op), line});
                pos_ += 2;
                return;
            }
        }
        static constexpr std::string_view kOne = "+-/*%~[](){}><=.:|,;";
        if (kOne.find(c) != std::string_view::npos) {
            tokens_.push_back({TokenKind::Operator, std::string(1, c), line});
            ++pos_;
            return;
        }
        fail(std::string("unexpected character '") + c + "' inside a tag");
    }

    void number(int line) {
        const size_t b = pos_;
        auto digits = [&] {
            while (pos_ < src_.size() && (is_digit(src_[pos_]) || src_[pos_] == '_')) ++pos_;
        };
        digits();
        bool is_float = false;
        // A fraction only when a digit follows the dot (so "x.0.1" style
        // attribute chains and ranges stay integers).
        if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
            is_float = true;
            ++pos_;
            digits();
        }
        if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
            size_t p = pos_ + 1;
            if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
            if (p < src_.size() && is_digit(src_[p])) {
                is_float = true;
                pos_ = p;
                digits();
            }
        }
        std::string text;
        for (const char ch : src_.substr(b, pos_ - b)) {
            if (ch != '_') text += ch;
        }
        tokens_.push_back({is_float ? TokenKind::Float : TokenKind::Integer, text, line});
    }

    // Python string literal with unicode-escape semantics (jinja2 lexer).
    void string_literal(char quote, int line) {
        ++pos_;
        std::string out;
        while (true) {
            if (pos_ >= src_.size()) {
                line_ = line;
                fail("string literal is never closed");
            }
            const char c = src_[pos_];
            if (c == quote) {
                ++pos_;
                break;
            }
            if (c != '\\' || pos_ + 1 >= src_.size()) {
                out += c;
                ++pos_;
                continue;
            }
            const char e = src_[pos_ + 1];
            pos_ += 2;
            switch (e) {
                case '\\':
                    out += '\\';
                    break;
                case '\'':
                    out += '\'';
                    break;
                case '"':
                    out += '"';
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case '\n':
                    break;  // line continuation
                case 'x':
                case 'u':
                case 'U': {
                    const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    uint32_t cp = 0;
                    for (size_t k = 0; k < n; ++k) {
                        const int h = pos_ + k < src_.size() ? hex_value(src_[pos_ + k]) : -1;
                        if (h < 0)
                            fail(std::string("truncated \\") + e + " escape in a string literal");
                        cp = cp * 16 + static_cast<uint32_t>(h);
                    }
                    pos_ += n;
                    if (cp > 0x10FFFF) fail("escape names a code point above U+10FFFF");
                    tokenizer::utf8_append_codepoint(cp, out);
                    break;
                }
                default:
                    if (e >= '0' && e <= '7') {
                        uint32_t cp = static_cast<uint32_t>(e - '0');
                        for (int k = 0;
                             k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7';
                             ++k) {
                            cp = cp * 8 + static_cast<uint32_t>(src_[pos_++] - '0');
                        }
                        tokenizer::utf8_append_codepoint(cp, out);
                    } else {
                        out += '\\';  // unknown escapes stay as written
                        out += e;
                    }
            }
        }
        tokens_.push_back({TokenKind::String, out, line});
        advance_to(pos_);
    }

    std::string_view src_;
    const std::string& name_;
    size_t pos_ = 0;
    size_t line_pos_ = 0;  // offset up to which lines are counted
    int line_ = 1;
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> lex(std::string_view source, const std::string& template_name) {
    return Lexer(source, template_name).run();
}

}  // namespace wb::chat::jinja
