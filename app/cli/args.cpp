#include "args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <sstream>

namespace wb::cli {

namespace {

const OptionSpec* find_long(const CommandSpec& spec, std::string_view name) {
    for (const OptionSpec& o : spec.options) {
        if (o.long_name == name) return &o;
    }
    return nullptr;
}

const OptionSpec* find_short(const CommandSpec& spec, char c) {
    for (const OptionSpec& o : spec.options) {
        if (o.short_name != 0 && o.short_name == c) return &o;
    }
    return nullptr;
}

}  // namespace

bool ParsedArgs::has(std::string_view long_name) const {
    return values_.find(long_name) != values_.end();
}

std::optional<std::string> ParsedArgs::get(std::string_view long_name) const {
    auto [lo, hi] = values_.equal_range(long_name);
    if (lo == hi) return std::nullopt;
    return std::prev(hi)->second;  // multimap keeps insertion order among equal keys
}

std::vector<std::string> ParsedArgs::get_all(std::string_view long_name) const {
    std::vector<std::string> out;
    auto [lo, hi] = values_.equal_range(long_name);
    for (auto it = lo; it != hi; ++it) out.push_back(it->second);
    return out;
}

int64_t ParsedArgs::get_int(std::string_view long_name, int64_t fallback, int64_t lo,
                            int64_t hi) const {
    std::optional<std::string> v = get(long_name);
    if (!v) return fallback;
    errno = 0;
    char* end = nullptr;
    long long x = std::strtoll(v->c_str(), &end, 10);
    if (v->empty() || *end != '\0' || errno == ERANGE || x < lo || x > hi) {
        throw UsageError("--" + std::string(long_name) + ": '" + *v + "' is not an integer in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return x;
}

double ParsedArgs::get_double(std::string_view long_name, double fallback, double lo,
                              double hi) const {
    std::optional<std::string> v = get(long_name);
    if (!v) return fallback;
    char* end = nullptr;
    double x = std::strtod(v->c_str(), &end);
    if (v->empty() || *end != '\0' || !std::isfinite(x) || x < lo || x > hi) {
        std::ostringstream os;
        os << "--" << long_name << ": '" << *v << "' is not a number in [" << lo << ", " << hi
           << "]";
        throw UsageError(os.str());
    }
    return x;
}

ParsedArgs parse_args(const CommandSpec& spec, const std::vector<std::string>& argv) {
    ParsedArgs out;
    bool options_done = false;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (options_done || a.size() < 2 || a[0] != '-') {
            out.positional.push_back(a);
            continue;
        }
        if (a == "--") {
            options_done = true;
            continue;
        }
        if (a == "-h" || a == "--help") {
            out.help = true;
            continue;
        }
        const OptionSpec* opt = nullptr;
        std::optional<std::string> inline_value;
        std::string shown = a;
        if (a.rfind("--", 0) == 0) {
            std::string name = a.substr(2);
            if (size_t eq = name.find('='); eq != std::string::npos) {
                inline_value = name.substr(eq + 1);
                name.resize(eq);
                shown = "--" + name;
            }
            opt = find_long(spec, name);
        } else if (a.size() == 2) {
            opt = find_short(spec, a[1]);
        }
        if (!opt) {
            // A negative number is a value, not an option, only where a value
            // is expected (handled below); here it is unknown.
            throw UsageError(spec.name + ": unknown option '" + shown + "'");
        }
        std::string value;
        if (opt->metavar.empty()) {
            if (inline_value) throw UsageError(spec.name + ": " + shown + " takes no value");
        } else if (inline_value) {
            value = *inline_value;
        } else {
            if (i + 1 >= argv.size()) {
                throw UsageError(spec.name + ": " + shown + " needs a value (" + opt->metavar +
                                 ")");
            }
            value = argv[++i];
        }
        out.values_.emplace(opt->long_name, value);
        out.ordered_.emplace_back(opt->long_name, value);
    }
    if (!out.help && (out.positional.size() < spec.min_positional ||
                      out.positional.size() > spec.max_positional)) {
        std::string expect = spec.min_positional == spec.max_positional
                                 ? std::to_string(spec.min_positional)
                                 : std::to_string(spec.min_positional) + " to " +
                                       std::to_string(spec.max_positional);
        throw UsageError(spec.name + ": expected " + expect + " argument(s) (" +
                         (spec.args_usage.empty() ? "none" : spec.args_usage) + "), got " +
                         std::to_string(out.positional.size()));
    }
    return out;
}

std::string help_text(const CommandSpec& spec) {
    std::ostringstream os;
    os << "Usage: workbench-cli " << spec.name;
    if (!spec.options.empty()) os << " [OPTIONS]";
    if (!spec.args_usage.empty()) os << ' ' << spec.args_usage;
    os << "\n" << spec.summary << "\n";
    if (!spec.description.empty()) os << "\n" << spec.description << "\n";
    os << "\nOptions:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const OptionSpec& o : spec.options) {
        std::string left = o.short_name ? std::string("-") + o.short_name + ", " : "    ";
        left += "--" + o.long_name;
        if (!o.metavar.empty()) left += " " + o.metavar;
        rows.emplace_back(left, o.help);
    }
    rows.emplace_back("-h, --help", "show this help and exit");
    size_t width = 0;
    for (const auto& r : rows) width = std::max(width, r.first.size());
    for (const auto& r : rows) {
        os << "  " << r.first << std::string(width - r.first.size() + 2, ' ') << r.second << "\n";
    }
    return os.str();
}

}  // namespace wb::cli
