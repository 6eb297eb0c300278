#include "chat/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "chat/jinja/error.h"

namespace wb::chat::jinja {

namespace {

// Values whose destruction is being finished without recursion (see
// dispose); null when no disposal runs on this thread.
thread_local std::vector<Value>* t_pending = nullptr;

void bury(std::vector<Value>& pending, Value& v) {
    if (v.is_list() || v.is_dict() || v.is_namespace()) pending.push_back(std::move(v));
}

// Frees the containers among `items`/`pairs` one at a time from a work
// list instead of through nested destructors, so a list nested 200,000
// deep is freed in constant stack. A nested call (a container freed while
// the list is drained) only adds to the list.
void dispose(std::vector<Value>* items, std::vector<std::pair<Value, Value>>* pairs) noexcept {
    const bool outermost = t_pending == nullptr;
    std::vector<Value> local;
    std::vector<Value>& pending = outermost ? local : *t_pending;
    try {
        if (items) {
            for (Value& v : *items) bury(pending, v);
        }
        if (pairs) {
            for (auto& [k, v] : *pairs) {
                bury(pending, k);
                bury(pending, v);
            }
        }
    } catch (...) {
        // Out of memory for the work list: what was not moved is freed by
        // the ordinary destructors (bounded by kMaxValueDepth in practice).
        if (!outermost) return;
    }
    if (!outermost) return;
    t_pending = &pending;
    while (!pending.empty()) {
        Value v = std::move(pending.back());
        pending.pop_back();
    }  // v's children, if this was its last reference, were added to `pending`
    t_pending = nullptr;
}

[[noreturn]] void too_deep(const char* what) {
    throw Failure{Error::Kind::Limit, std::string(what) + " nests deeper than " +
                                          std::to_string(kMaxValueDepth) +
                                          " levels of lists, dicts and namespaces"};
}

}  // namespace

List::List(const List& o) : items(o.items), tuple(o.tuple), generator(o.generator) {}

Dict::Dict(const Dict& o) : items(o.items) {}

Dict& Dict::operator=(const Dict& o) {
    items = o.items;
    return *this;
}

List::~List() {
    dispose(&items, nullptr);
}

Dict::~Dict() {
    dispose(nullptr, &items);
}

Value::Value(std::shared_ptr<List> l) : v_(std::move(l)) {
    List& x = *std::get<std::shared_ptr<List>>(v_);
    if (x.sealed) return;
    int d = 0;
    for (const Value& i : x.items) d = std::max(d, i.depth());
    if (d + 1 > kMaxValueDepth) too_deep("a list");
    x.depth = d + 1;
    x.held.take(sizeof(List) + x.items.size() * sizeof(Value));
    x.sealed = true;
}

Value::Value(std::shared_ptr<Dict> dict) : v_(std::move(dict)) {
    Dict& x = *std::get<std::shared_ptr<Dict>>(v_);
    if (x.sealed) return;
    int d = 0;
    for (const auto& [k, v] : x.items) d = std::max({d, k.depth(), v.depth()});
    if (d + 1 > kMaxValueDepth) too_deep("a dict");
    x.depth = d + 1;
    x.held.take(sizeof(Dict) + x.items.size() * 2 * sizeof(Value));
    x.sealed = true;
}

int Value::depth() const {
    if (is_list()) return as_list().depth;
    if (is_dict()) return as_dict().depth;
    if (is_namespace()) return as_namespace().depth;
    return 0;
}

void set_attribute(Namespace& ns, const std::string& name, Value v) {
    if (v.depth() + 1 > kMaxValueDepth) too_deep("a namespace");
    ns.depth = std::max(ns.depth, v.depth() + 1);
    ns.attrs.set(Value(name), std::move(v));
}

const Value* Dict::find(const Value& key) const {
    for (const auto& [k, v] : items) {
        if (equals(k, key)) return &v;
    }
    return nullptr;
}

const Value* Dict::find(std::string_view key) const {
    for (const auto& [k, v] : items) {
        if (k.is_string() && k.as_string() == key) return &v;
    }
    return nullptr;
}

void Dict::set(Value key, Value value) {
    for (auto& [k, v] : items) {
        if (equals(k, key)) {
            v = std::move(value);
            return;
        }
    }
    items.emplace_back(std::move(key), std::move(value));
}

const Value* CallArgs::get(size_t i, std::string_view name) const {
    if (i < positional.size()) return &positional[i];
    for (const auto& [k, v] : keyword) {
        if (k == name) return &v;
    }
    return nullptr;
}

Value Value::list(std::vector<Value> items, bool tuple) {
    auto l = std::make_shared<List>();
    l->items = std::move(items);
    l->tuple = tuple;
    return Value(std::move(l));
}

Value Value::generator(std::vector<Value> items) {
    auto l = std::make_shared<List>();
    l->items = std::move(items);
    l->generator = true;
    return Value(std::move(l));
}

Value Value::dict(std::vector<std::pair<Value, Value>> items) {
    auto d = std::make_shared<Dict>();
    d->items = std::move(items);
    return Value(std::move(d));
}

Value Value::function(std::string name, std::function<Value(CallArgs&)> call) {
    auto f = std::make_shared<Function>();
    f->name = std::move(name);
    f->call = std::move(call);
    return Value(std::move(f));
}

double Value::to_double() const {
    if (is_bool()) return as_bool() ? 1.0 : 0.0;
    if (is_int()) return static_cast<double>(as_int());
    return as_float();
}

std::string Value::type_name() const {
    if (is_undefined()) return "Undefined";
    if (is_none()) return "NoneType";
    if (is_bool()) return "bool";
    if (is_int()) return "int";
    if (is_float()) return "float";
    if (is_string()) return "str";
    if (is_list()) {
        const List& l = as_list();
        return l.generator ? "generator" : l.tuple ? "tuple" : "list";
    }
    if (is_dict()) return "dict";
    if (is_namespace()) return "Namespace";
    return "function";
}

bool Value::truthy() const {
    if (is_undefined() || is_none()) return false;
    if (is_bool()) return as_bool();
    if (is_int()) return as_int() != 0;
    if (is_float()) return as_float() != 0.0;
    if (is_string()) return !as_string().empty();
    if (is_list()) return as_list().generator || !as_list().items.empty();
    if (is_dict()) return !as_dict().items.empty();
    return true;
}

namespace {

// Code point at s[i] (well-formed UTF-8 assumed; a stray byte reads as itself).
uint32_t next_cp(std::string_view s, size_t& i) {
    const auto b = static_cast<uint8_t>(s[i]);
    size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    if (b >= 0x80 && b < 0xC0) n = 1;
    if (i + n > s.size()) n = 1;
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
    i += n;
    return cp;
}

// Characters Python's str.isprintable() rejects among those above ASCII:
// C1 controls, separators other than space, format characters, private use
// and noncharacters that templates can plausibly meet.
bool python_printable(uint32_t cp) {
    if (cp < 0x20 || cp == 0x7F) return false;
    if (cp < 0x7F) return true;
    if (cp <= 0xA0 || cp == 0xAD) return false;
    if (cp == 0x1680 || cp == 0x180E || (cp >= 0x2000 && cp <= 0x200F)) return false;
    if ((cp >= 0x2028 && cp <= 0x202F) || (cp >= 0x205F && cp <= 0x206F)) return false;
    if (cp == 0x3000 || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB)) return false;
    if ((cp >= 0xD800 && cp <= 0xF8FF) || cp >= 0xF0000) return false;  // surrogates, private use
    return true;
}

void append_hex_escape(uint32_t cp, std::string& out) {
    char buf[16];
    if (cp < 0x100) {
        std::snprintf(buf, sizeof buf, "\\x%02x", cp);
    } else if (cp < 0x10000) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    } else {
        std::snprintf(buf, sizeof buf, "\\U%08x", cp);
    }
    out += buf;
}

