// Built-in filters, tests, str/list/dict methods and globals, each matching
// the Jinja2 3.1 built-in (jinja2/filters.py, jinja2/tests.py,
// jinja2/sandbox.py) or Python method of the same name, plus transformers'
// tojson, raise_exception and strftime_now.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>

#include "chat/jinja/interp.h"
#include "chat/jinja/pytext.h"

namespace wb::chat::jinja {

namespace {

using Args = CallArgs;

const Value* arg(const Args& a, size_t i, std::string_view name) {
    return a.get(i, name);
}

bool bool_arg(const Args& a, size_t i, std::string_view name, bool def) {
    const Value* v = arg(a, i, name);
    return v ? v->truthy() : def;
}

int64_t int_arg(const Args& a, size_t i, std::string_view name, int64_t def) {
    const Value* v = arg(a, i, name);
    if (!v || v->is_none()) return def;
    if (v->is_int()) return v->as_int();
    if (v->is_bool()) return v->as_bool();
    fail_type("argument '" + std::string(name) + "' must be an integer, not " + v->type_name());
}

std::optional<std::string> str_arg(const Args& a, size_t i, std::string_view name) {
    const Value* v = arg(a, i, name);
    if (!v || v->is_none() || v->is_undefined()) return std::nullopt;
    return v->str();
}

std::string need_str(const Value& v, std::string_view what) {
    if (!v.is_string()) fail_type(std::string(what) + " must be str, not " + v.type_name());
    return v.as_string();
}

// str.replace(old, new, count) with the result's size checked against the
// render's memory budget before it is built ('a'*1000 with each 'a'
// replaced by 1000 more is 10^6 bytes, twice over 10^9).
std::string checked_replace(const std::string& s, const std::string& from, const std::string& to,
                            int64_t count) {
    size_t hits = 0;
    if (from.empty()) {
        hits = py::length(s) + 1;
    } else {
        for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + from.size()))
            ++hits;
    }
    if (count >= 0) hits = std::min(hits, static_cast<size_t>(count));
    size_t grow = 0;
    if (to.size() > from.size() && __builtin_mul_overflow(hits, to.size() - from.size(), &grow))
        grow = std::numeric_limits<size_t>::max() - s.size();
    need_bytes(s.size() + grow);
    return py::replace(s, from, to, count);
}

// Upper bound on the parts str.split(sep) makes, checked against the
// budget before the parts exist (each part becomes a value of its own).
void need_split(const std::string& s, const std::optional<std::string>& sep) {
    size_t parts = 1;
    if (sep && !sep->empty()) {
        for (size_t p = s.find(*sep); p != std::string::npos; p = s.find(*sep, p + sep->size()))
            ++parts;
    } else {
        for (const char c : s) parts += c == ' ' || c == '\n' || c == '\t' || c == '\r';
    }
    need_bytes(parts * (sizeof(Value) + sizeof(std::string)));
}

// jinja2 make_attrgetter: "a.b.0" looked up part by part with getitem.
Value attr_path(Interp& in, const Value& item, const std::string& path) {
    Value v = item;
    size_t pos = 0;
    while (true) {
        const size_t dot = path.find('.', pos);
        const std::string part =
            path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
            return c >= '0' && c <= '9';
        });
        v = in.getitem(v, digits ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
        if (dot == std::string::npos) return v;
        pos = dot + 1;
    }
}

// A sort key: lower-cased strings unless case sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
    if (!case_sensitive && v.is_string()) return Value(py::lower(v.as_string()));
    return v;
}

void stable_sort_values(std::vector<Value>& items, const std::function<Value(const Value&)>& key,
                        bool reverse) {
    std::vector<std::pair<Value, size_t>> keyed;
    for (size_t i = 0; i < items.size(); ++i) keyed.emplace_back(key(items[i]), i);
    try {
        std::stable_sort(keyed.begin(), keyed.end(), [reverse](const auto& x, const auto& y) {
            return reverse ? less_than(y.first, x.first) : less_than(x.first, y.first);
        });
    } catch (const std::invalid_argument& e) {
        fail_type(e.what());
    }
    std::vector<Value> out;
    for (const auto& [k, i] : keyed) out.push_back(items[i]);
    items = std::move(out);
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
    std::vector<std::string> out;
    const std::vector<uint32_t> cps = py::code_points(s);
    size_t start = 0;
    for (size_t i = 0; i < cps.size(); ++i) {
        const uint32_t c = cps[i];
        const bool brk = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C ||
                         c == 0x1D || c == 0x1E || c == 0x85 || c == 0x2028 || c == 0x2029;
        if (!brk) continue;
        size_t end = i + 1;
        if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') end = i + 2;
        out.push_back(py::encode(cps, start, keepends ? end : i));
        start = end;
        i = end - 1;
    }
    if (start < cps.size()) out.push_back(py::encode(cps, start, cps.size()));
    return out;
}

