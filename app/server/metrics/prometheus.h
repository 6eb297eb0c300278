#pragma once
// A small Prometheus metrics registry: counter, gauge and histogram
// families with label sets, rendered in the text exposition format 0.0.4
// (prometheus.io/docs/instrumenting/exposition_formats: "# HELP" and
// "# TYPE" lines, label values with backslash, double quote and line feed
// escaped, cumulative histogram buckets `_bucket{le="..."}` ending in
// le="+Inf", then `_sum` and `_count`; values as Go's ParseFloat reads
// them, "+Inf", "-Inf" and "NaN" included).
//
// Threads: every method may be called from any thread. Each family has its
// own mutex: an observation (the session's delivery thread) holds it for a
// map lookup and an add, a render (an HTTP worker) holds it while it
// formats that one family. Families live as long as the registry; the
// references the registry hands out stay valid.
// Qt-free.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace wb::server {

/// The text format's value spelling: the shortest decimal that reads back
/// as the same double ("0.005", "3", "1e-05"), "+Inf", "-Inf", "NaN".
std::string format_value(double v);

/// A label value escaped for the text format: backslash -> \\, double
/// quote -> \", line feed -> \n; a byte that is not valid UTF-8 -> U+FFFD
/// (the format is UTF-8); everything else as it is.
std::string escape_label_value(const std::string& value);

/// A HELP docstring escaped for the text format: backslash -> \\, line
/// feed -> \n; a byte that is not valid UTF-8 -> U+FFFD.
std::string escape_help(const std::string& text);

/// What every family shares: name, help, label names, one mutex.
class Family {
  public:
    enum class Type { Counter, Gauge, Histogram };
    virtual ~Family() = default;
    const std::string& name() const { return name_; }  ///< the metric name (TYPE line)
    Type type() const { return type_; }                ///< counter, gauge or histogram
    /// Appends this family's HELP, TYPE and sample lines to `out` (nothing
    /// but HELP and TYPE while it has no series).
    virtual void render(std::string& out) const = 0;

  protected:
    /// Throws std::invalid_argument when `name` is not a metric name
    /// ([a-zA-Z_:][a-zA-Z0-9_:]*), a label name is not [a-zA-Z_][a-zA-Z0-9_]*,
    /// starts with "__", repeats, or is "le" in a histogram.
    Family(Type type, std::string name, std::string help, std::vector<std::string> label_names);
    /// Throws std::invalid_argument unless `values` has one value per label name.
    void check_arity(const std::vector<std::string>& values) const;
    /// `{a="x",b="y"` (open: the caller closes it or adds `le`) for
    /// `values`, or "" when the family has no labels and `open_for_more` is false.
    std::string label_text(const std::vector<std::string>& values, bool open_for_more) const;
    void render_header(std::string& out) const;

    Type type_;
    std::string name_, help_;
    std::vector<std::string> label_names_;
    mutable std::mutex mu_;
};

/// A counter: a value per label set that only goes up. Samples are named
/// as the family (give it the conventional `_total` suffix).
class CounterFamily final : public Family {
  public:
    /// Throws std::invalid_argument for a bad metric or label name (Family).
    CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
    /// Adds `by` (>= 0, finite) to the series `values` (one per label
    /// name), creating it at 0. Throws std::invalid_argument for a negative
    /// or non-finite `by` or the wrong number of values.
    void inc(const std::vector<std::string>& values, double by = 1.0);
    /// The series' value (0 when it does not exist).
    double value(const std::vector<std::string>& values) const;
    /// The sum over every series whose label values equal `pattern`'s where
    /// those are not "" ("" matches any value; a shorter pattern leaves the
    /// remaining labels free), as PromQL's sum(metric{a="x"}); 0 when none.
    double sum_matching(const std::vector<std::string>& pattern) const;
    /// HELP, TYPE and one line per series, series in label-value order.
    void render(std::string& out) const override;

  private:
    std::map<std::vector<std::string>, double> series_;
};

/// A gauge: a value per label set, set to anything (NaN and +-Inf too).
class GaugeFamily final : public Family {
  public:
    /// Throws std::invalid_argument for a bad metric or label name (Family).
    GaugeFamily(std::string name, std::string help, std::vector<std::string> label_names);
    /// Sets the series `values` to `v`. Throws std::invalid_argument for
    /// the wrong number of values.
    void set(const std::vector<std::string>& values, double v);
    /// HELP, TYPE and one line per series, series in label-value order.
    void render(std::string& out) const override;

  private:
    std::map<std::vector<std::string>, double> series_;
};

/// A histogram: per label set, a count per bucket (upper bounds `le`,
/// cumulative when rendered), the sum and the count of the observations.
class HistogramFamily final : public Family {
  public:
    /// `bounds`: the buckets' upper bounds, finite and strictly increasing
    /// (a "+Inf" bucket is always added). Throws std::invalid_argument
    /// otherwise, or for an empty list.
    HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                    std::vector<double> bounds);
    /// Counts `v` in the first bucket with v <= bound (le: "less than or
    /// equal"), else only in +Inf; adds it to the sum. Throws
    /// std::invalid_argument for NaN or the wrong number of values.
    void observe(const std::vector<std::string>& values, double v);
    /// Observations of the series so far (0 when it does not exist).
    uint64_t count(const std::vector<std::string>& values) const;
    const std::vector<double>& bounds() const { return bounds_; }  ///< as given (no +Inf)
    /// The q-quantile (0..1) of the series, estimated from its buckets as
    /// PromQL's histogram_quantile() does: linear within the bucket the rank
    /// q * count falls in, the first bucket starting at 0, the highest
    /// finite bound when the rank falls in +Inf. NaN without observations
    /// or for q outside 0..1. Never throws.
    double quantile(const std::vector<std::string>& values, double q) const;
    /// HELP, TYPE, then per series (label-value order) its cumulative
    /// `_bucket` lines in le order ending with le="+Inf", `_sum`, `_count`.
    void render(std::string& out) const override;

  private:
    struct Series {
        std::vector<uint64_t> buckets;  // [bounds + 1] per bucket, not cumulative; last: +Inf
        double sum = 0.0;
        uint64_t count = 0;
    };
    std::vector<double> bounds_;
    std::map<std::vector<std::string>, Series> series_;
};

/// A set of families rendered together, in the order they were added.
class Registry {
  public:
    /// Adds a family and returns it (valid as long as the registry). Throws
    /// std::invalid_argument for a name already registered, or what the
    /// family's constructor throws.
    CounterFamily& counter(const std::string& name, const std::string& help,
                           std::vector<std::string> label_names);
    GaugeFamily& gauge(const std::string& name, const std::string& help,
                       std::vector<std::string> label_names);
    HistogramFamily& histogram(const std::string& name, const std::string& help,
                               std::vector<std::string> label_names, std::vector<double> bounds);

    /// Every family in the text format 0.0.4 (each line ends in '\n').
    std::string render() const;
    /// The Content-Type of render()'s text.
    static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

  private:
    template <class F, class... A>
    F& add(const std::string& name, A&&... args);
    mutable std::mutex mu_;
    std::vector<std::unique_ptr<Family>> families_;
};

}  // namespace wb::server
