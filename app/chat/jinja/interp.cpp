#include "chat/jinja/interp.h"

#include <cmath>
#include <limits>
#include <new>
#include <stdexcept>

#include "chat/jinja/lexer.h"
#include "chat/jinja/parser.h"
#include "chat/jinja/pytext.h"

namespace wb::chat::jinja {

namespace {

// Loop controls travel up through nested blocks to their for statement.
bool is_int_like(const Value& v) {
    return v.is_int() || v.is_bool();
}
int64_t int_of(const Value& v) {
    return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int();
}

std::string operand_types(const char* op, const Value& a, const Value& b) {
    return std::string("unsupported operand type(s) for ") + op + ": '" + a.type_name() +
           "' and '" + b.type_name() + "'";
}

void check_overflow(bool overflow) {
    if (overflow) fail_type("integer result does not fit 64 bits");
}

// Python's printf-style "text % args" for %s %r %d %i %f %%.
std::string percent_format(const std::string& fmt, const Value& args) {
    std::vector<Value> items;
    if (args.is_list() && args.as_list().tuple) {
        items = args.as_list().items;
    } else {
        items.push_back(args);
    }
    std::string out;
    size_t next = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) fail_type("incomplete format");
        // Optional precision ".N" for %f.
        int precision = 6;
        if (fmt[i] == '.') {
            precision = 0;
            while (++i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9')
                precision = precision * 10 + (fmt[i] - '0');
            if (i >= fmt.size()) fail_type("incomplete format");
        }
        const char c = fmt[i];
        if (c == '%') {
            out += '%';
            continue;
        }
        if (next >= items.size()) fail_type("not enough arguments for format string");
        const Value& v = items[next++];
        if (c == 's') {
            out += v.str();
        } else if (c == 'r') {
            out += v.repr();
        } else if (c == 'd' || c == 'i') {
            if (!v.is_number())
                fail_type("%d format: a real number is required, not " + v.type_name());
            out += std::to_string(v.is_float() ? static_cast<int64_t>(v.as_float()) : int_of(v));
        } else if (c == 'f') {
            if (!v.is_number()) fail_type("must be real number, not " + v.type_name());
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.*f", precision, v.to_double());
            out += buf;
        } else {
            fail_type(std::string("unsupported format character '") + c + "'");
        }
    }
    if (next < items.size()) fail_type("not all arguments converted during string formatting");
    return out;
}

}  // namespace

Interp::Interp(const std::string& name, const RenderOptions& options)
    : name_(name), opts_(options) {
    add_globals(*this, globals_);
}

void Interp::fail(Error::Kind kind, int line, const std::string& msg) const {
    throw Error(kind, name_, line, msg);
}

void Interp::fail_undefined(const Value& u, int line) const {
    const Undefined& d = u.as_undefined();
    if (d.unsafe) fail(Error::Kind::Security, line, d.name);
    fail(Error::Kind::Undefined, line, d.name);
}

void Interp::step() {
    ++steps_;
    if (steps_ > opts_.limits.max_steps) {
        fail(Error::Kind::Limit, line_,
             "rendering took more than " + std::to_string(opts_.limits.max_steps) + " steps");
    }
    // Every step reads the clock (tens of nanoseconds): one slow filter
    // between two checks is bounded by the memory budget, not by luck.
    if (std::chrono::steady_clock::now() > deadline_) {
        fail(Error::Kind::Limit, line_,
             "rendering took longer than " + std::to_string(opts_.limits.max_time.count()) + " ms");
    }
}

void Interp::emit(std::string_view text) {
    produced_ += text.size();
    if (produced_ > opts_.limits.max_output_bytes) {
        fail(Error::Kind::Limit, line_,
             "rendering produced more than " + std::to_string(opts_.limits.max_output_bytes) +
                 " bytes");
    }
    out_.back() += text;
}

std::string Interp::run(const Body& body, const Value& variables) {
    deadline_ = std::chrono::steady_clock::now() + opts_.limits.max_time;
    frames_.push_back(Frame{{Scope{}}});
    if (variables.is_dict()) {
        for (const auto& [k, v] : variables.as_dict().items) {
            if (k.is_string()) frames_.back().scopes.front()[k.as_string()] = v;
        }
    }
    out_.emplace_back();
    try {
        exec(body);
    } catch (const Failure& f) {  // a limit hit by a value, outside any built-in
        fail(f.kind, line_, f.message);
    } catch (const std::bad_alloc&) {
        fail(Error::Kind::Limit, line_, "out of memory while rendering");
    } catch (const std::length_error&) {
        fail(Error::Kind::Limit, line_, "a string or list grew past its maximum size");
    }
    return std::move(out_.back());
}