std::string html_escape(std::string_view s) {
    std::string out;
    for (const char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

// Python int(str): optional whitespace and sign, digits with single
// underscores between them.
std::optional<int64_t> parse_int(std::string_view s, int base) {
    const std::string t = py::strip(s, std::nullopt, true, true);
    if (t.empty()) return std::nullopt;
    size_t i = 0;
    bool neg = false;
    if (t[0] == '+' || t[0] == '-') {
        neg = t[0] == '-';
        i = 1;
    }
    std::string digits;
    bool last_underscore = true;
    for (; i < t.size(); ++i) {
        if (t[i] == '_') {
            if (last_underscore) return std::nullopt;
            last_underscore = true;
            continue;
        }
        digits += t[i];
        last_underscore = false;
    }
    if (digits.empty() || last_underscore) return std::nullopt;
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(digits.c_str(), &end, base);
    if (errno == ERANGE || *end != '\0') return std::nullopt;
    return neg ? -v : v;
}

std::optional<double> parse_float(std::string_view s) {
    const std::string t = py::strip(s, std::nullopt, true, true);
    if (t.empty()) return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(t.c_str(), &end);
    if (*end != '\0') return std::nullopt;
    return d;
}

// ---- filters ------------------------------------------------------------------

using FilterFn = Value (*)(Interp&, const Value&, Args&);

Value f_default(Interp&, const Value& v, Args& a) {
    const Value* d = arg(a, 0, "default_value");
    const bool boolean = bool_arg(a, 1, "boolean", false);
    if (v.is_undefined() || (boolean && !v.truthy())) return d ? *d : Value("");
    return v;
}

Value f_length(Interp&, const Value& v, Args&) {
    if (v.is_undefined()) return Value(int64_t{0});
    if (v.is_string()) return Value(static_cast<int64_t>(py::length(v.as_string())));
    if (v.is_list() && !v.as_list().generator)
        return Value(static_cast<int64_t>(v.as_list().items.size()));
    if (v.is_dict()) return Value(static_cast<int64_t>(v.as_dict().items.size()));
    fail_type("object of type '" + v.type_name() + "' has no len()");
}

Value f_trim(Interp&, const Value& v, Args& a) {
    return Value(py::strip(v.str(), str_arg(a, 0, "chars"), true, true));
}
Value f_upper(Interp&, const Value& v, Args&) {
    return Value(py::upper(v.str()));
}
Value f_lower(Interp&, const Value& v, Args&) {
    return Value(py::lower(v.str()));
}
Value f_title(Interp&, const Value& v, Args&) {
    return Value(py::title(v.str()));
}
Value f_capitalize(Interp&, const Value& v, Args&) {
    return Value(py::capitalize(v.str()));
}
Value f_string(Interp&, const Value& v, Args&) {
    if (v.is_list() && v.as_list().generator) return Value("<generator object>");
    return Value(v.str());
}
Value f_safe(Interp&, const Value& v, Args&) {
    return Value(v.str());
}
Value f_escape(Interp&, const Value& v, Args&) {
    return Value(html_escape(v.str()));
}

Value f_replace(Interp&, const Value& v, Args& a) {
    const Value* from = arg(a, 0, "old");
    const Value* to = arg(a, 1, "new");
    if (!from || !to) fail_type("replace() needs the old and the new text");
    return Value(checked_replace(v.str(), from->str(), to->str(), int_arg(a, 2, "count", -1)));
}

Value f_join(Interp& in, const Value& v, Args& a) {
    const std::string sep = str_arg(a, 0, "d").value_or("");
    const std::optional<std::string> attribute = str_arg(a, 1, "attribute");
    std::string out;
    bool first = true;
    for (const Value& item : in.iterate(v)) {
        if (!first) out += sep;
        first = false;
        const Value x = attribute ? attr_path(in, item, *attribute) : item;
        out += x.is_list() && x.as_list().generator ? "<generator object>" : x.str();
        need_bytes(out.size());
    }
    return Value(out);
}

Value f_list(Interp& in, const Value& v, Args&) {
    return Value::list(in.iterate(v));
}

Value f_first(Interp& in, const Value& v, Args&) {
    const std::vector<Value> items = in.iterate(v);
    if (items.empty()) return Value::undefined("No first item, sequence was empty.");
    return items.front();
}

Value f_last(Interp& in, const Value& v, Args&) {
    if (v.is_list() && v.as_list().generator) fail_type("'generator' object is not reversible");
    const std::vector<Value> items = in.iterate(v);
    if (items.empty()) return Value::undefined("No last item, sequence was empty.");
    return items.back();
}

Value f_items(Interp&, const Value& v, Args&) {
    if (v.is_undefined()) return Value::generator({});
    if (!v.is_dict()) fail_type("Can only get item pairs from a mapping.");
    std::vector<Value> out;
    for (const auto& [k, val] : v.as_dict().items) out.push_back(Value::list({k, val}, true));
    return Value::generator(std::move(out));
}

Value f_dictsort(Interp&, const Value& v, Args& a) {
    if (!v.is_dict()) fail_type("dictsort needs a mapping, not " + v.type_name());
    const bool cs = bool_arg(a, 0, "case_sensitive", false);
    const std::string by = str_arg(a, 1, "by").value_or("key");
    const bool reverse = bool_arg(a, 2, "reverse", false);
    if (by != "key" && by != "value") fail_type("You can only sort by either \"key\" or \"value\"");
    std::vector<Value> items;
    for (const auto& [k, val] : v.as_dict().items) items.push_back(Value::list({k, val}, true));
    const size_t idx = by == "key" ? 0 : 1;
    stable_sort_values(
        items, [&](const Value& t) { return sort_key(t.as_list().items[idx], cs); }, reverse);
    return Value::list(std::move(items));
}

Value f_sort(Interp& in, const Value& v, Args& a) {
    const bool reverse = bool_arg(a, 0, "reverse", false);
    const bool cs = bool_arg(a, 1, "case_sensitive", false);
    const std::optional<std::string> attribute = str_arg(a, 2, "attribute");
    std::vector<Value> items = in.iterate(v);
    stable_sort_values(
        items,
        [&](const Value& x) { return sort_key(attribute ? attr_path(in, x, *attribute) : x, cs); },
        reverse);
    return Value::list(std::move(items));
}

Value f_unique(Interp& in, const Value& v, Args& a) {
    const bool cs = bool_arg(a, 0, "case_sensitive", false);
    const std::optional<std::string> attribute = str_arg(a, 1, "attribute");
    std::vector<Value> seen, out;
    for (const Value& x : in.iterate(v)) {
        const Value key = sort_key(attribute ? attr_path(in, x, *attribute) : x, cs);
        if (std::none_of(seen.begin(), seen.end(),
                         [&](const Value& s) { return equals(s, key); })) {
            seen.push_back(key);
            out.push_back(x);
        }
    }
    return Value::generator(std::move(out));
}

Value min_max(Interp& in, const Value& v, Args& a, bool max) {
    const bool cs = bool_arg(a, 0, "case_sensitive", false);
    const std::optional<std::string> attribute = str_arg(a, 1, "attribute");
    std::vector<Value> items = in.iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    const Value* best = &items[0];
    Value best_key = sort_key(attribute ? attr_path(in, items[0], *attribute) : items[0], cs);
    try {
        for (const Value& x : items) {
            const Value k = sort_key(attribute ? attr_path(in, x, *attribute) : x, cs);
            if (max ? less_than(best_key, k) : less_than(k, best_key)) {
                best = &x;
                best_key = k;
            }
        }
    } catch (const std::invalid_argument& e) {
        fail_type(e.what());
    }
    return *best;
}
Value f_min(Interp& in, const Value& v, Args& a) {
    return min_max(in, v, a, false);
}
Value f_max(Interp& in, const Value& v, Args& a) {
    return min_max(in, v, a, true);
}

Value f_sum(Interp& in, const Value& v, Args& a) {
    const std::optional<std::string> attribute = str_arg(a, 0, "attribute");
    const Value* start = arg(a, 1, "start");
    Value total = start ? *start : Value(int64_t{0});
    for (const Value& x : in.iterate(v)) {
        const Value y = attribute ? attr_path(in, x, *attribute) : x;
        if (!total.is_number() || !y.is_number())
            fail_type("unsupported operand type(s) for +: '" + total.type_name() + "' and '" +
                      y.type_name() + "'");
        if ((total.is_int() || total.is_bool()) && (y.is_int() || y.is_bool())) {
            const int64_t p = total.is_bool() ? total.as_bool() : total.as_int();
            const int64_t q = y.is_bool() ? y.as_bool() : y.as_int();
            int64_t r = 0;
            if (__builtin_add_overflow(p, q, &r)) fail_type("integer result does not fit 64 bits");
            total = Value(r);
        } else {
            total = Value(total.to_double() + y.to_double());
        }
    }
    return total;
}

Value f_int(Interp&, const Value& v, Args& a) {
    const Value* def = arg(a, 0, "default");
    const int base = static_cast<int>(int_arg(a, 1, "base", 10));
    const Value fallback = def ? *def : Value(int64_t{0});
    if (v.is_bool()) return Value(static_cast<int64_t>(v.as_bool()));
    if (v.is_int()) return v;
    if (v.is_float()) {
        if (!std::isfinite(v.as_float())) return fallback;
        return Value(static_cast<int64_t>(v.as_float()));
    }
    if (v.is_string()) {
        if (auto i = parse_int(v.as_string(), base)) return Value(*i);
        if (auto d = parse_float(v.as_string()); d && std::isfinite(*d))
            return Value(static_cast<int64_t>(*d));
    }
    return fallback;
}

Value f_float(Interp&, const Value& v, Args& a) {
    const Value* def = arg(a, 0, "default");
    if (v.is_number()) return Value(v.to_double());
    if (v.is_string()) {
        if (auto d = parse_float(v.as_string())) return Value(*d);
    }
    return def ? *def : Value(0.0);
}

Value f_abs(Interp&, const Value& v, Args&) {
    if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    if (v.is_bool()) return Value(static_cast<int64_t>(v.as_bool()));
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    fail_type("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_round(Interp&, const Value& v, Args& a) {
    const int64_t precision = int_arg(a, 0, "precision", 0);
    const std::string method = str_arg(a, 1, "method").value_or("common");
    if (!v.is_number()) fail_type("round() needs a number, not " + v.type_name());
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double x = v.to_double() * scale;
    double r = 0;
    if (method == "common") {
        r = std::nearbyint(x);  // Python's round(): halves to even
    } else if (method == "ceil") {
        r = std::ceil(x);
    } else if (method == "floor") {
        r = std::floor(x);
    } else {
        fail_type("method must be 'common', 'ceil' or 'floor'");
    }
    if (method == "common" && (v.is_int() || v.is_bool()) && precision >= 0)
        return v.is_bool() ? Value(static_cast<int64_t>(v.as_bool())) : v;
    return Value(r / scale);
}

Value f_center(Interp&, const Value& v, Args& a) {
    const std::string s = v.str();
    const auto width = static_cast<size_t>(std::max<int64_t>(0, int_arg(a, 0, "width", 80)));
    const size_t len = py::length(s);
    if (len >= width) return Value(s);
    const size_t pad = width - len;
    need_bytes(s.size() + pad);
    // Python's str.center puts the extra space on the right for odd padding
    // unless the width is odd (then on the left).
    const size_t left = pad / 2 + (pad & width & 1);
    return Value(std::string(left, ' ') + s + std::string(pad - left, ' '));
}

Value f_indent(Interp&, const Value& v, Args& a) {
    const Value* w = arg(a, 0, "width");
    const std::string indention =
        w && w->is_string()
            ? w->as_string()
            : std::string(static_cast<size_t>(std::max<int64_t>(0, int_arg(a, 0, "width", 4))),
                          ' ');
    const bool first = bool_arg(a, 1, "first", false);
    const bool blank = bool_arg(a, 2, "blank", false);
    const std::string s = v.str() + "\n";
    size_t n_lines = 1;
    for (const char c : s) n_lines += c == '\n';
    size_t grow = 0;
    if (__builtin_mul_overflow(n_lines, indention.size(), &grow))
        grow = std::numeric_limits<size_t>::max() - s.size();
    need_bytes(s.size() + grow);
    const std::vector<std::string> lines = splitlines(s, false);
    std::string rv;
    if (blank) {
        for (size_t i = 0; i < lines.size(); ++i) {
            if (i) rv += "\n" + indention;
            rv += lines[i];
        }
    } else {
        rv = lines.empty() ? "" : lines[0];
        for (size_t i = 1; i < lines.size(); ++i)
            rv += "\n" + (lines[i].empty() ? "" : indention + lines[i]);
    }
    if (first) rv = indention + rv;
    return Value(rv);
}

Value f_truncate(Interp&, const Value& v, Args& a) {
    const std::string s = v.str();
    const int64_t length = int_arg(a, 0, "length", 255);
    const bool killwords = bool_arg(a, 1, "killwords", false);
    const std::string end = str_arg(a, 2, "end").value_or("...");
    const int64_t leeway = int_arg(a, 3, "leeway", 5);
    const std::vector<uint32_t> cps = py::code_points(s);
    if (static_cast<int64_t>(cps.size()) <= length + leeway) return Value(s);
    const int64_t keep = std::max<int64_t>(0, length - static_cast<int64_t>(py::length(end)));
    std::string head = py::encode(cps, 0, static_cast<size_t>(keep));
    if (!killwords) {
        const size_t sp = head.rfind(' ');
        if (sp != std::string::npos) head = head.substr(0, sp);
    }
    return Value(head + end);
}

Value f_reverse(Interp& in, const Value& v, Args&) {
    if (v.is_string()) {
        std::vector<uint32_t> cps = py::code_points(v.as_string());
        std::reverse(cps.begin(), cps.end());
        return Value(py::encode(cps, 0, cps.size()));
    }
    std::vector<Value> items = in.iterate(v);
    std::reverse(items.begin(), items.end());
    if (v.is_list() && v.as_list().generator) return Value::list(std::move(items));
    return Value::generator(std::move(items));
}

Value f_attr(Interp& in, const Value& v, Args& a) {
    const std::optional<std::string> name = str_arg(a, 0, "name");
    if (!name) fail_type("attr() needs an attribute name");
    return in.getattr(v, *name);
}

Value f_format(Interp&, const Value& v, Args& a) {
    Value args = a.positional.size() == 1 ? a.positional[0] : Value::list(a.positional, true);
    if (a.positional.size() == 1 && !(args.is_list() && args.as_list().tuple))
        args = Value::list({args}, true);
    // "text" % args, evaluated by the '%' operator's rules.
    std::string fmt = v.str();
    std::vector<Value> items = args.as_list().items;
    std::string out;
    size_t next = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%' || i + 1 >= fmt.size()) {
            out += fmt[i];
            continue;
        }
        const char c = fmt[++i];
        if (c == '%') {
            out += '%';
        } else if ((c == 's' || c == 'd' || c == 'r') && next < items.size()) {
            const Value& x = items[next++];
            out += c == 'r'                   ? x.repr()
                   : c == 'd' && x.is_float() ? std::to_string(static_cast<int64_t>(x.as_float()))
                                              : x.str();
        } else {
            fail_type(std::string("unsupported format '%") + c + "' or missing argument");
        }
    }
    return Value(out);
}

Value f_tojson(Interp&, const Value& v, Args& a) {
    // transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
    const bool ensure_ascii = bool_arg(a, 0, "ensure_ascii", false);
    const Value* ind = arg(a, 1, "indent");
    int indent = -1;
    if (ind && !ind->is_none()) {
        if (!ind->is_int()) fail_type("indent must be an integer");
        indent = static_cast<int>(std::clamp<int64_t>(ind->as_int(), 0, 64));
    }
    std::optional<std::pair<std::string, std::string>> seps;
    if (const Value* s = arg(a, 2, "separators"); s && !s->is_none()) {
        if (!s->is_list() || s->as_list().items.size() != 2)
            fail_type("separators must be a pair of strings");
        seps = std::make_pair(s->as_list().items[0].str(), s->as_list().items[1].str());
    }
    const bool sort_keys = bool_arg(a, 3, "sort_keys", false);
    try {
        return Value(to_json(v, ensure_ascii, indent, seps, sort_keys));
    } catch (const std::invalid_argument& e) {
        fail_type(e.what());
    }
}

Value select_impl(Interp& in, const Value& v, Args& a, bool by_attr, bool keep_if) {
    const size_t first_test = by_attr ? 1 : 0;
    std::optional<std::string> attribute;
    if (by_attr) {
        attribute = str_arg(a, 0, "attribute");
        if (!attribute) fail_type("selectattr/rejectattr need an attribute name");
    }
    std::optional<std::string> test;
    Args test_args;
    if (a.positional.size() > first_test) {
        test = a.positional[first_test].str();
        test_args.positional.assign(
            a.positional.begin() + static_cast<std::ptrdiff_t>(first_test + 1), a.positional.end());
        test_args.keyword = a.keyword;
        test_args.line = a.line;
        if (!has_test(*test)) fail_type("no test named '" + *test + "'");
    }
    std::vector<Value> out;
    if (!v.truthy()) return Value::generator({});  // jinja2: a false value selects nothing
    for (const Value& item : in.iterate(v)) {
        in.step();
        const Value x = attribute ? attr_path(in, item, *attribute) : item;
        const bool pass = test ? in.apply_test(*test, x, test_args, a.line) : x.truthy();
        if (pass == keep_if) out.push_back(item);
    }
    return Value::generator(std::move(out));
}
Value f_select(Interp& in, const Value& v, Args& a) {
    return select_impl(in, v, a, false, true);
}
Value f_reject(Interp& in, const Value& v, Args& a) {
    return select_impl(in, v, a, false, false);
}
Value f_selectattr(Interp& in, const Value& v, Args& a) {
    return select_impl(in, v, a, true, true);
}
Value f_rejectattr(Interp& in, const Value& v, Args& a) {
    return select_impl(in, v, a, true, false);
}

Value f_map(Interp& in, const Value& v, Args& a) {
    std::vector<Value> out;
    if (!v.truthy()) return Value::generator({});  // jinja2: a false value maps to nothing
    if (a.positional.empty()) {
        const std::optional<std::string> attribute = str_arg(a, 99, "attribute");
        if (!attribute) fail_type("map() needs a filter name or attribute=");
        const Value* def = arg(a, 99, "default");
        for (const Value& item : in.iterate(v)) {
            Value x = attr_path(in, item, *attribute);
            if (x.is_undefined() && def) x = *def;
            out.push_back(x);
        }
        return Value::generator(std::move(out));
    }
    const std::string name = a.positional[0].str();
    if (!has_filter(name)) fail_type("no filter named '" + name + "'");
    Args fargs;
    fargs.positional.assign(a.positional.begin() + 1, a.positional.end());
    fargs.keyword = a.keyword;
    fargs.line = a.line;
    for (const Value& item : in.iterate(v)) {
        in.step();
        Args copy = fargs;
        out.push_back(in.apply_filter(name, item, copy, a.line));
    }
    return Value::generator(std::move(out));
}

Value f_wordcount(Interp&, const Value& v, Args&) {
    return Value(static_cast<int64_t>(py::split(v.str(), std::nullopt, -1).size()));
}

const std::map<std::string, FilterFn, std::less<>>& filters() {
    static const std::map<std::string, FilterFn, std::less<>> f = {
        {"abs", f_abs},
        {"attr", f_attr},
        {"capitalize", f_capitalize},
        {"center", f_center},
        {"count", f_length},
        {"d", f_default},
        {"default", f_default},
        {"dictsort", f_dictsort},
        {"e", f_escape},
        {"escape", f_escape},
        {"first", f_first},
        {"float", f_float},
        {"format", f_format},
        {"indent", f_indent},
        {"int", f_int},
        {"items", f_items},
        {"join", f_join},
        {"last", f_last},
        {"length", f_length},
        {"list", f_list},
        {"lower", f_lower},
        {"map", f_map},
        {"max", f_max},
        {"min", f_min},
        {"reject", f_reject},
        {"rejectattr", f_rejectattr},
        {"replace", f_replace},
        {"reverse", f_reverse},
        {"round", f_round},
        {"safe", f_safe},
        {"select", f_select},
        {"selectattr", f_selectattr},
        {"sort", f_sort},
        {"string", f_string},
        {"sum", f_sum},
        {"title", f_title},
        {"tojson", f_tojson},
        {"trim", f_trim},
        {"truncate", f_truncate},
        {"unique", f_unique},
        {"upper", f_upper},
        {"wordcount", f_wordcount},
    };
    return f;
}

// ---- tests ----------------------------------------------------------------------

using TestFn = bool (*)(Interp&, const Value&, Args&);

const Value& test_other(const Args& a, const char* name) {
    const Value* o = arg(a, 0, "other");
    if (!o) fail_type(std::string(name) + " needs a value to compare with");
    return *o;
}

bool compare_test(const Value& x, const Value& y, int which) {
    try {
        switch (which) {
            case 0:
                return less_than(x, y);
            case 1:
                return less_than(x, y) || equals(x, y);
            case 2:
                return less_than(y, x);
            default:
                return less_than(y, x) || equals(x, y);
        }
    } catch (const std::invalid_argument& e) {
        fail_type(e.what());
    }
}

bool is_lower_text(const std::string& s, bool upper) {
    bool cased = false;
    for (const char c : s) {
        if (c >= 'a' && c <= 'z') {
            if (upper) return false;
            cased = true;
        } else if (c >= 'A' && c <= 'Z') {
            if (!upper) return false;
            cased = true;
        }
    }
    return cased;
}

const std::map<std::string, TestFn, std::less<>>& tests() {
    static const std::map<std::string, TestFn, std::less<>> t = {
        {"defined", [](Interp&, const Value& v, Args&) { return !v.is_undefined(); }},
        {"undefined", [](Interp&, const Value& v, Args&) { return v.is_undefined(); }},
        {"none", [](Interp&, const Value& v, Args&) { return v.is_none(); }},
        {"boolean", [](Interp&, const Value& v, Args&) { return v.is_bool(); }},
        {"true", [](Interp&, const Value& v, Args&) { return v.is_bool() && v.as_bool(); }},
        {"false", [](Interp&, const Value& v, Args&) { return v.is_bool() && !v.as_bool(); }},
        {"integer", [](Interp&, const Value& v, Args&) { return v.is_int(); }},
        {"float", [](Interp&, const Value& v, Args&) { return v.is_float(); }},
        {"number", [](Interp&, const Value& v, Args&) { return v.is_number(); }},
        {"string", [](Interp&, const Value& v, Args&) { return v.is_string(); }},
        {"mapping", [](Interp&, const Value& v, Args&) { return v.is_dict(); }},
        {"iterable",
         [](Interp&, const Value& v, Args&) {
             return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
         }},
        {"sequence",
         [](Interp&, const Value& v, Args&) {
             return (v.is_list() && !v.as_list().generator) || v.is_dict() || v.is_string() ||
                    v.is_undefined();
         }},
        {"callable",
         [](Interp&, const Value& v, Args&) {
             return v.is_function() ||
                    (v.is_dict() && v.as_dict().find(std::string_view("__call__")));
         }},
        {"odd",
         [](Interp&, const Value& v, Args&) {
             if (!v.is_int()) fail_type("odd needs an integer");
             return v.as_int() % 2 != 0;
         }},
        {"even",
         [](Interp&, const Value& v, Args&) {
             if (!v.is_int()) fail_type("even needs an integer");
             return v.as_int() % 2 == 0;
         }},
        {"divisibleby",
         [](Interp&, const Value& v, Args& a) {
             const int64_t n = int_arg(a, 0, "num", 0);
             if (!v.is_int()) fail_type("divisibleby needs an integer");
             if (n == 0) fail_type("integer division or modulo by zero");
             return v.as_int() % n == 0;
         }},
        {"eq", [](Interp&, const Value& v, Args& a) { return equals(v, test_other(a, "eq")); }},
        {"equalto",
         [](Interp&, const Value& v, Args& a) { return equals(v, test_other(a, "equalto")); }},
        {"==", [](Interp&, const Value& v, Args& a) { return equals(v, test_other(a, "==")); }},
        {"ne", [](Interp&, const Value& v, Args& a) { return !equals(v, test_other(a, "ne")); }},
        {"!=", [](Interp&, const Value& v, Args& a) { return !equals(v, test_other(a, "!=")); }},
        {"lt",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, "lt"), 0); }},
        {"lessthan", [](Interp&, const Value& v,
                        Args& a) { return compare_test(v, test_other(a, "lessthan"), 0); }},
        {"<",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, "<"), 0); }},
        {"le",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, "le"), 1); }},
        {"<=",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, "<="), 1); }},
        {"gt",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, "gt"), 2); }},
        {"greaterthan", [](Interp&, const Value& v,
                           Args& a) { return compare_test(v, test_other(a, "greaterthan"), 2); }},
        {">",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, ">"), 2); }},
        {"ge",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, "ge"), 3); }},
        {">=",
         [](Interp&, const Value& v, Args& a) { return compare_test(v, test_other(a, ">="), 3); }},
        {"in",
         [](Interp& in, const Value& v, Args& a) {
             const Value* seq = arg(a, 0, "seq");
             if (!seq) fail_type("in needs a container");
             if (seq->is_string())
                 return v.is_string() && seq->as_string().find(v.as_string()) != std::string::npos;
             if (seq->is_dict()) return seq->as_dict().find(v) != nullptr;
             for (const Value& x : in.iterate(*seq)) {
                 if (equals(x, v)) return true;
             }
             return false;
         }},
        {"sameas",
         [](Interp&, const Value& v, Args& a) {
             const Value& o = test_other(a, "sameas");
             if (v.is_list() && o.is_list()) return &v.as_list() == &o.as_list();
             if (v.is_dict() && o.is_dict()) return &v.as_dict() == &o.as_dict();
             if (v.type_name() != o.type_name()) return false;
             return equals(v, o);
         }},
        {"lower", [](Interp&, const Value& v,
                     Args&) { return v.is_string() && is_lower_text(v.as_string(), false); }},
        {"upper", [](Interp&, const Value& v,
                     Args&) { return v.is_string() && is_lower_text(v.as_string(), true); }},
        {"escaped", [](Interp&, const Value&, Args&) { return false; }},
        {"filter",
         [](Interp&, const Value& v, Args&) { return v.is_string() && has_filter(v.as_string()); }},
        {"test",
         [](Interp&, const Value& v, Args&) { return v.is_string() && has_test(v.as_string()); }},
    };
    return t;
}

