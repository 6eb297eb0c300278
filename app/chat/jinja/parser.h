#pragma once
// Jinja parser: tokens -> syntax tree (internal to the template engine),
// following the grammar and operator precedence of jinja2/parser.py.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/lexer.h"

namespace wb::chat::jinja {

/// Names the parser accepts after "|" and after "is"; an unknown one is a
/// syntax error at its line, as jinja2 reports it at compile time.
struct KnownNames {
    std::function<bool(std::string_view)> filter;
    std::function<bool(std::string_view)> test;
};

/// Parses the tokens of one template. Supported statements: if/elif/else,
/// for (with "if" filter, else, recursive), set (incl. tuple unpacking,
/// namespace attributes and block set with filters), macro, call, filter,
/// with, break, continue, generation. Throws jinja::Error (Kind::Syntax)
/// naming the construct and line: an unknown tag ("include" is not
/// supported), a missing end tag (naming the line of the opening tag), an
/// unknown filter or test, an unexpected token. Nesting deeper than 256
/// levels is refused so that no input can exhaust the stack.
Body parse(const std::vector<Token>& tokens, const std::string& template_name,
           const KnownNames& known);

}  // namespace wb::chat::jinja