void append_json_string(std::string_view s, bool ensure_ascii, std::string& out) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const uint32_t cp = next_cp(s, i);
        char buf[16];
        switch (cp) {
            case '"':
                out += "\\\"";
                continue;
            case '\\':
                out += "\\\\";
                continue;
            case '\n':
                out += "\\n";
                continue;
            case '\r':
                out += "\\r";
                continue;
            case '\t':
                out += "\\t";
                continue;
            case '\b':
                out += "\\b";
                continue;
            case '\f':
                out += "\\f";
                continue;
            default:
                break;
        }
        if (cp < 0x20) {
            std::snprintf(buf, sizeof buf, "\\u%04x", cp);
            out += buf;
        } else if (ensure_ascii && cp >= 0x80) {
            if (cp >= 0x10000) {
                const uint32_t v = cp - 0x10000;
                std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10),
                              0xDC00 + (v & 0x3FF));
            } else {
                std::snprintf(buf, sizeof buf, "\\u%04x", cp);
            }
            out += buf;
        } else {
            out.append(s.substr(start, i - start));
        }
    }
    out += '"';
}

struct JsonWriter {
    bool ensure_ascii;
    int indent;
    std::string item_sep, key_sep;
    bool sort_keys;
    int depth = 0;

    void newline(std::string& out, int level) const {
        out += '\n';
        out.append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
    }