// ---- methods ----------------------------------------------------------------------

Value bound(const std::string& name, std::function<Value(CallArgs&)> fn) {
    return Value::function(name, std::move(fn));
}

Value unsafe(const Value& obj, const std::string& name) {
    return Value(Undefined{
        "access to attribute '" + name + "' of '" + obj.type_name() + "' object is unsafe.", true});
}

bool prefix_match(const std::string& s, const Value& p, bool suffix) {
    auto one = [&](const Value& x) {
        const std::string t = need_str(x, suffix ? "endswith argument" : "startswith argument");
        if (t.size() > s.size()) return false;
        return suffix ? s.compare(s.size() - t.size(), t.size(), t) == 0
                      : s.compare(0, t.size(), t) == 0;
    };
    if (p.is_list() && p.as_list().tuple) {
        return std::any_of(p.as_list().items.begin(), p.as_list().items.end(), one);
    }
    return one(p);
}

Value str_method(const std::string& s, const std::string& name, bool& found) {
    found = true;
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        return bound(name, [s, name](Args& a) {
            return Value(py::strip(s, str_arg(a, 0, "chars"), name != "rstrip", name != "lstrip"));
        });
    }
    if (name == "split" || name == "rsplit") {
        return bound(name, [s, name](Args& a) {
            const std::optional<std::string> sep = str_arg(a, 0, "sep");
            const int64_t maxsplit = int_arg(a, 1, "maxsplit", -1);
            std::vector<std::string> parts;
            need_split(s, sep);
            try {
                parts =
                    name == "split" ? py::split(s, sep, maxsplit) : py::rsplit(s, sep, maxsplit);
            } catch (const std::invalid_argument& e) {
                fail_type(e.what());
            }
            std::vector<Value> out(parts.begin(), parts.end());
            return Value::list(std::move(out));
        });
    }
    if (name == "startswith" || name == "endswith") {
        return bound(name, [s, name](Args& a) {
            const Value* p = arg(a, 0, "prefix");
            if (!p) fail_type(name + "() takes at least 1 argument");
            return Value(prefix_match(s, *p, name == "endswith"));
        });
    }
    if (name == "upper") return bound(name, [s](Args&) { return Value(py::upper(s)); });
    if (name == "lower") return bound(name, [s](Args&) { return Value(py::lower(s)); });
    if (name == "title") return bound(name, [s](Args&) { return Value(py::title(s)); });
    if (name == "capitalize") return bound(name, [s](Args&) { return Value(py::capitalize(s)); });
    if (name == "replace") {
        return bound(name, [s](Args& a) {
            const Value* from = arg(a, 0, "old");
            const Value* to = arg(a, 1, "new");
            if (!from || !to) fail_type("replace() takes at least 2 arguments");
            return Value(checked_replace(s, need_str(*from, "replace() argument 1"),
                                         need_str(*to, "replace() argument 2"),
                                         int_arg(a, 2, "count", -1)));
        });
    }
    if (name == "find" || name == "rfind" || name == "count" || name == "index") {
        return bound(name, [s, name](Args& a) {
            const Value* sub = arg(a, 0, "sub");
            if (!sub) fail_type(name + "() takes at least 1 argument");
            const std::string t = need_str(*sub, name + "() argument");
            if (name == "count") {
                if (t.empty()) return Value(static_cast<int64_t>(py::length(s) + 1));
                int64_t n = 0;
                for (size_t p = s.find(t); p != std::string::npos; p = s.find(t, p + t.size())) ++n;
                return Value(n);
            }
            const size_t p = name == "rfind" ? s.rfind(t) : s.find(t);
            if (p == std::string::npos) {
                if (name == "index") fail_type("substring not found");
                return Value(int64_t{-1});
            }
            return Value(static_cast<int64_t>(py::length(std::string_view(s).substr(0, p))));
        });
    }
    if (name == "join") {
        return bound(name, [s](Args& a) {
            const Value* it = arg(a, 0, "iterable");
            if (!it || !(it->is_list() || it->is_string()))
                fail_type("join() needs an iterable of strings");
            std::string out;
            const std::vector<Value> items =
                it->is_list() ? it->as_list().items : std::vector<Value>{};
            if (it->is_string()) {
                const std::vector<uint32_t> cps = py::code_points(it->as_string());
                need_bytes(cps.size() * (s.size() + 4));
                for (size_t i = 0; i < cps.size(); ++i) {
                    if (i) out += s;
                    out += py::encode(cps, i, i + 1);
                }
                return Value(out);
            }
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += s;
                out += need_str(items[i], "sequence item " + std::to_string(i));
                need_bytes(out.size());
            }
            return Value(out);
        });
    }
    if (name == "splitlines") {
        return bound(name, [s](Args& a) {
            need_split(s, std::string("\n"));
            const std::vector<std::string> lines = splitlines(s, bool_arg(a, 0, "keepends", false));
            return Value::list(std::vector<Value>(lines.begin(), lines.end()));
        });
    }
    if (name == "isdigit" || name == "isalpha" || name == "isalnum" || name == "isspace" ||
        name == "islower" || name == "isupper") {
        return bound(name, [s, name](Args&) {
            if (name == "islower") return Value(is_lower_text(s, false));
            if (name == "isupper") return Value(is_lower_text(s, true));
            if (s.empty()) return Value(false);
            if (name == "isspace") {
                for (const uint32_t c : py::code_points(s)) {
                    if (!py::is_space(c)) return Value(false);
                }
                return Value(true);
            }
            for (const char c : s) {
                const bool digit = c >= '0' && c <= '9';
                const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                                   (static_cast<unsigned char>(c) >= 0x80);
                const bool ok = name == "isdigit"   ? digit
                                : name == "isalpha" ? alpha
                                                    : digit || alpha;
                if (!ok) return Value(false);
            }
            return Value(true);
        });
    }
    found = false;
    return Value();
}

}  // namespace