std::string Interp::capture(const Body& body) {
    out_.emplace_back();
    try {
        exec(body);
    } catch (...) {
        out_.pop_back();
        throw;
    }
    std::string s = std::move(out_.back());
    out_.pop_back();
    return s;
}

Value Interp::lookup(const std::string& name) {
    const Frame& f = frames_.back();
    for (auto it = f.scopes.rbegin(); it != f.scopes.rend(); ++it) {
        const auto hit = it->find(name);
        if (hit != it->end()) return hit->second;
    }
    if (frames_.size() > 1) {  // macros see the template's top-level variables
        const Scope& root = frames_.front().scopes.front();
        const auto hit = root.find(name);
        if (hit != root.end()) return hit->second;
    }
    const auto g = globals_.find(name);
    if (g != globals_.end()) return g->second;
    return Value::undefined("'" + name + "' is undefined");
}

void Interp::set_var(const std::string& name, Value v) {
    frames_.back().scopes.back()[name] = std::move(v);
}

void Interp::assign(const Target& t, const Value& v, int line) {
    if (!t.ns_attr.empty()) {
        const Value ns = lookup(t.names[0]);
        if (!ns.is_namespace()) {
            fail(Error::Kind::Type, line,
                 "cannot assign attribute '" + t.ns_attr + "' on '" + t.names[0] +
                     "', which is not a namespace() object");
        }
        try {
            set_attribute(ns.as_namespace(), t.ns_attr, v);
        } catch (const Failure& f) {
            fail(f.kind, line, f.message);
        }
        return;
    }
    if (!t.unpack) {
        set_var(t.names[0], v);
        return;
    }
    std::vector<Value> items;
    try {
        items = iterate(v);
    } catch (const Failure& f) {
        fail(Error::Kind::Type, line, "cannot unpack " + v.type_name() + ": " + f.message);
    }
    if (items.size() != t.names.size()) {
        fail(Error::Kind::Type, line,
             "cannot unpack " + std::to_string(items.size()) + " values into " +
                 std::to_string(t.names.size()) + " names");
    }
    for (size_t i = 0; i < items.size(); ++i) set_var(t.names[i], items[i]);
}

// ---- statements ------------------------------------------------------------

