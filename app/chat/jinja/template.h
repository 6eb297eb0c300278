#pragma once
// A small interpreter of the Jinja subset that chat templates use
// (tokenizer.chat_template in GGUF, chat_template in tokenizer_config.json),
// matching Python Jinja2 as Hugging Face transformers sets it up:
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with
// loop controls, a tojson filter calling json.dumps(ensure_ascii=False),
// raise_exception() and strftime_now() globals.
//
// Supported: text, {{ }}, {# #}, whitespace control; statements if/elif/
// else, for (loop.* variables, "if" filter, else, break/continue,
// recursive), set (names, tuples, namespace attributes, block set with
// filters), macro/call, filter blocks, with, generation; expressions with
// Jinja's precedence: literals, lists, tuples, dicts, attribute and item
// access, slicing ([::-1]), calls, filters, "is" tests, in / not in, and /
// or / not, arithmetic, ~, conditional expressions; the filters, tests,
// methods and globals listed in builtins.cpp. Not supported: include /
// import / extends / block, *args in calls, raw blocks; they are syntax
// errors naming the construct.
//
// A template is code that arrives inside a downloaded model, so parsing and
// rendering never crash, hang or exhaust memory: the source is refused
// over kMaxTemplateBytes; expressions nest at most kMaxExpressionDepth
// levels (every link of an operator, attribute, subscript, call, filter or
// test chain counts); values nest at most kMaxValueDepth levels; and
// RenderLimits bound the bytes the render's values hold at once, the
// output size, macro recursion, the number of evaluation steps and the
// wall-clock time (read on every step). Hitting one is an Error
// (Kind::Limit) naming the limit and the line being evaluated.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "chat/jinja/budget.h"
#include "chat/jinja/error.h"
#include "chat/jinja/value.h"

namespace wb::chat::jinja {

struct Stmt;

/// Largest template source parse() accepts (bytes). The largest real
/// template seen (a tool-calling one) is about 17 KB.
inline constexpr size_t kMaxTemplateBytes = 1u << 20;

/// Deepest expression tree parse() accepts: `a + b + c` is 3 levels, and so
/// is `a.b.c` or `a|f|g`.
inline constexpr int kMaxExpressionDepth = 256;

/// Bounds on one render.
struct RenderLimits {
    size_t max_bytes_held =
        64u << 20;  ///< bytes the render's strings, lists and dicts hold at once
    size_t max_output_bytes = 8u << 20;  ///< text produced, captured blocks included (bytes)
    int max_call_depth = 64;             ///< nested macro calls and recursive loops
    uint64_t max_steps = 20'000'000;     ///< statements, expressions and loop items evaluated
    std::chrono::milliseconds max_time{5'000};  ///< wall clock
};

struct RenderOptions {
    RenderLimits limits;
    /// strftime_now(format) global: the current local time formatted with
    /// strftime when empty; tests set a fixed clock.
    std::function<std::string(const std::string& format)> strftime_now;
    /// Filled with what the render used, when not null (also when it fails).
    RenderStats* stats = nullptr;
};

/// A parsed template. Immutable and cheap to copy (the tree is shared);
/// render() may run on several threads at once.
class Template {
  public:
    /// Parses `source`. `name` prefixes error messages ("<name>:<line>: ...").
    /// Throws Error (Kind::Syntax) for a template that does not parse, and
    /// Error (Kind::Limit, line 0) for a source over kMaxTemplateBytes or an
    /// expression deeper than kMaxExpressionDepth.
    static Template parse(std::string_view source, std::string name = "template");

    /// Renders with `variables` (a dict: messages, add_generation_prompt,
    /// bos_token, ...). Throws Error: Undefined, Type, Raised (the template
    /// called raise_exception; message() is its text), Security, Limit.
    std::string render(const Value& variables, const RenderOptions& options = {}) const;

    const std::string& name() const { return name_; }

  private:
    std::shared_ptr<const std::vector<std::unique_ptr<Stmt>>> body_;
    std::string name_;
};

/// Whether `name` is a filter or a test this interpreter knows.
bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);

}  // namespace wb::chat::jinja
