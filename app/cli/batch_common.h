#pragma once
// Pieces the `batch` and `bench --concurrency` commands share: the session
// options for n_parallel slots, and printing metric snapshots as a table or
// JSON.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "core/engine_session.h"
#include "metrics/metrics_json.h"
#include "metrics/metrics_store.h"
#include "metrics/metrics_table.h"

namespace wb::cli {

/// Session options for `n_parallel` requests at once of the model at
/// `path`: reads the context options (--backend, --device, -c, --kv-type;
/// common_options.h) from `args`. -c is the context: the KV pool's size in
/// tokens, shared by the running requests, one of which may use all of it.
/// Without -c the pool holds n_parallel times `default_per_request` (if
/// non-zero, else load_options_from_args' default: min(training context,
/// 4096)), at most 16777216. n_seq_max = n_parallel. Throws UsageError for
/// bad options and what gguf::File::open and HParams::from_gguf throw.
core::SessionOptions batch_session_options(const std::string& path, const ParsedArgs& args,
                                           uint32_t n_parallel, uint32_t default_per_request = 0);

/// The context options of batch and bench --concurrency: common_options'
/// names, with -c described as the shared pool.
std::vector<OptionSpec> batch_context_options();

/// The metrics table of a span (engine/metrics/metrics_table.h, shared
/// with the app's Batch panel).
using metrics::format_metrics_table;

/// A span's metrics as JSON (engine/metrics/metrics_json.h, shared with the
/// app's Batch panel).
using metrics::summary_json;
using metrics::window_json;

}  // namespace wb::cli