Interp::Flow Interp::exec(const Body& body) {
    for (const StmtPtr& s : body) {
        const Flow f = exec(*s);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

Interp::Flow Interp::exec(const Stmt& s) {
    line_ = s.line;
    step();
    const Nesting guard(*this);
    switch (s.kind) {
        case Stmt::Kind::Text:
            emit(s.text);
            return Flow::Normal;
        case Stmt::Kind::Output: {
            const Value v = eval(*s.expr);
            if (v.is_list() && v.as_list().generator) {
                emit("<generator object>");
            } else {
                emit(v.str());
            }
            return Flow::Normal;
        }
        case Stmt::Kind::If:
            for (const auto& [cond, body] : s.branches) {
                line_ = cond->line;
                if (eval(*cond).truthy()) return exec(body);
            }
            return exec(s.else_body);
        case Stmt::Kind::For:
            return exec_for(s, eval(*s.expr), 0);
        case Stmt::Kind::Set:
            assign(s.target, eval(*s.expr), s.line);
            return Flow::Normal;
        case Stmt::Kind::SetBlock: {
            Value v(capture(s.body));
            for (const ExprPtr& f : s.filters) v = filter_value(*f, v);
            assign(s.target, v, s.line);
            return Flow::Normal;
        }
        case Stmt::Kind::Macro:
            set_var(s.text, make_macro(s));
            return Flow::Normal;
        case Stmt::Kind::CallBlock: {
            // caller() renders the block body with the call's parameters.
            const Stmt* block = &s;
            Value caller = Value::function("caller", [this, block](CallArgs& a) {
                return call_macro(*block, a, nullptr, block->line);
            });
            const Expr& c = *s.expr;
            const Value callee = eval(*c.a);
            CallArgs args = eval_args(c.args, c.line);
            args.keyword.emplace_back("caller", caller);
            emit(call(callee, args, c.line).str());
            return Flow::Normal;
        }
        case Stmt::Kind::FilterBlock: {
            Value v(capture(s.body));
            for (const ExprPtr& f : s.filters) v = filter_value(*f, v);
            emit(v.str());
            return Flow::Normal;
        }
        case Stmt::Kind::With: {
            frames_.back().scopes.emplace_back();
            Flow f = Flow::Normal;
            try {
                for (const auto& [target, expr] : s.assignments)
                    assign(target, eval(*expr), s.line);
                f = exec(s.body);
            } catch (...) {
                frames_.back().scopes.pop_back();
                throw;
            }
            frames_.back().scopes.pop_back();
            return f;
        }
        case Stmt::Kind::Break:
            return Flow::Break;
        case Stmt::Kind::Continue:
            return Flow::Continue;
    }
    return Flow::Normal;
}

Interp::Flow Interp::exec_for(const Stmt& s, const Value& iterable, int depth) {
    line_ = s.line;
    std::vector<Value> all;
    try {
        all = iterate(iterable);
    } catch (const Failure& f) {
        fail(f.kind, s.line, f.message);
    }
    // The "if" filter runs before loop.* is computed (jinja2 semantics), in
    // a scope of its own per item.
    std::vector<Value> items;
    if (s.cond) {
        for (const Value& v : all) {
            frames_.back().scopes.emplace_back();
            try {
                assign(s.target, v, s.line);
                const bool keep = eval(*s.cond).truthy();
                frames_.back().scopes.pop_back();
                if (keep) items.push_back(v);
            } catch (...) {
                frames_.back().scopes.pop_back();
                throw;
            }
        }
    } else {
        items = std::move(all);
    }
    if (items.empty()) return exec(s.else_body);  // a break there belongs to an outer loop
    const auto n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
        step();  // an empty body still costs a step per item
        auto loop = std::make_shared<Dict>();
        auto& li = loop->items;
        li.reserve(13);
        li.emplace_back(Value("index"), Value(i + 1));
        li.emplace_back(Value("index0"), Value(i));
        li.emplace_back(Value("revindex"), Value(n - i));
        li.emplace_back(Value("revindex0"), Value(n - i - 1));
        li.emplace_back(Value("first"), Value(i == 0));
        li.emplace_back(Value("last"), Value(i == n - 1));
        li.emplace_back(Value("length"), Value(n));
        li.emplace_back(Value("depth"), Value(static_cast<int64_t>(depth + 1)));
        li.emplace_back(Value("depth0"), Value(static_cast<int64_t>(depth)));
        li.emplace_back(Value("previtem"), i > 0 ? items[static_cast<size_t>(i - 1)]
                                                 : Value::undefined("there is no previous item"));
        li.emplace_back(Value("nextitem"), i + 1 < n ? items[static_cast<size_t>(i + 1)]
                                                     : Value::undefined("there is no next item"));
        li.emplace_back(Value("cycle"), Value::function("cycle", [i](CallArgs& a) {
                            if (a.positional.empty()) fail_type("no items for cycling given");
                            return a.positional[static_cast<size_t>(i) % a.positional.size()];
                        }));
        if (s.recursive) {
            const Stmt* stmt = &s;
            loop->set(Value("__call__"), Value::function("loop", [this, stmt, depth](CallArgs& a) {
                          if (a.positional.size() != 1) fail_type("loop() takes one iterable");
                          if (++call_depth_ > opts_.limits.max_call_depth) {
                              --call_depth_;
                              throw Failure{Error::Kind::Limit,
                                            "recursive loop nests deeper than " +
                                                std::to_string(opts_.limits.max_call_depth) +
                                                " levels"};
                          }
                          out_.emplace_back();
                          try {
                              exec_for(*stmt, a.positional[0], depth + 1);
                          } catch (...) {
                              out_.pop_back();
                              --call_depth_;
                              throw;
                          }
                          --call_depth_;
                          std::string text = std::move(out_.back());
                          out_.pop_back();
                          return Value(std::move(text));
                      }));
        }
        frames_.back().scopes.emplace_back();
        Flow f = Flow::Normal;
        try {
            set_var("loop", Value(std::move(loop)));
            assign(s.target, items[static_cast<size_t>(i)], s.line);
            f = exec(s.body);
        } catch (...) {
            frames_.back().scopes.pop_back();
            throw;
        }
        frames_.back().scopes.pop_back();
        if (f == Flow::Break) break;
    }
    return Flow::Normal;
}

Value Interp::make_macro(const Stmt& s) {
    const Stmt* m = &s;
    return Value::function(s.text, [this, m](CallArgs& a) {
        const Value* caller = nullptr;
        Value caller_value;
        for (auto it = a.keyword.begin(); it != a.keyword.end(); ++it) {
            if (it->first == "caller") {
                caller_value = it->second;
                caller = &caller_value;
                a.keyword.erase(it);
                break;
            }
        }
        return call_macro(*m, a, caller, a.line);
    });
}

Value Interp::call_macro(const Stmt& s, CallArgs& args, const Value* caller, int line) {
    const std::string what = s.kind == Stmt::Kind::Macro ? "macro '" + s.text + "'" : "caller()";
    if (args.positional.size() > s.params.size()) {
        fail(Error::Kind::Type, line,
             what + " takes " + std::to_string(s.params.size()) + " argument(s), got " +
                 std::to_string(args.positional.size()));
    }
    for (const auto& [k, v] : args.keyword) {
        bool ok = false;
        for (const MacroParam& p : s.params) ok = ok || p.name == k;
        if (!ok) fail(Error::Kind::Type, line, what + " has no parameter '" + k + "'");
    }
    if (++call_depth_ > opts_.limits.max_call_depth) {
        --call_depth_;
        fail(Error::Kind::Limit, line,
             "macro calls nest deeper than " + std::to_string(opts_.limits.max_call_depth) +
                 " levels (infinite recursion?)");
    }
    frames_.push_back(Frame{{Scope{}}});
    std::string text;
    try {
        for (size_t i = 0; i < s.params.size(); ++i) {
            const MacroParam& p = s.params[i];
            const Value* given = args.get(i, p.name);
            if (i >= args.positional.size()) {
                given = nullptr;
                for (const auto& [k, v] : args.keyword) {
                    if (k == p.name) given = &v;
                }
            }
            Value v;
            if (given) {
                v = *given;
            } else if (p.default_value) {
                v = eval(*p.default_value);
            } else {
                v = Value::undefined("parameter '" + p.name + "' of " + what + " was not given");
            }
            set_var(p.name, v);
        }
        if (caller) set_var("caller", *caller);
        text = capture(s.body);
    } catch (...) {
        frames_.pop_back();
        --call_depth_;
        throw;
    }
    frames_.pop_back();
    --call_depth_;
    return Value(std::move(text));
}

// ---- expressions -------------------------------------------------------------

CallArgs Interp::eval_args(const ArgList& args, int line) {
    CallArgs a;
    a.line = line;
    for (const ExprPtr& e : args.positional) a.positional.push_back(eval(*e));
    for (const auto& [k, e] : args.keyword) a.keyword.emplace_back(k, eval(*e));
    return a;
}

Value Interp::call(const Value& callee, CallArgs& args, int line) {
    if (callee.is_undefined()) fail_undefined(callee, line);
    const Value* fn = &callee;
    if (callee.is_dict()) {
        const Value* c = callee.as_dict().find(std::string_view("__call__"));
        if (c) fn = c;
    }
    if (!fn->is_function())
        fail(Error::Kind::Type, line, "'" + callee.type_name() + "' object is not callable");
    try {
        return fn->as_function().call(args);
    } catch (const Failure& f) {
        fail(f.kind, line, f.message);
    }
}

Value Interp::getattr(const Value& obj, const std::string& name) {
    if (obj.is_undefined()) fail_undefined(obj, line_);
    if (!name.empty() && name[0] == '_') {
        return Value(Undefined{
            "access to attribute '" + name + "' of '" + obj.type_name() + "' object is unsafe.",
            true});
    }
    if (obj.is_namespace()) {
        const Value* v = obj.as_namespace().attrs.find(std::string_view(name));
        return v ? *v : Value::undefined("'Namespace' object has no attribute '" + name + "'");
    }
    bool found = false;
    Value m = method_of(obj, name, found);
    if (found) return m;
    if (obj.is_dict()) {
        const Value* v = obj.as_dict().find(std::string_view(name));
        if (v) return *v;
    }
    return Value::undefined("'" + obj.type_name() + " object' has no attribute '" + name + "'");
}

Value Interp::getitem(const Value& obj, const Value& key) {
    if (obj.is_undefined()) fail_undefined(obj, line_);
    if (obj.is_dict()) {
        const Value* v = obj.as_dict().find(key);
        if (v) return *v;
    } else if (obj.is_list() && !obj.as_list().generator && is_int_like(key)) {
        const auto& items = obj.as_list().items;
        int64_t i = int_of(key);
        if (i < 0) i += static_cast<int64_t>(items.size());
        if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
    } else if (obj.is_string() && is_int_like(key)) {
        const std::vector<uint32_t> cps = py::code_points(obj.as_string());
        int64_t i = int_of(key);
        if (i < 0) i += static_cast<int64_t>(cps.size());
        if (i >= 0 && i < static_cast<int64_t>(cps.size())) {
            return Value(py::encode(cps, static_cast<size_t>(i), static_cast<size_t>(i) + 1));
        }
    } else if (obj.is_namespace() && key.is_string()) {
        const Value* v = obj.as_namespace().attrs.find(key);
        if (v) return *v;
    }
    // jinja2: a string key falls back to an attribute (e.g. d['items']).
    if (key.is_string() && !obj.is_namespace()) {
        bool found = false;
        Value m = method_of(obj, key.as_string(), found);
        if (found) return m;
    }
    return Value::undefined("'" + obj.type_name() + " object' has no element " + key.repr());
}

std::vector<Value> Interp::iterate(const Value& v) {
    if (v.is_undefined()) return {};
    if (v.is_list()) return v.as_list().items;
    if (v.is_dict()) {
        std::vector<Value> keys;
        for (const auto& [k, val] : v.as_dict().items) keys.push_back(k);
        return keys;
    }
    if (v.is_string()) {
        need_bytes(v.as_string().size() * (sizeof(uint32_t) + sizeof(Value)));
        const std::vector<uint32_t> cps = py::code_points(v.as_string());
        std::vector<Value> out;
        for (size_t i = 0; i < cps.size(); ++i) out.emplace_back(py::encode(cps, i, i + 1));
        return out;
    }
    fail_type("'" + v.type_name() + "' object is not iterable");
}

Value Interp::filter_value(const Expr& f, Value operand) {
    if (f.unknown) fail(Error::Kind::Syntax, f.line, "unknown filter '" + f.name + "'");
    CallArgs args = eval_args(f.args, f.line);
    return apply_filter(f.name, operand, args, f.line);
}

Value Interp::apply_filter(const std::string& name, const Value& v, CallArgs& args, int line) {
    try {
        return run_filter(*this, name, v, args);
    } catch (const Failure& fl) {
        fail(fl.kind, line, "filter '" + name + "': " + fl.message);
    } catch (const std::invalid_argument& e) {
        fail(Error::Kind::Type, line, "filter '" + name + "': " + e.what());
    }
}

bool Interp::apply_test(const std::string& name, const Value& v, CallArgs& args, int line) {
    try {
        return run_test(*this, name, v, args);
    } catch (const Failure& fl) {
        fail(fl.kind, line, "test '" + name + "': " + fl.message);
    } catch (const std::invalid_argument& e) {
        fail(Error::Kind::Type, line, "test '" + name + "': " + e.what());
    }
}

Value Interp::eval(const Expr& e) {
    step();
    line_ = e.line;
    const Nesting guard(*this);
    switch (e.kind) {
        case Expr::Kind::Literal:
            return e.value;
        case Expr::Kind::Name:
            return lookup(e.name);
        case Expr::Kind::List: {
            std::vector<Value> items;
            for (const ExprPtr& x : e.items) items.push_back(eval(*x));
            return Value::list(std::move(items), e.is_tuple);
        }
        case Expr::Kind::Dict: {
            auto d = std::make_shared<Dict>();
            for (const auto& [k, v] : e.pairs) {
                Value key = eval(*k);
                d->set(std::move(key), eval(*v));
            }
            return Value(std::move(d));
        }
        case Expr::Kind::GetAttr: {
            const Value obj = eval(*e.a);
            line_ = e.line;
            return getattr(obj, e.name);
        }
        case Expr::Kind::GetItem: {
            const Value obj = eval(*e.a);
            const Value key = eval(*e.b);
            line_ = e.line;
            return getitem(obj, key);
        }
        case Expr::Kind::Slice: {
            const Value obj = eval(*e.a);
            auto bound = [&](const ExprPtr& x) -> std::optional<int64_t> {
                if (!x) return std::nullopt;
                const Value v = eval(*x);
                if (v.is_none()) return std::nullopt;
                if (!is_int_like(v))
                    fail(Error::Kind::Type, e.line, "slice indices must be integers or None");
                return int_of(v);
            };
            const auto start = bound(e.b), stop = bound(e.c), step_v = bound(e.d);
            if (obj.is_undefined()) fail_undefined(obj, e.line);
            try {
                if (obj.is_string()) {
                    const std::vector<uint32_t> cps = py::code_points(obj.as_string());
                    std::string out;
                    for (const size_t i : py::slice_indexes(cps.size(), start, stop, step_v)) {
                        out += py::encode(cps, i, i + 1);
                    }
                    return Value(std::move(out));
                }
                if (obj.is_list() && !obj.as_list().generator) {
                    const auto& items = obj.as_list().items;
                    std::vector<Value> out;
                    for (const size_t i : py::slice_indexes(items.size(), start, stop, step_v)) {
                        out.push_back(items[i]);
                    }
                    return Value::list(std::move(out), obj.as_list().tuple);
                }
            } catch (const std::invalid_argument& x) {
                fail(Error::Kind::Type, e.line, x.what());
            }
            fail(Error::Kind::Type, e.line,
                 "'" + obj.type_name() + "' object is not subscriptable");
        }
        case Expr::Kind::Call: {
            const Value callee = eval(*e.a);
            CallArgs args = eval_args(e.args, e.line);
            return call(callee, args, e.line);
        }
        case Expr::Kind::Filter:
            if (e.unknown) fail(Error::Kind::Syntax, e.line, "unknown filter '" + e.name + "'");
            return filter_value(e, e.a ? eval(*e.a) : Value());
        case Expr::Kind::Test: {
            if (e.unknown) fail(Error::Kind::Syntax, e.line, "unknown test '" + e.name + "'");
            const Value v = eval(*e.a);
            CallArgs args = eval_args(e.args, e.line);
            const bool r = apply_test(e.name, v, args, e.line);
            return Value(e.negated ? !r : r);
        }
        case Expr::Kind::Not:
            return Value(!eval(*e.a).truthy());
        case Expr::Kind::Neg:
        case Expr::Kind::Pos: {
            const Value v = eval(*e.a);
            if (v.is_undefined()) fail_undefined(v, e.line);
            if (v.is_float())
                return Value(e.kind == Expr::Kind::Neg ? -v.as_float() : v.as_float());
            if (is_int_like(v)) {
                const int64_t x = int_of(v);
                if (e.kind == Expr::Kind::Pos) return Value(x);
                if (x == std::numeric_limits<int64_t>::min())
                    fail(Error::Kind::Type, e.line, "integer overflow");
                return Value(-x);
            }
            fail(Error::Kind::Type, e.line,
                 std::string("bad operand type for unary ") +
                     (e.kind == Expr::Kind::Neg ? "-" : "+") + ": '" + v.type_name() + "'");
        }
        case Expr::Kind::Binary:
            return eval_binary(e);
        case Expr::Kind::Compare:
            return eval_compare(e);
        case Expr::Kind::And: {
            Value a = eval(*e.a);
            return a.truthy() ? eval(*e.b) : a;
        }
        case Expr::Kind::Or: {
            Value a = eval(*e.a);
            return a.truthy() ? a : eval(*e.b);
        }
        case Expr::Kind::Cond:
            if (eval(*e.a).truthy()) return eval(*e.b);
            return e.c ? eval(*e.c)
                       : Value::undefined("the inline if expression on line " +
                                          std::to_string(e.line) +
                                          " evaluated to false and has no else");
    }
    return Value();
}

Value Interp::eval_binary(const Expr& e) {
    const Value a = eval(*e.a);
    const Value b = eval(*e.b);
    line_ = e.line;
    const std::string& op = e.name;
    if (op == "~") {
        try {
            const std::string x = a.str(), y = b.str();
            need_bytes(x.size() + y.size());
            return Value(x + y);
        } catch (const Failure& f) {
            fail(f.kind, e.line, "'~': " + f.message);
        }
    }
    if (a.is_undefined()) fail_undefined(a, e.line);
    if (b.is_undefined()) fail_undefined(b, e.line);
    try {
        const bool ints = is_int_like(a) && is_int_like(b);
        const bool nums = a.is_number() && b.is_number();
        int64_t r = 0;
        if (op == "+") {
            if (ints) {
                check_overflow(__builtin_add_overflow(int_of(a), int_of(b), &r));
                return Value(r);
            }
            if (nums) return Value(a.to_double() + b.to_double());
            if (a.is_string() && b.is_string()) {
                need_bytes(a.as_string().size() + b.as_string().size());
                return Value(a.as_string() + b.as_string());
            }
            if (a.is_list() && b.is_list() && !a.as_list().generator && !b.as_list().generator &&
                a.as_list().tuple == b.as_list().tuple) {
                need_bytes((a.as_list().items.size() + b.as_list().items.size()) * sizeof(Value));
                std::vector<Value> items = a.as_list().items;
                items.insert(items.end(), b.as_list().items.begin(), b.as_list().items.end());
                return Value::list(std::move(items), a.as_list().tuple);
            }
            fail_type(operand_types("+", a, b));
        }
        if (op == "-") {
            if (ints) {
                check_overflow(__builtin_sub_overflow(int_of(a), int_of(b), &r));
                return Value(r);
            }
            if (nums) return Value(a.to_double() - b.to_double());
            fail_type(operand_types("-", a, b));
        }
        if (op == "*") {
            if (ints) {
                check_overflow(__builtin_mul_overflow(int_of(a), int_of(b), &r));
                return Value(r);
            }
            if (nums) return Value(a.to_double() * b.to_double());
            const Value* seq = a.is_string() || a.is_list()   ? &a
                               : b.is_string() || b.is_list() ? &b
                                                              : nullptr;
            const Value* count = seq == &a ? &b : &a;
            if (seq && is_int_like(*count)) {
                const int64_t n = std::max<int64_t>(0, int_of(*count));
                const size_t unit = seq->is_string() ? seq->as_string().size()
                                                     : seq->as_list().items.size() * sizeof(Value);
                size_t total = 0;
                if (__builtin_mul_overflow(unit, static_cast<size_t>(n), &total))
                    total = std::numeric_limits<size_t>::max();
                if (total > opts_.limits.max_output_bytes) {
                    throw Failure{Error::Kind::Limit,
                                  "repeated sequence would exceed the output limit"};
                }
                need_bytes(total);
                if (seq->is_string()) {
                    // Doubling: log2(n) appends, not n ('x' * 4000000).
                    const std::string& unit_text = seq->as_string();
                    std::string s;
                    s.reserve(total);
                    if (n > 0) s = unit_text;
                    while (s.size() * 2 <= total && !s.empty()) s += s;
                    // What is left is a whole number of units: a prefix of s.
                    if (s.size() < total) s.append(s, 0, total - s.size());
                    return Value(std::move(s));
                }
                std::vector<Value> items;
                for (int64_t i = 0; i < n; ++i) {
                    items.insert(items.end(), seq->as_list().items.begin(),
                                 seq->as_list().items.end());
                }
                return Value::list(std::move(items), seq->as_list().tuple);
            }
            fail_type(operand_types("*", a, b));
        }
        if (op == "/") {
            if (!nums) fail_type(operand_types("/", a, b));
            if (b.to_double() == 0.0) fail_type("division by zero");
            return Value(a.to_double() / b.to_double());
        }
        if (op == "//" || op == "%") {
            if (op == "%" && a.is_string()) return Value(percent_format(a.as_string(), b));
            if (!nums) fail_type(operand_types(op.c_str(), a, b));
            if (ints) {
                const int64_t x = int_of(a), y = int_of(b);
                if (y == 0) fail_type("integer division or modulo by zero");
                if (x == std::numeric_limits<int64_t>::min() && y == -1)
                    fail_type("integer overflow");
                int64_t q = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) {
                    --q;
                    m += y;
                }
                return Value(op == "//" ? q : m);
            }
            const double x = a.to_double(), y = b.to_double();
            if (y == 0.0) fail_type("float division by zero");
            const double q = std::floor(x / y);
            double m = std::fmod(x, y);
            if (m != 0.0 && ((m < 0) != (y < 0))) m += y;
            return Value(op == "//" ? q : m);
        }
        if (op == "**") {
            if (ints && int_of(b) >= 0) {
                int64_t base = int_of(a), exp = int_of(b), acc = 1;
                while (exp > 0) {
                    if (exp & 1) check_overflow(__builtin_mul_overflow(acc, base, &acc));
                    exp >>= 1;
                    if (exp) check_overflow(__builtin_mul_overflow(base, base, &base));
                }
                return Value(acc);
            }
            if (nums) return Value(std::pow(a.to_double(), b.to_double()));
            fail_type(operand_types("** or pow()", a, b));
        }
    } catch (const Failure& f) {
        fail(f.kind, e.line, f.message);
    }
    fail(Error::Kind::Syntax, e.line, "unknown operator '" + op + "'");
}

