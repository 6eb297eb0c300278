#include "chat/json_input.h"

namespace wb::chat {

namespace {

// Line and column (1-based) of byte `offset` of `text`.
std::pair<int, int> position(std::string_view text, size_t offset) {
    int line = 1, column = 1;
    for (size_t i = 0; i < offset && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

}  // namespace

JsonInputError::JsonInputError(const std::string& what, int line, int column,
                               const std::string& problem)
    : std::runtime_error(what + ": line " + std::to_string(line) + ", column " +
                         std::to_string(column) + ": " + problem),
      line_(line),
      column_(column),
      problem_(problem) {}

void check_json_depth(std::string_view text, const std::string& what, int max_depth) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) {
                const auto [line, column] = position(text, i);
                throw JsonInputError(what, line, column,
                                     "JSON nests deeper than " + std::to_string(max_depth) +
                                         " levels of arrays and objects");
            }
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

nlohmann::ordered_json parse_json_input(std::string_view text, const std::string& what,
                                        int max_depth) {
    check_json_depth(text, what, max_depth);
    try {
        return nlohmann::ordered_json::parse(text);
    } catch (const nlohmann::ordered_json::parse_error& e) {
        // e.byte is 1-based: the byte where parsing stopped.
        const auto [line, column] = position(text, e.byte > 0 ? e.byte - 1 : 0);
        std::string msg = e.what();
        const size_t colon = msg.find(": ");  // drop "[json.exception...] parse error at ...: "
        if (colon != std::string::npos) msg = msg.substr(colon + 2);
        throw JsonInputError(what, line, column, "not valid JSON (" + msg + ")");
    }
}

}  // namespace wb::chat
