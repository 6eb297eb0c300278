#pragma once
// Pieces the `batch` and `bench --concurrency` commands share: loading a
// model for n_parallel slots, and printing metric snapshots as a table or
// JSON.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "metrics/metrics_json.h"
#include "metrics/metrics_store.h"
#include "metrics/metrics_table.h"
#include "model/model.h"
#include "sampling/sampler.h"
#include "tokenizer/vocab.h"

namespace wb::cli {

/// A model ready for the scheduler, with its vocabulary.
struct BatchModel {
    std::string path;
    tokenizer::Vocab vocab;
    std::unique_ptr<model::Model> model;
};

/// Loads the model at `path` for `n_parallel` requests at once: reads the
/// context options (--backend, --device, -c, --kv-type; common_options.h)
/// from `args`. -c is the context: the KV pool's size in tokens, shared by
/// the running requests, one of which may use all of it. Without -c the
/// pool holds n_parallel times `default_per_request` (if non-zero, else
/// load_options_from_args' default: min(training context, 4096)), at most
/// 16777216. n_seq_max = n_parallel. Throws UsageError for bad options and
/// whatever gguf::File::open, Vocab::from_gguf and load_model throw.
BatchModel load_batch_model(const std::string& path, const ParsedArgs& args, uint32_t n_parallel,
                            uint32_t default_per_request = 0);

/// The context options of batch and bench --concurrency: common_options'
/// names, with -c described as the shared pool.
std::vector<OptionSpec> batch_context_options();

/// Sampling settings as a JSON object (for the run log and summaries).
nlohmann::json sampling_json(const sampling::SamplingParams& p);

/// The metrics table of a span (engine/metrics/metrics_table.h, shared
/// with the app's Batch panel).
using metrics::format_metrics_table;

/// A span's metrics as JSON (engine/metrics/metrics_json.h, shared with the
/// app's Batch panel).
using metrics::summary_json;
using metrics::window_json;

}  // namespace wb::cli
