#include "server/metrics/prometheus.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "runlog/utf8.h"

namespace wb::server {

namespace {

bool is_metric_name(const std::string& s) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

bool is_label_name(const std::string& s) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
    }
    return true;
}

const char* type_name(Family::Type t) {
    switch (t) {
        case Family::Type::Counter:
            return "counter";
        case Family::Type::Gauge:
            return "gauge";
        case Family::Type::Histogram:
            return "histogram";
    }
    return "untyped";
}

}  // namespace

std::string format_value(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[64];
    // Shortest round-trip form: Go's ParseFloat (and Python's float())
    // read it back as exactly this double.
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string escape_label_value(const std::string& value) {
    // The format is UTF-8: a byte that is not (a raw client string) would
    // make the whole scrape unreadable.
    const std::string v = runlog::to_valid_utf8(value);
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

std::string escape_help(const std::string& text) {
    const std::string v = runlog::to_valid_utf8(text);
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

Family::Family(Type type, std::string name, std::string help, std::vector<std::string> label_names)
    : type_(type),
      name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)) {
    if (!is_metric_name(name_))
        throw std::invalid_argument("metric name \"" + name_ +
                                    "\" is not [a-zA-Z_:][a-zA-Z0-9_:]*");
    std::set<std::string> seen;
    for (const std::string& l : label_names_) {
        if (!is_label_name(l))
            throw std::invalid_argument("metric " + name_ + ": label name \"" + l +
                                        "\" is not [a-zA-Z_][a-zA-Z0-9_]*");
        if (l.rfind("__", 0) == 0)
            throw std::invalid_argument("metric " + name_ + ": label name \"" + l +
                                        "\" starts with __ (reserved)");
        if (type_ == Type::Histogram && l == "le")
            throw std::invalid_argument("metric " + name_ +
                                        ": label name \"le\" is reserved in a histogram");
        if (!seen.insert(l).second)
            throw std::invalid_argument("metric " + name_ + ": label name \"" + l + "\" repeats");
    }
}

void Family::check_arity(const std::vector<std::string>& values) const {
    if (values.size() != label_names_.size())
        throw std::invalid_argument("metric " + name_ + ": " + std::to_string(values.size()) +
                                    " label values for " + std::to_string(label_names_.size()) +
                                    " label names");
}

std::string Family::label_text(const std::vector<std::string>& values, bool open_for_more) const {
    if (label_names_.empty() && !open_for_more) return {};
    std::string s = "{";
    for (size_t i = 0; i < label_names_.size(); ++i) {
        if (i > 0) s += ',';
        s += label_names_[i];
        s += "=\"";
        s += escape_label_value(values[i]);
        s += '"';
    }
    return s;
}

void Family::render_header(std::string& out) const {
    out += "# HELP " + name_ + ' ' + escape_help(help_) + '\n';
    out += "# TYPE " + name_ + ' ' + type_name(type_) + '\n';
}

// ---- counter

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : Family(Type::Counter, std::move(name), std::move(help), std::move(label_names)) {}

void CounterFamily::inc(const std::vector<std::string>& values, double by) {
    check_arity(values);
    if (!(by >= 0.0) || std::isinf(by))
        throw std::invalid_argument("counter " + name_ + ": increment " + format_value(by) +
                                    " is not a finite number >= 0");
    std::lock_guard lock(mu_);
    series_[values] += by;
}

double CounterFamily::value(const std::vector<std::string>& values) const {
    std::lock_guard lock(mu_);
    auto it = series_.find(values);
    return it == series_.end() ? 0.0 : it->second;
}

double CounterFamily::sum_matching(const std::vector<std::string>& pattern) const {
    std::lock_guard lock(mu_);
    double sum = 0.0;
    for (const auto& [labels, v] : series_) {
        bool match = true;
        for (size_t i = 0; i < pattern.size() && i < labels.size() && match; ++i)
            match = pattern[i].empty() || pattern[i] == labels[i];
        if (match) sum += v;
    }
    return sum;
}

void CounterFamily::render(std::string& out) const {
    render_header(out);
    std::lock_guard lock(mu_);
    for (const auto& [values, v] : series_) {
        const std::string labels = label_text(values, false);
        out += name_ + labels + (labels.empty() ? " " : "} ") + format_value(v) + '\n';
    }
}

// ---- gauge

GaugeFamily::GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names)
    : Family(Type::Gauge, std::move(name), std::move(help), std::move(label_names)) {}

void GaugeFamily::set(const std::vector<std::string>& values, double v) {
    check_arity(values);
    std::lock_guard lock(mu_);
    series_[values] = v;
}

