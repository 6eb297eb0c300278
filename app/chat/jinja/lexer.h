#pragma once
// Jinja lexer: template text -> tokens, with Jinja2's whitespace control as
// Hugging Face transformers configures it (trim_blocks and lstrip_blocks on;
// jinja2/lexer.py): "{%-"/"-%}" (and the {{ }} and {# #} forms) strip all
// whitespace on that side; a block or comment tag preceded on its line only
// by spaces or tabs loses them (lstrip_blocks, not for "{%+" or "{{"); the
// first newline after "%}" or "#}" is dropped (trim_blocks, not after "+%}").

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wb::chat::jinja {

enum class TokenKind : uint8_t {
    Data,        ///< template text outside tags
    VarBegin,    ///< {{
    VarEnd,      ///< }}
    BlockBegin,  ///< {%
    BlockEnd,    ///< %}
    Name,        ///< identifier or keyword (if, for, and, not, true, ...)
    String,      ///< string literal, already unescaped
    Integer,
    Float,
    Operator,  ///< + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : | ;
    End,       ///< end of input
};

struct Token {
    TokenKind kind = TokenKind::End;
    std::string text;  ///< Data text, name, unescaped string, number digits or operator
    int line = 1;      ///< 1-based line where the token starts
};

/// Splits `source` into tokens. Comments are dropped. Throws jinja::Error
/// (see template.h) naming the line for an unclosed tag, comment or string,
/// or a character that starts no token.
std::vector<Token> lex(std::string_view source, const std::string& template_name);

}  // namespace wb::chat::jinja