Value Interp::eval_compare(const Expr& e) {
    Value left = eval(*e.items[0]);
    for (size_t i = 0; i < e.ops.size(); ++i) {
        const Value right = eval(*e.items[i + 1]);
        line_ = e.line;
        const std::string& op = e.ops[i];
        bool r = false;
        try {
            if (op == "==") {
                r = equals(left, right);
            } else if (op == "!=") {
                r = !equals(left, right);
            } else if (op == "in" || op == "not in") {
                if (right.is_string()) {
                    if (!left.is_string()) {
                        fail_type("'in <string>' requires string as left operand, not " +
                                  left.type_name());
                    }
                    r = right.as_string().find(left.as_string()) != std::string::npos;
                } else if (right.is_dict()) {
                    r = right.as_dict().find(left) != nullptr;
                } else if (right.is_list() || right.is_undefined()) {
                    for (const Value& x : iterate(right)) r = r || equals(x, left);
                } else {
                    fail_type("argument of type '" + right.type_name() + "' is not iterable");
                }
                if (op == "not in") r = !r;
            } else {
                if (left.is_undefined()) fail_undefined(left, e.line);
                if (right.is_undefined()) fail_undefined(right, e.line);
                try {
                    if (op == "<") r = less_than(left, right);
                    if (op == ">") r = less_than(right, left);
                    if (op == "<=") r = less_than(left, right) || equals(left, right);
                    if (op == ">=") r = less_than(right, left) || equals(left, right);
                } catch (const std::invalid_argument& x) {
                    fail_type(std::string(x.what()).replace(1, 1, op));
                }
            }
        } catch (const Failure& f) {
            fail(f.kind, e.line, f.message);
        }
        if (!r) return Value(false);
        left = right;
    }
    return Value(true);
}

