#pragma once
// The tree-walking evaluator behind Template::render (internal to the
// template engine), and the built-in filters, tests, methods and globals
// it calls.

#include <chrono>
#include <ctime>
#include <string>
#include <unordered_map>
#include <vector>

#include "chat/jinja/ast.h"
#include "chat/jinja/error.h"
#include "chat/jinja/template.h"
#include "chat/jinja/value.h"

namespace wb::chat::jinja {

class Interp {
  public:
    Interp(const std::string& name, const RenderOptions& options);

    std::string run(const Body& body, const Value& variables);

    // Used by the built-ins.
    Value call(const Value& callee, CallArgs& args, int line);
    bool apply_test(const std::string& name, const Value& v, CallArgs& args, int line);
    Value apply_filter(const std::string& name, const Value& v, CallArgs& args, int line);
    /// jinja2 Environment.getattr / getitem (sandboxed).
    Value getattr(const Value& obj, const std::string& name);
    Value getitem(const Value& obj, const Value& key);
    /// Items of an iterable (list, tuple, generator, dict keys, string
    /// characters, undefined: none). Throws Failure for others.
    std::vector<Value> iterate(const Value& v);
    /// Counts one unit of work; throws Error(Limit) past the step or time limit.
    void step();
    const RenderOptions& options() const { return opts_; }
    /// Steps evaluated so far.
    const uint64_t& steps() const { return steps_; }

  private:
    enum class Flow { Normal, Break, Continue };

    // Bounds the C++ recursion of exec/eval (macros calling macros inside
    // nested blocks), whatever the limits in RenderOptions say.
    static constexpr int kMaxNesting = 1500;
    struct Nesting {
        Interp& in;
        explicit Nesting(Interp& i) : in(i) {
            if (++in.nesting_ > kMaxNesting) {
                --in.nesting_;
                in.fail(Error::Kind::Limit, in.line_,
                        "template evaluation nests too deeply (infinite recursion?)");
            }
        }
        ~Nesting() { --in.nesting_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;
    };
    using Scope = std::unordered_map<std::string, Value>;
    struct Frame {
        std::vector<Scope> scopes;
    };

    [[noreturn]] void fail(Error::Kind kind, int line, const std::string& msg) const;
    [[noreturn]] void fail_undefined(const Value& u, int line) const;

    Flow exec(const Body& body);
    Flow exec(const Stmt& s);
    Flow exec_for(const Stmt& s, const Value& iterable, int depth);
    Value eval(const Expr& e);
    Value eval_binary(const Expr& e);
    Value eval_compare(const Expr& e);
    CallArgs eval_args(const ArgList& args, int line);
    Value filter_value(const Expr& f, Value operand);
    void assign(const Target& t, const Value& v, int line);
    void set_var(const std::string& name, Value v);
    Value lookup(const std::string& name);
    Value make_macro(const Stmt& s);
    Value call_macro(const Stmt& s, CallArgs& args, const Value* caller, int line);
    std::string capture(const Body& body);
    void emit(std::string_view text);

    const std::string& name_;
    const RenderOptions& opts_;
    std::unordered_map<std::string, Value> globals_;
    std::vector<Frame> frames_;
    std::vector<std::string> out_;  // output buffers; back() receives text
    size_t produced_ = 0;
    uint64_t steps_ = 0;
    int call_depth_ = 0;
    int nesting_ = 0;
    int line_ = 0;  // line being evaluated, for limit errors
    std::chrono::steady_clock::time_point deadline_;
};

// Built-ins (builtins.cpp).

/// Filter `name` applied to `v`; nullptr-equivalent false when unknown.
bool has_filter(std::string_view name);
Value run_filter(Interp& in, const std::string& name, const Value& v, CallArgs& args);
bool has_test(std::string_view name);
bool run_test(Interp& in, const std::string& name, const Value& v, CallArgs& args);
/// Bound method `name` of a str, list or dict value; Undefined (unsafe for
/// mutating methods) when there is none.
Value method_of(const Value& obj, const std::string& name, bool& found);
/// strftime(format, tm) for the strftime_now global ("" if over 511 bytes).
std::string format_time(const std::string& format, const std::tm& tm);
/// raise_exception, strftime_now, range, namespace, dict, joiner, cycler.
void add_globals(Interp& in, std::unordered_map<std::string, Value>& globals);

}  // namespace wb::chat::jinja
