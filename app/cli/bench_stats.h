#pragma once
// Summary of repeated timings, shared by `bench` (tokens/s over -r
// repetitions) and `bench --cold-start` (each load phase over -r processes):
// both report the median with the spread, as llama-bench and hyperfine do.

#include <string>
#include <vector>

namespace wb::cli {

/// Median, sample standard deviation, minimum and maximum of a set of
/// repetitions, in the unit of the inputs (ms, tokens/s). With no values
/// every field is NaN; with one, stdev is 0. The median of an even count is
/// the mean of the two middle values.
struct RepeatStats {
    double median, stdev, min, max;
};

/// The summary of `values` (order does not matter; the copy is sorted).
RepeatStats repeat_stats(std::vector<double> values);

/// How a column's cells are padded to its width.
enum class Align { Left, Right };

/// A text table whose columns are as wide as their widest cell (header
/// included), so long names and large numbers never push a column out of
/// line. `rows[0]` is the header; every row has `align.size()` cells
/// (missing cells print empty, extra ones are ignored). Widths count bytes,
/// so cells should be ASCII. `pipes`: each line is "| a | b |" (a Markdown
/// table, as llama-bench prints); else cells are joined by one space. Every
/// line ends with a newline. Never throws except std::bad_alloc.
std::string format_columns(const std::vector<std::vector<std::string>>& rows,
                           const std::vector<Align>& align, bool pipes);

}  // namespace wb::cli