    std::string key_text(const Value& k) const {
        if (k.is_string()) return k.as_string();
        if (k.is_bool()) return k.as_bool() ? "true" : "false";
        if (k.is_none()) return "null";
        if (k.is_int()) return std::to_string(k.as_int());
        if (k.is_float()) return python_repr_float(k.as_float());
        throw std::invalid_argument("keys must be str, int, float, bool or None, not " +
                                    k.type_name());
    }

    RenderBudget* budget = RenderBudget::current();

    void write(const Value& v, std::string& out, int level) {
        if (++depth > 200) throw std::invalid_argument("tojson: value nested too deeply");
        if (budget) {  // a shared sublist is written once per reference
            budget->tick();
            budget->need(out.size());
        }
        if (v.is_none()) {
            out += "null";
        } else if (v.is_bool()) {
            out += v.as_bool() ? "true" : "false";
        } else if (v.is_int()) {
            out += std::to_string(v.as_int());
        } else if (v.is_float()) {
            const double d = v.as_float();
            out += std::isnan(d)   ? "NaN"
                   : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity")
                                   : python_repr_float(d);
        } else if (v.is_string()) {
            append_json_string(v.as_string(), ensure_ascii, out);
        } else if (v.is_list() && !v.as_list().generator) {
            const auto& items = v.as_list().items;
            if (items.empty()) {
                out += "[]";
            } else {
                out += '[';
                for (size_t i = 0; i < items.size(); ++i) {
                    if (i) out += item_sep;
                    if (indent >= 0) newline(out, level + 1);
                    write(items[i], out, level + 1);
                }
                if (indent >= 0) newline(out, level);
                out += ']';
            }
        } else if (v.is_dict()) {
            std::vector<std::pair<std::string, const Value*>> items;
            for (const auto& [k, val] : v.as_dict().items) items.emplace_back(key_text(k), &val);
            if (sort_keys) {
                std::stable_sort(items.begin(), items.end(),
                                 [](const auto& a, const auto& b) { return a.first < b.first; });
            }
            if (items.empty()) {
                out += "{}";
            } else {
                out += '{';
                for (size_t i = 0; i < items.size(); ++i) {
                    if (i) out += item_sep;
                    if (indent >= 0) newline(out, level + 1);
                    append_json_string(items[i].first, ensure_ascii, out);
                    out += key_sep;
                    write(*items[i].second, out, level + 1);
                }
                if (indent >= 0) newline(out, level);
                out += '}';
            }
        } else {
            throw std::invalid_argument("Object of type " + v.type_name() +
                                        " is not JSON serializable");
        }
        --depth;
    }
};

}  // namespace

std::string python_repr_string(std::string_view s) {
    const bool has_single = s.find('\'') != std::string_view::npos;
    const bool has_double = s.find('"') != std::string_view::npos;
    const char quote = has_single && !has_double ? '"' : '\'';
    std::string out(1, quote);
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const uint32_t cp = next_cp(s, i);
        if (cp == '\\') {
            out += "\\\\";
        } else if (cp == static_cast<uint32_t>(quote)) {
            out += '\\';
            out += quote;
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (!python_printable(cp)) {
            append_hex_escape(cp, out);
        } else {
            out.append(s.substr(start, i - start));
        }
    }
    out += quote;
    return out;
}

std::string python_repr_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    if (d == 0.0) return std::signbit(d) ? "-0.0" : "0.0";
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    const std::string sci(buf, res.ptr);  // "-1.2345e+02": shortest round-trip digits
    const size_t e = sci.find('e');
    std::string mant = sci.substr(0, e);
    const int exp = std::stoi(sci.substr(e + 1));
    const bool neg = !mant.empty() && mant[0] == '-';
    if (neg) mant.erase(0, 1);
    std::string digits;
    for (const char c : mant) {
        if (c != '.') digits += c;
    }
    std::string out = neg ? "-" : "";
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
        } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
            out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
                   digits.substr(static_cast<size_t>(exp) + 1);
        }
    } else {
        out += digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        out += ebuf;
    }
    return out;
}

std::string Value::str() const {
    if (is_undefined()) return "";
    if (is_string()) return as_string();
    return repr();
}

namespace {

// repr() of nested values with the render's limits: the text is checked
// against the memory budget as it grows (a list holding the same list
// twice, 60 times over, would print 2^60 items), a namespace inside itself
// prints as <Namespace {...}>, and nesting is bounded even where a
// namespace changed after it was put in a list.
struct Printer {
    RenderBudget* budget = RenderBudget::current();
    std::vector<const Namespace*> open;
    int depth = 0;