void GaugeFamily::render(std::string& out) const {
    render_header(out);
    std::lock_guard lock(mu_);
    for (const auto& [values, v] : series_) {
        const std::string labels = label_text(values, false);
        out += name_ + labels + (labels.empty() ? " " : "} ") + format_value(v) + '\n';
    }
}

// ---- histogram

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names, std::vector<double> bounds)
    : Family(Type::Histogram, std::move(name), std::move(help), std::move(label_names)),
      bounds_(std::move(bounds)) {
    if (bounds_.empty()) throw std::invalid_argument("histogram " + name_ + ": no bucket bounds");
    for (size_t i = 0; i < bounds_.size(); ++i) {
        if (!std::isfinite(bounds_[i]))
            throw std::invalid_argument("histogram " + name_ + ": bucket bound " +
                                        format_value(bounds_[i]) +
                                        " is not finite (+Inf is added by itself)");
        if (i > 0 && !(bounds_[i] > bounds_[i - 1]))
            throw std::invalid_argument("histogram " + name_ +
                                        ": bucket bounds not increasing at " +
                                        format_value(bounds_[i]));
    }
}

void HistogramFamily::observe(const std::vector<std::string>& values, double v) {
    check_arity(values);
    if (std::isnan(v)) throw std::invalid_argument("histogram " + name_ + ": observed NaN");
    // First bound >= v: the bucket "le" that bound (v above every bound: +Inf).
    const size_t b =
        static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
    std::lock_guard lock(mu_);
    Series& s = series_[values];
    if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
    ++s.buckets[b];
    s.sum += v;
    ++s.count;
}

uint64_t HistogramFamily::count(const std::vector<std::string>& values) const {
    std::lock_guard lock(mu_);
    auto it = series_.find(values);
    return it == series_.end() ? 0 : it->second.count;
}

double HistogramFamily::quantile(const std::vector<std::string>& values, double q) const {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    if (!(q >= 0.0 && q <= 1.0)) return kNaN;
    std::lock_guard lock(mu_);
    const auto it = series_.find(values);
    if (it == series_.end() || it->second.count == 0) return kNaN;
    const Series& s = it->second;
    const double rank = q * static_cast<double>(s.count);
    double below = 0.0;  // observations in the buckets before b
    for (size_t b = 0; b < bounds_.size(); ++b) {
        const auto in = static_cast<double>(s.buckets[b]);
        if (below + in >= rank && in > 0) {
            const double lo = b == 0 ? 0.0 : bounds_[b - 1];
            return lo + (bounds_[b] - lo) * (rank - below) / in;
        }
        below += in;
    }
    return bounds_.back();  // the rank is in +Inf
}

void HistogramFamily::render(std::string& out) const {
    render_header(out);
    std::lock_guard lock(mu_);
    for (const auto& [values, s] : series_) {
        const std::string open = label_text(values, true);
        const std::string sep = label_names_.empty() ? "" : ",";
        uint64_t cumulative = 0;
        for (size_t i = 0; i <= bounds_.size(); ++i) {
            cumulative += s.buckets[i];
            const std::string le = i < bounds_.size() ? format_value(bounds_[i]) : "+Inf";
            out += name_ + "_bucket" + open + sep + "le=\"" + le + "\"} " +
                   std::to_string(cumulative) + '\n';
        }
        const std::string labels = label_text(values, false);
        const std::string close = labels.empty() ? " " : "} ";
        out += name_ + "_sum" + labels + close + format_value(s.sum) + '\n';
        out += name_ + "_count" + labels + close + std::to_string(s.count) + '\n';
    }
}

// ---- registry

template <class F, class... A>
F& Registry::add(const std::string& name, A&&... args) {
    auto f = std::make_unique<F>(name, std::forward<A>(args)...);
    F& ref = *f;
    std::lock_guard lock(mu_);
    for (const auto& g : families_)
        if (g->name() == name)
            throw std::invalid_argument("metric " + name + " is registered twice");
    families_.push_back(std::move(f));
    return ref;
}

CounterFamily& Registry::counter(const std::string& name, const std::string& help,
                                 std::vector<std::string> label_names) {
    return add<CounterFamily>(name, help, std::move(label_names));
}

GaugeFamily& Registry::gauge(const std::string& name, const std::string& help,
                             std::vector<std::string> label_names) {
    return add<GaugeFamily>(name, help, std::move(label_names));
}

HistogramFamily& Registry::histogram(const std::string& name, const std::string& help,
                                     std::vector<std::string> label_names,
                                     std::vector<double> bounds) {
    return add<HistogramFamily>(name, help, std::move(label_names), std::move(bounds));
}

std::string Registry::render() const {
    std::string out;
    std::lock_guard lock(mu_);
    for (const auto& f : families_) f->render(out);
    return out;
}

}  // namespace wb::server
