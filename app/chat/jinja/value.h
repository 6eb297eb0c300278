#pragma once
// Values of the Jinja subset that chat templates use, with Python's
// semantics where templates can see them: truthiness, ==, <, str() and
// repr() text, json.dumps output. Jinja2 runs on Python objects, so matching
// its output means matching Python's rules (docs.python.org, "Built-in
// Types"; jinja2 runtime.Undefined).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "chat/jinja/budget.h"

namespace wb::chat::jinja {

class Value;
struct CallArgs;

/// A missing variable, attribute or item (jinja2 Undefined): prints as "",
/// is false, iterates as empty, has length 0; using it any other way (an
/// attribute of it, calling it, arithmetic) is an error naming `name`.
/// `unsafe` marks an attribute the sandbox forbids (list.append, ...): using
/// it is an error saying so.
struct Undefined {
    std::string name;
    bool unsafe = false;
};

/// A Python list or tuple. `generator` marks the lazy results of
/// select/selectattr/map/...: always true, no length, no indexing, as in
/// Python. Filled before it is wrapped in a Value, which fixes its depth
/// and counts its slots against the render's budget.
struct List {
    std::vector<Value> items;
    bool tuple = false;
    bool generator = false;
    int depth = 1;  ///< 1 + the deepest item's depth (set when wrapped)
    Held held;      ///< slots counted against the render's budget
    bool sealed = false;

    List() = default;
    /// A copy is counted and its depth fixed again when it is wrapped.
    List(const List& o);
    List& operator=(const List&) = delete;
    /// Frees nested lists and dicts without recursion (a hostile template
    /// can nest values further than the stack reaches).
    ~List();
};

/// A Python dict: insertion-ordered key/value pairs (keys are strings,
/// numbers, booleans or none; found by Python equality).
struct Dict {
    std::vector<std::pair<Value, Value>> items;
    int depth = 1;  ///< 1 + the deepest value's depth (set when wrapped)
    Held held;
    bool sealed = false;

    Dict() = default;
    /// A copy is counted and its depth fixed again when it is wrapped.
    Dict(const Dict& o);
    Dict& operator=(const Dict& o);
    /// Frees nested values without recursion, as ~List.
    ~Dict();

    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    /// Replaces the value of an existing key or appends the pair.
    void set(Value key, Value value);
};

/// The bytes of a string value, counted against the render's budget while
/// they live (copies count again; a move passes the count on).
class Text {
  public:
    Text() = default;
    explicit Text(std::string s) : s_(std::move(s)) { held_.take(s_.size()); }
    Text(const Text& o) : s_(o.s_) { held_.take(s_.size()); }
    Text(Text&& o) noexcept : s_(std::move(o.s_)), held_(std::move(o.held_)) { o.s_.clear(); }
    Text& operator=(const Text& o) {
        if (this != &o) *this = Text(o);
        return *this;
    }
    Text& operator=(Text&& o) noexcept {
        s_ = std::move(o.s_);
        o.s_.clear();
        held_ = std::move(o.held_);
        return *this;
    }
    ~Text() = default;

    const std::string& str() const { return s_; }

  private:
    std::string s_;
    Held held_;
};

/// jinja2's namespace(): the one mutable object templates have
/// ({% set ns.x = ... %}); shared by reference.
struct Namespace {
    Dict attrs;
    int depth = 1;  ///< 1 + the deepest attribute set so far
};

/// {% set ns.name = v %}. Throws Failure (Kind::Limit) when `v` nests
/// kMaxValueDepth levels already.
void set_attribute(Namespace& ns, const std::string& name, Value v);

/// A callable: a global function, a macro, or a bound method of a value.
struct Function {
    std::string name;
    std::function<Value(CallArgs&)> call;
};

/// Arguments of one call: positional, then keyword in call order.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
    int line = 0;  ///< template line of the call, for messages

    /// Positional `i` or keyword `name`, else nullopt.
    const Value* get(size_t i, std::string_view name) const;
};

/// One value. Copies share lists, dicts, namespaces and functions (Python
/// reference semantics); templates cannot mutate lists or dicts (the
/// sandbox forbids it), so sharing is only visible through namespaces.
class Value {
  public:
    using Storage =
        std::variant<Undefined, std::nullptr_t, bool, int64_t, double, Text, std::shared_ptr<List>,
                     std::shared_ptr<Dict>, std::shared_ptr<Namespace>, std::shared_ptr<Function>>;

