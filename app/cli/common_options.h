#pragma once
// Options several workbench-cli commands share, so that generate, batch,
// bench and compare spell and default them the same way:
//   model:    -m/--model FILE (default: the bundled model, app/paths.h)
//   context:  --backend cpu|cpu-ref|vulkan (default: follows the hardware), -t/--threads N,
//   --device SEL, -c/--ctx-size N,
//   --kv-type f32|f16 sampling: --temp, --top-k, --top-p, --min-p, --repeat-penalty,
//             --repeat-last-n, --seed
// Usage: append model_options(), context_options(), sampling_options() to a
// CommandSpec's options, then read them back with the *_from_args helpers.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "core/context_size.h"
#include "cost/price.h"
#include "loader/backend_choice.h"
#include "loader/load.h"
#include "runlog/run_log.h"
#include "sampling/sampler.h"

namespace wb::cli {

/// How the help of --backend describes the default (it follows the
/// hardware; see default_backend()).
inline constexpr const char* kDefaultBackendHelp =
    "default: vulkan when a Vulkan device is a GPU, else cpu (see `workbench-cli devices`)";

/// Backend a command uses when --backend is not given, with the CPU
/// backend's threads and the reason: model::detect_default_backend(), run
/// once per process (the first call creates and destroys a Vulkan
/// instance) and kept. "vulkan" when a Vulkan device is a real GPU; "cpu"
/// (the threaded CPU executor, quantized kernels, one thread per physical
/// core) when every device is a CPU device (lavapipe, SwiftShader) or
/// there is none. Never throws (but std::bad_alloc).
const model::BackendChoice& default_backend();

/// default_backend() in one line for `info` and `devices`: "cpu, 2 threads
/// (default: no GPU found: ...; --backend picks another)" or "vulkan
/// (default: GPU found: ...; --backend picks another)". Never throws (but
/// std::bad_alloc).
std::string default_backend_line();

/// `given` if set, else wb::paths::default_model_path(). Throws
/// std::runtime_error listing the folders searched when there is no
/// default model.
std::string resolve_model_path(const std::optional<std::string>& given);

/// -m/--model FILE.
std::vector<OptionSpec> model_options();
/// --backend, -t/--threads, --device, -c/--ctx-size, --kv-type.
std::vector<OptionSpec> context_options();
/// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n, --seed.
std::vector<OptionSpec> sampling_options();

/// Appends `more` to `base` (to build a CommandSpec's option list).
std::vector<OptionSpec> concat(std::vector<OptionSpec> base, const std::vector<OptionSpec>& more);

/// The default context and its pool (core/context_size.h): one rule for the
/// CLI and the app. What batch and plan use when -c is not given.
using core::default_context;
using core::pool_for;

/// LoadOptions from context_options(). backend: --backend if given (an
/// explicit choice always wins), else default_backend().backend. threads:
/// -t if given, else 0 (the engine's default: physical cores). n_ctx: -c if given, else
/// min(n_ctx_train, 4096) where n_ctx_train comes from `n_ctx_train`
/// (the model's training context). Throws UsageError for bad values.
model::LoadOptions load_options_from_args(const ParsedArgs& args, uint32_t n_ctx_train);

/// The --kv-type option, worded the same in every command: f32|f16,
/// default f16 (model::ContextParams, as llama.cpp).
OptionSpec kv_type_option();
/// --kv-type's value (default model::ContextParams{}.kv_type). Throws
/// UsageError naming the option and the accepted values otherwise.
model::KvType kv_type_from_args(const ParsedArgs& args);

/// SamplingParams from sampling_options(); llama.cpp's defaults (temp 0.8,
/// top-k 40, top-p 0.95, min-p 0.05, repeat penalty 1.0 over 64 tokens);
/// without --seed a random seed (std::random_device), so that callers can
/// report it and a run can be repeated with --seed. Throws UsageError.
sampling::SamplingParams sampling_from_args(const ParsedArgs& args);

/// The run log a command writes or reads: --db PATH when given, else
/// runlog::default_db_path(). The default is looked up only when --db is
/// absent, so --db works where HOME is unset. Throws std::runtime_error
/// (from default_db_path) when --db is absent and no data folder is known.
std::string run_log_path(const ParsedArgs& args);

/// Opens the run log for writing (runlog::RunLog::open on run_log_path())
/// and prints what the open did or saw to stderr, one line each ("note:
/// created the run log's folder ...", "warning: ... open to other users").
/// Throws as RunLog::open.
std::shared_ptr<runlog::RunLog> open_run_log(const ParsedArgs& args);

/// --price-per-hour, --price-per-m-input, --price-per-m-output, --currency
/// (cost::Price), worded the same in every command that prices work;
/// `hour_basis` says what an hour is charged on there ("each step's wall
/// time", "the engine's busy time").
std::vector<OptionSpec> price_options(const std::string& hour_basis);
/// The price those options give, nullopt when none is given. Throws
/// UsageError prefixed with `command` for a bad amount or both kinds.
std::optional<cost::Price> price_from_args(const ParsedArgs& args, const std::string& command);

/// Prints `log`'s open_notices() to stderr as open_run_log() does.
void print_open_notices(const runlog::RunLog& log);

/// Prints each of `warnings` (a model's load warnings,
/// tokenizer::Vocab::load_warnings()) to stderr, one line "warning: <text>"
/// each. Never throws.
void print_warnings(const std::vector<std::string>& warnings);

/// Prints one "warning:" line to stderr when the context one sequence may
/// use, `n_ctx` / `n_parallel` (tokens of the KV pool per running request),
/// is larger than the model's training context `n_ctx_train` (tokens; 0 =
/// unknown: nothing printed), as llama.cpp warns "n_ctx_per_seq > n_ctx_train
/// -- possible training context overflow". Never throws.
void warn_context_past_n_ctx_train(uint32_t n_ctx, uint32_t n_parallel, uint32_t n_ctx_train);

}  // namespace wb::cli