// ---- Template ------------------------------------------------------------------

Template Template::parse(std::string_view source, std::string name) {
    Template t;
    t.name_ = std::move(name);
    if (source.size() > kMaxTemplateBytes) {
        throw Error(Error::Kind::Limit, t.name_, 0,
                    "the template is " + std::to_string(source.size()) + " bytes, more than the " +
                        std::to_string(kMaxTemplateBytes >> 20) +
                        " MiB a chat template may be (the largest real ones are about 17 KB)");
    }
    const std::vector<Token> tokens = lex(source, t.name_);
    KnownNames known{[](std::string_view n) { return has_filter(n); },
                     [](std::string_view n) { return has_test(n); }};
    t.body_ = std::make_shared<const Body>(jinja::parse(tokens, t.name_, known));
    return t;
}

std::string Template::render(const Value& variables, const RenderOptions& options) const {
    if (!body_) throw Error(Error::Kind::Syntax, name_, 0, "template was never parsed");
    // Declared before the interpreter so that every value the render made
    // (scopes, globals) is freed while its budget is still current.
    RenderBudget budget(options.limits.max_bytes_held,
                        std::chrono::steady_clock::now() + options.limits.max_time,
                        options.limits.max_time.count());
    struct Report {
        const RenderBudget& b;
        RenderStats* out;
        const uint64_t* steps;
        ~Report() {
            if (out) *out = RenderStats{b.peak(), b.made(), *steps};
        }
    };
    Interp in(name_, options);
    const Report report{budget, options.stats, &in.steps()};
    return in.run(*body_, variables);
}

bool is_known_filter(std::string_view name) {
    return has_filter(name);
}
bool is_known_test(std::string_view name) {
    return has_test(name);
}

}  // namespace wb::chat::jinja