std::string format_time(const std::string& format, const std::tm& tm) {
    // strftime with a format chosen by the template (GCC cannot check it).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    char buf[512];
    const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &tm);
#pragma GCC diagnostic pop
    return std::string(buf, n);
}

Value method_of(const Value& obj, const std::string& name, bool& found) {
    found = false;
    if (obj.is_string()) return str_method(obj.as_string(), name, found);
    if (obj.is_dict()) {
        const Value self = obj;
        found = true;
        if (name == "get") {
            return bound(name, [self](Args& a) {
                const Value* k = arg(a, 0, "key");
                if (!k) fail_type("get expected at least 1 argument, got 0");
                const Value* v = self.as_dict().find(*k);
                if (v) return *v;
                const Value* d = arg(a, 1, "default");
                return d ? *d : Value(nullptr);
            });
        }
        if (name == "items" || name == "keys" || name == "values") {
            return bound(name, [self, name](Args&) {
                std::vector<Value> out;
                for (const auto& [k, v] : self.as_dict().items) {
                    out.push_back(name == "items"  ? Value::list({k, v}, true)
                                  : name == "keys" ? k
                                                   : v);
                }
                return Value::list(std::move(out));
            });
        }
        if (name == "copy")
            return bound(name, [self](Args&) { return Value::dict(self.as_dict().items); });
        if (name == "clear" || name == "pop" || name == "popitem" || name == "setdefault" ||
            name == "update") {
            return unsafe(obj, name);
        }
        found = false;
        return Value();
    }
    if (obj.is_list() && !obj.as_list().generator) {
        const Value self = obj;
        found = true;
        if (name == "count" || name == "index") {
            return bound(name, [self, name](Args& a) {
                const Value* x = arg(a, 0, "value");
                if (!x) fail_type(name + "() takes exactly one argument");
                int64_t n = 0;
                const auto& items = self.as_list().items;
                for (size_t i = 0; i < items.size(); ++i) {
                    if (!equals(items[i], *x)) continue;
                    if (name == "index") return Value(static_cast<int64_t>(i));
                    ++n;
                }
                if (name == "index") fail_type(x->repr() + " is not in list");
                return Value(n);
            });
        }
        if (name == "copy")
            return bound(name, [self](Args&) { return Value::list(self.as_list().items); });
        if (name == "append" || name == "clear" || name == "extend" || name == "insert" ||
            name == "pop" || name == "remove" || name == "reverse" || name == "sort") {
            return unsafe(obj, name);
        }
        found = false;
    }
    return Value();
}

