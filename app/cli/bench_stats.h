#pragma once
// Summary of repeated timings, shared by `bench` (tokens/s over -r
// repetitions) and `bench --cold-start` (each load phase over -r processes):
// both report the median with the spread, as llama-bench and hyperfine do.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/metrics_store.h"

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

/// The header line of `bench --concurrency`'s table (ends with a newline):
/// conc, requests, wall s, in tok/s, out tok/s, req/s, wait p50/p95/p99,
/// TTFT p50/p99, ITL p50/p99, speedup. Every column is right-aligned and
/// wide enough for a level's figures up to 99 999 s of wall time, 10^9
/// tokens/s, 10^6 requests/s and 10^6 s of latency, so the rows, printed as
/// each level ends, stay under their names.
std::string concurrency_table_header();

/// One level's row of that table (ends with a newline): `level` slots,
/// `requests` submitted, then from `run` (the level's whole-run span) its
/// wall time in s, input/output tokens/s and requests/s over it, queue wait
/// p50/p95/p99 and TTFT p50/p99 in ms (2 decimals), ITL p50/p99 in ms (3
/// decimals), and run.output_tokens_per_s / `base_output_tokens_per_s`
/// (the first level's) as "1.00x". NaN prints as "nan". Never throws
/// except std::bad_alloc.
std::string concurrency_table_row(uint32_t level, size_t requests, const metrics::WindowStats& run,
                                  double base_output_tokens_per_s);

}  // namespace wb::cli