    void print(const Value& v, std::string& out) {
        if (++depth > 2 * kMaxValueDepth) too_deep("a value being printed");
        if (budget) {
            budget->tick();
            budget->need(out.size());
        }
        if (v.is_list()) {
            const List& l = v.as_list();
            if (l.generator) {
                out += "<generator object>";
            } else {
                out += l.tuple ? "(" : "[";
                for (size_t i = 0; i < l.items.size(); ++i) {
                    if (i) out += ", ";
                    print(l.items[i], out);
                }
                if (l.tuple && l.items.size() == 1) out += ',';
                out += l.tuple ? ")" : "]";
            }
        } else if (v.is_dict()) {
            out += "{";
            pairs(v.as_dict(), out);
            out += "}";
        } else if (v.is_namespace()) {
            const Namespace* ns = &v.as_namespace();
            if (std::find(open.begin(), open.end(), ns) != open.end()) {
                out += "<Namespace {...}>";
            } else {
                open.push_back(ns);
                out += "<Namespace {";
                pairs(ns->attrs, out);
                out += "}>";
                open.pop_back();
            }
        } else {
            out += v.repr();
        }
        --depth;
    }

    void pairs(const Dict& d, std::string& out) {
        bool first = true;
        for (const auto& [k, v] : d.items) {
            if (!first) out += ", ";
            first = false;
            print(k, out);
            out += ": ";
            print(v, out);
        }
    }
};

}  // namespace

std::string Value::repr() const {
    if (is_undefined()) return "Undefined";
    if (is_none()) return "None";
    if (is_bool()) return as_bool() ? "True" : "False";
    if (is_int()) return std::to_string(as_int());
    if (is_float()) return python_repr_float(as_float());
    if (is_string()) return python_repr_string(as_string());
    if (is_function()) return "<function " + as_function().name + ">";
    Printer p;
    std::string out;
    p.print(*this, out);
    return out;
}

namespace {

bool equals_at(const Value& a, const Value& b, int depth);

}  // namespace

bool equals(const Value& a, const Value& b) {
    return equals_at(a, b, 0);
}

namespace {

bool equals_at(const Value& a, const Value& b, int depth) {
    if (depth > 2 * kMaxValueDepth) too_deep("a value being compared");
    tick_work();
    if (a.is_number() && b.is_number()) {
        if ((a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool())) {
            const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
            const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
            return x == y;
        }
        return a.to_double() == b.to_double();
    }
    if (a.is_undefined() || b.is_undefined()) return a.is_undefined() && b.is_undefined();
    if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
    if (a.is_string() && b.is_string()) return a.as_string() == b.as_string();
    if (a.is_list() && b.is_list()) {
        const List& x = a.as_list();
        const List& y = b.as_list();
        if (&x == &y) return true;
        if (x.generator || y.generator) return false;
        if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
        for (size_t i = 0; i < x.items.size(); ++i) {
            if (!equals_at(x.items[i], y.items[i], depth + 1)) return false;
        }
        return true;
    }
    if (a.is_dict() && b.is_dict()) {
        const Dict& x = a.as_dict();
        const Dict& y = b.as_dict();
        if (&x == &y) return true;
        if (x.items.size() != y.items.size()) return false;
        for (const auto& [k, v] : x.items) {
            const Value* w = y.find(k);
            if (!w || !equals_at(v, *w, depth + 1)) return false;
        }
        return true;
    }
    if (a.is_namespace() && b.is_namespace()) return &a.as_namespace() == &b.as_namespace();
    if (a.is_function() && b.is_function()) return &a.as_function() == &b.as_function();
    return false;
}

bool less_than_at(const Value& a, const Value& b, int depth) {
    if (depth > 2 * kMaxValueDepth) too_deep("a value being compared");
    tick_work();
    if (a.is_number() && b.is_number()) {
        if ((a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool())) {
            const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
            const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
            return x < y;
        }
        return a.to_double() < b.to_double();
    }
    if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
    if (a.is_list() && b.is_list() && !a.as_list().generator && !b.as_list().generator &&
        a.as_list().tuple == b.as_list().tuple) {
        const auto& x = a.as_list().items;
        const auto& y = b.as_list().items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (!equals_at(x[i], y[i], depth + 1)) return less_than_at(x[i], y[i], depth + 1);
        }
        return x.size() < y.size();
    }
    throw std::invalid_argument("'<' not supported between instances of '" + a.type_name() +
                                "' and '" + b.type_name() + "'");
}

}  // namespace

bool less_than(const Value& a, const Value& b) {
    return less_than_at(a, b, 0);
}

std::string to_json(const Value& v, bool ensure_ascii, int indent,
                    std::optional<std::pair<std::string, std::string>> separators, bool sort_keys) {
    JsonWriter w{ensure_ascii, indent, indent >= 0 ? "," : ", ", ": ", sort_keys};
    if (separators) {
        w.item_sep = separators->first;
        w.key_sep = separators->second;
    }
    std::string out;
    w.write(v, out, 0);
    return out;
}

}  // namespace wb::chat::jinja