bool has_filter(std::string_view name) {
    return filters().count(name) != 0;
}

Value run_filter(Interp& in, const std::string& name, const Value& v, CallArgs& args) {
    const auto it = filters().find(name);
    if (it == filters().end()) fail_type("no filter named '" + name + "'");
    return it->second(in, v, args);
}

bool has_test(std::string_view name) {
    return tests().count(name) != 0;
}

bool run_test(Interp& in, const std::string& name, const Value& v, CallArgs& args) {
    const auto it = tests().find(name);
    if (it == tests().end()) fail_type("no test named '" + name + "'");
    return it->second(in, v, args);
}

void add_globals(Interp& in, std::unordered_map<std::string, Value>& g) {
    g["raise_exception"] = Value::function("raise_exception", [](Args& a) -> Value {
        const Value* m = arg(a, 0, "message");
        throw Failure{Error::Kind::Raised, m ? m->str() : std::string()};
    });
    Interp* ip = &in;
    g["strftime_now"] = Value::function("strftime_now", [ip](Args& a) {
        const std::string fmt = str_arg(a, 0, "format").value_or("");
        if (ip->options().strftime_now) return Value(ip->options().strftime_now(fmt));
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        localtime_r(&now, &tm);
        return Value(format_time(fmt, tm));
    });
    g["range"] = Value::function("range", [](Args& a) {
        int64_t start = 0, stop = 0, step = 1;
        auto num = [](const Value& v) {
            if (!v.is_int() && !v.is_bool())
                fail_type("'" + v.type_name() + "' object cannot be interpreted as an integer");
            return v.is_bool() ? static_cast<int64_t>(v.as_bool()) : v.as_int();
        };
        if (a.positional.size() == 1) {
            stop = num(a.positional[0]);
        } else if (a.positional.size() == 2 || a.positional.size() == 3) {
            start = num(a.positional[0]);
            stop = num(a.positional[1]);
            if (a.positional.size() == 3) step = num(a.positional[2]);
        } else {
            fail_type("range expected 1 to 3 arguments, got " +
                      std::to_string(a.positional.size()));
        }
        if (step == 0) fail_type("range() arg 3 must not be zero");
        const double count = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) /
                                       static_cast<double>(step));
        if (count > 100000) {
            throw Failure{
                Error::Kind::Limit,
                "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."};
        }
        std::vector<Value> out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
        return Value::list(std::move(out));
    });
    auto make_dict = [](Args& a, bool ns) {
        auto d = std::make_shared<Dict>();
        if (!a.positional.empty()) {
            if (a.positional.size() > 1 || !a.positional[0].is_dict())
                fail_type("expected a mapping and keyword arguments");
            d->items = a.positional[0].as_dict().items;
        }
        for (const auto& [k, v] : a.keyword) d->set(Value(k), v);
        if (!ns) return Value(d);
        const Value sealed(d);  // checks the depth of what the namespace is given
        auto n = std::make_shared<Namespace>();
        n->attrs = *d;
        n->depth = d->depth;
        if (RenderBudget* b = RenderBudget::current()) b->adopt(n);
        return Value(n);
    };
    g["namespace"] =
        Value::function("namespace", [make_dict](Args& a) { return make_dict(a, true); });
    g["dict"] = Value::function("dict", [make_dict](Args& a) { return make_dict(a, false); });
    g["joiner"] = Value::function("joiner", [](Args& a) {
        const std::string sep = str_arg(a, 0, "sep").value_or(", ");
        auto used = std::make_shared<bool>(false);
        return Value::function("joiner", [sep, used](Args&) {
            if (!*used) {
                *used = true;
                return Value("");
            }
            return Value(sep);
        });
    });
}

}  // namespace wb::chat::jinja