    Value() : v_(Undefined{}) {}
    Value(std::nullptr_t) : v_(nullptr) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(static_cast<int64_t>(i)) {}
    Value(int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    // Strings, lists and dicts made while a render runs count against its
    // RenderBudget; these constructors throw Failure (Kind::Limit) when it
    // is spent or when a list or dict would nest deeper than kMaxValueDepth.
    Value(std::string s) : v_(Text(std::move(s))) {}
    Value(const char* s) : v_(Text(std::string(s))) {}
    Value(std::string_view s) : v_(Text(std::string(s))) {}
    Value(Undefined u) : v_(std::move(u)) {}
    Value(std::shared_ptr<List> l);
    Value(std::shared_ptr<Dict> d);
    Value(std::shared_ptr<Namespace> n) : v_(std::move(n)) {}
    Value(std::shared_ptr<Function> f) : v_(std::move(f)) {}

    static Value undefined(std::string name) { return Value(Undefined{std::move(name), false}); }
    static Value list(std::vector<Value> items = {}, bool tuple = false);
    static Value generator(std::vector<Value> items);
    static Value dict(std::vector<std::pair<Value, Value>> items = {});
    static Value function(std::string name, std::function<Value(CallArgs&)> call);

    bool is_undefined() const { return std::holds_alternative<Undefined>(v_); }
    bool is_none() const { return std::holds_alternative<std::nullptr_t>(v_); }
    bool is_bool() const { return std::holds_alternative<bool>(v_); }
    bool is_int() const { return std::holds_alternative<int64_t>(v_); }
    bool is_float() const { return std::holds_alternative<double>(v_); }
    /// int, float or bool (Python's numbers.Number includes bool).
    bool is_number() const { return is_int() || is_float() || is_bool(); }
    bool is_string() const { return std::holds_alternative<Text>(v_); }
    bool is_list() const { return std::holds_alternative<std::shared_ptr<List>>(v_); }
    bool is_dict() const { return std::holds_alternative<std::shared_ptr<Dict>>(v_); }
    bool is_namespace() const { return std::holds_alternative<std::shared_ptr<Namespace>>(v_); }
    bool is_function() const { return std::holds_alternative<std::shared_ptr<Function>>(v_); }

    const Undefined& as_undefined() const { return std::get<Undefined>(v_); }
    bool as_bool() const { return std::get<bool>(v_); }
    int64_t as_int() const { return std::get<int64_t>(v_); }
    double as_float() const { return std::get<double>(v_); }
    const std::string& as_string() const { return std::get<Text>(v_).str(); }
    const List& as_list() const { return *std::get<std::shared_ptr<List>>(v_); }
    const Dict& as_dict() const { return *std::get<std::shared_ptr<Dict>>(v_); }
    Namespace& as_namespace() const { return *std::get<std::shared_ptr<Namespace>>(v_); }
    const Function& as_function() const { return *std::get<std::shared_ptr<Function>>(v_); }
    /// The number as a double (bool 0/1, int, float); the value must be a number.
    double to_double() const;

    /// Python type name for messages: "str", "int", "list", "dict",
    /// "NoneType", "Undefined", "generator", ...
    std::string type_name() const;

    /// Nesting depth: 0 for scalars and functions, a list's or dict's
    /// depth, 1 + the deepest attribute for a namespace.
    int depth() const;

    /// Python truthiness: "", 0, 0.0, None, empty list/dict, undefined are false.
    bool truthy() const;
    /// Python str(): strings as they are, None as "None", True as "True",
    /// floats as repr(), lists and dicts as their repr(), undefined as "".
    std::string str() const;
    /// Python repr(): strings quoted and escaped ('a', "it's"); a namespace
    /// inside itself prints as <Namespace {...}> (Python's reprlib rule).
    /// Inside a render, throws Failure (Kind::Limit) when the text would not
    /// fit the render's memory budget or its time runs out.
    std::string repr() const;

    /// The storage, for visitors.
    const Storage& storage() const { return v_; }

  private:
    Storage v_;
};

/// Python ==: numbers compare by value (True == 1, 1 == 1.0), strings by
/// bytes, lists and dicts element-wise (the same object equals itself, as
/// in CPython); undefined equals only undefined; namespaces and functions
/// by identity. Inside a render, throws Failure (Kind::Limit) when its
/// time runs out.
bool equals(const Value& a, const Value& b);

/// Python <: numbers, strings (code point order, which UTF-8 byte order
/// keeps), lists lexicographically. Throws std::invalid_argument("'<' not
/// supported between instances of 'str' and 'int'") otherwise.
bool less_than(const Value& a, const Value& b);

/// Python json.dumps(v, ensure_ascii, indent, separators, sort_keys), as
/// transformers' tojson filter calls it: separators default to (", ", ": ")
/// without indent and (",", ": ") with one; `indent` < 0 means None.
/// Throws std::invalid_argument("Object of type Undefined is not JSON
/// serializable") for values JSON cannot hold.
std::string to_json(const Value& v, bool ensure_ascii, int indent,
                    std::optional<std::pair<std::string, std::string>> separators, bool sort_keys);

/// Python repr() of a str.
std::string python_repr_string(std::string_view s);
/// Python repr() of a float: shortest text that reads back the same double,
/// exponent form below 1e-4 and from 1e16 ("1e-05", "1e+16"), "inf", "nan".
std::string python_repr_float(double d);

}  // namespace wb::chat::jinja
