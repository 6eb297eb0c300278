#pragma once
// Summary of repeated timings, shared by `bench` (tokens/s over -r
// repetitions) and `bench --cold-start` (each load phase over -r processes):
// both report the median with the spread, as llama-bench and hyperfine do.

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

}  // namespace wb::cli
