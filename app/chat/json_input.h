#pragma once
// JSON documents that arrive from users and clients (messages, tools and
// template variables on stdin, in prompt files, in HTTP bodies), checked
// before they are parsed: nlohmann's copies and our conversion to template
// values recurse once per nesting level, so a document nested 120,000 deep
// would overflow the stack after it parsed.

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace wb::chat {

/// Deepest nesting of arrays and objects accepted in JSON input. Real chat
/// requests (messages with tool calls and JSON-schema parameters) nest
/// below 20.
inline constexpr int kMaxJsonDepth = 256;

/// JSON input that is refused. what() reads "<what>: line L, column C:
/// <problem>", e.g. "stdin: line 1, column 257: JSON nests deeper than 256
/// levels of arrays and objects".
class JsonInputError : public std::runtime_error {
  public:
    JsonInputError(const std::string& what, int line, int column, const std::string& problem);
    int line() const { return line_; }      ///< 1-based
    int column() const { return column_; }  ///< 1-based, in bytes
    /// The problem without the "<what>: line L, column C: " prefix.
    const std::string& problem() const { return problem_; }

  private:
    int line_, column_;
    std::string problem_;
};

/// Throws JsonInputError naming `what` and the line and column of the
/// first '[' or '{' that opens level max_depth + 1 (outside strings).
/// Reads the text only; says nothing about whether it is valid JSON.
void check_json_depth(std::string_view text, const std::string& what,
                      int max_depth = kMaxJsonDepth);

/// Parses one JSON document (keys in document order) after
/// check_json_depth. Throws JsonInputError naming `what`, the line and the
/// column for too deep a document and for text that is not JSON.
nlohmann::ordered_json parse_json_input(std::string_view text, const std::string& what,
                                        int max_depth = kMaxJsonDepth);

}  // namespace wb::chat
