#pragma once
// The one error type of the template engine.

#include <stdexcept>
#include <string>

namespace wb::chat::jinja {

/// A template that cannot be parsed or rendered. what() reads
/// "<template name>:<line>: <message>", e.g. "chat_template:12: unknown
/// filter 'from_json'" or "chat_template:3: raise_exception: System role not
/// supported". `line` is 0 when no line applies (limits hit while
/// rendering are reported at the line being rendered).
class Error : public std::runtime_error {
  public:
    enum class Kind {
        Syntax,     ///< the template does not parse (or uses an unknown filter/test)
        Undefined,  ///< a missing variable or attribute used as a value
        Type,       ///< an operation on the wrong kind of value
        Raised,     ///< the template called raise_exception(message)
        Security,   ///< a mutating method the sandbox forbids (list.append, ...)
        Limit,      ///< recursion, output, step or time limit reached
    };
    Error(Kind kind, const std::string& template_name, int line, const std::string& message)
        : std::runtime_error(template_name + ":" + std::to_string(line) + ": " + message),
          kind_(kind),
          line_(line),
          message_(message) {}
    Kind kind() const { return kind_; }
    int line() const { return line_; }
    /// The message without the "<name>:<line>: " prefix.
    const std::string& message() const { return message_; }

  private:
    Kind kind_;
    int line_;
    std::string message_;
};

/// Thrown below the evaluator (built-ins, values, the render budget), which
/// turns it into an Error with the template name and the line it was
/// evaluating.
struct Failure {
    Error::Kind kind;
    std::string message;
};

/// Throws Failure{Kind::Type, message}.
[[noreturn]] inline void fail_type(std::string message) {
    throw Failure{Error::Kind::Type, std::move(message)};
}

}  // namespace wb::chat::jinja
