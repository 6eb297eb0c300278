#include "chat/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace wb::chat::jinja {

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

    void write(const Value& v, std::string& out, int level) {
        if (++depth > 200) throw std::invalid_argument("tojson: value nested too deeply");
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

std::string Value::repr() const {
    if (is_undefined()) return "Undefined";
    if (is_none()) return "None";
    if (is_bool()) return as_bool() ? "True" : "False";
    if (is_int()) return std::to_string(as_int());
    if (is_float()) return python_repr_float(as_float());
    if (is_string()) return python_repr_string(as_string());
    if (is_list()) {
        const List& l = as_list();
        if (l.generator) return "<generator object>";
        std::string out = l.tuple ? "(" : "[";
        for (size_t i = 0; i < l.items.size(); ++i) {
            if (i) out += ", ";
            out += l.items[i].repr();
        }
        if (l.tuple && l.items.size() == 1) out += ',';
        out += l.tuple ? ")" : "]";
        return out;
    }
    if (is_dict()) {
        std::string out = "{";
        bool first = true;
        for (const auto& [k, v] : as_dict().items) {
            if (!first) out += ", ";
            first = false;
            out += k.repr() + ": " + v.repr();
        }
        return out + "}";
    }
    if (is_namespace()) {
        std::string out = "<Namespace {";
        bool first = true;
        for (const auto& [k, v] : as_namespace().attrs.items) {
            if (!first) out += ", ";
            first = false;
            out += k.repr() + ": " + v.repr();
        }
        return out + "}>";
    }
    return "<function " + as_function().name + ">";
}

bool equals(const Value& a, const Value& b) {
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
        if (x.generator || y.generator) return &x == &y;
        if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
        for (size_t i = 0; i < x.items.size(); ++i) {
            if (!equals(x.items[i], y.items[i])) return false;
        }
        return true;
    }
    if (a.is_dict() && b.is_dict()) {
        const Dict& x = a.as_dict();
        const Dict& y = b.as_dict();
        if (x.items.size() != y.items.size()) return false;
        for (const auto& [k, v] : x.items) {
            const Value* w = y.find(k);
            if (!w || !equals(v, *w)) return false;
        }
        return true;
    }
    if (a.is_namespace() && b.is_namespace()) return &a.as_namespace() == &b.as_namespace();
    if (a.is_function() && b.is_function()) return &a.as_function() == &b.as_function();
    return false;
}

bool less_than(const Value& a, const Value& b) {
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
            if (!equals(x[i], y[i])) return less_than(x[i], y[i]);
        }
        return x.size() < y.size();
    }
    throw std::invalid_argument("'<' not supported between instances of '" + a.type_name() +
                                "' and '" + b.type_name() + "'");
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
