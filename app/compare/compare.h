#pragma once
// The comparison engine behind `workbench-cli compare` and the Compare tab:
// models A (reference, first) and B, C... (variants) run the same workload
// with the same greedy settings, and the report holds per model
//  - load time, weight bytes (as stored in the file) and KV-cache bytes;
//  - speed from our own timing of the greedy runs, measured as llama-bench
//    does: one request at a time, each model alone, one untimed warm-up
//    pass over the prompts per model (first-use work such as pipeline
//    compilation), then `repetitions` timed passes (the models' passes
//    taken in turn, so background load falls on all alike, each after one
//    short untimed request that brings its own weights back into the CPU
//    caches); prefill and decode
//    tokens/s, TTFT and end-to-end latency as the median and the range
//    (min-max) of one sample per timed pass (speed_method() says it in words);
//  - against A: teacher-forced greedy agreement on A's output, the first
//    step where free-running greedy outputs split, KL divergence (mean,
//    median, p99, max) and top-1 agreement over a text;
//  - perplexity on a text by llama.cpp's chunked rule (text_eval.h);
//  - accuracy on a JSONL test set and the items where models disagree.
// Models whose vocabularies differ from A's cannot be compared token by
// token: the report says so (notes) and still has their outputs, speed,
// perplexity and accuracy.
//
// Qt-free. Models come either from a caller-supplied loader, so the engine
// stays free of backend choices (the CLI passes wb::model::load_model), or
// already loaded by the caller (the Compare tab, which streamed each pane's
// reply with them and must not load every file a second time).

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compare/generation.h"
#include "compare/testset.h"
#include "compare/text_eval.h"
#include "metrics/percentile.h"
#include "model/model.h"

namespace wb::compare {

/// Builds a model from a GGUF path with the given context. Throws on failure.
using ModelLoader =
    std::function<std::unique_ptr<model::Model>(const std::string&, const model::ContextParams&)>;

/// Status lines ("loading B: stories260K-q8_0.gguf", "perplexity chunk 3/14").
using CompareProgress = std::function<void(const std::string&)>;

struct CompareOptions {
    std::vector<std::string> models;          ///< GGUF paths; [0] is the reference A
    std::optional<std::string> text_file;     ///< perplexity / KLD text
    std::optional<std::string> testset_file;  ///< JSONL test set (testset.h)
    std::vector<std::string> prompts;         ///< prompts for speed and agreement
    uint32_t n_predict = 48;                  ///< greedy tokens per prompt (no stop token)
    uint32_t ppl_ctx = 512;                   ///< perplexity window (llama-perplexity -c)
    uint32_t testset_max_tokens = 32;         ///< default max tokens per test item
    uint32_t n_ubatch = 512;                  ///< tokens per decode call at most
    /// Timed passes over the prompts per model, after one untimed warm-up
    /// pass: llama-bench's -r and its default 5. A pass (3 default prompts x
    /// 48 tokens) is about one llama-bench tg128 run, so the prompts take 6x
    /// the time of one cold pass; the median of 5 still holds when 2 passes
    /// are disturbed by other load on the machine (3 would take only 1).
    uint32_t repetitions = 5;
    model::KvType kv_type = model::ContextParams{}.kv_type;
};

/// Default prompts when none are given.
std::vector<std::string> default_prompts();

/// Untimed warm-up passes over the prompts per model before the timed ones.
inline constexpr uint32_t kWarmupPasses = 1;

/// One speed figure over a model's timed passes: one sample per pass, its
/// median (metrics::percentile_sorted p50: the middle sample, or the mean
/// of the two middle ones for an even count) and its range. Units are the
/// figure's (tokens/s or ms).
struct SpeedFigure {
    std::vector<double> samples;  ///< [repetitions] one per timed pass, in run order
    double median = 0;
    double min = 0;
    double max = 0;
};

/// The figure of `samples` (any order, one per timed pass). All fields 0
/// (and samples empty) when there are none.
SpeedFigure speed_figure(std::vector<double> samples);

/// How the speed figures are measured, in one sentence for the table's
/// footer, the JSON, the run log and the Compare tab's tooltips ("median
/// (min-max) of 3 timed passes after 1 untimed warm-up pass, ...").
std::string speed_method(uint32_t repetitions);

/// Everything measured for one model.
struct ModelReport {
    std::string path;
    std::string label;  ///< "A", "B", ...
    uint64_t file_bytes = 0;
    uint64_t weight_bytes = 0;  ///< sum of tensor bytes as stored
    uint64_t kv_bytes = 0;      ///< 2 * n_layer * n_ctx * n_head_kv * head_dim * element size
    uint32_t n_ctx = 0;         ///< context the model was loaded with
    std::string tensor_types;   ///< "Q8_0 x32, F16 x5, F32 x11"
    std::string quantization;   ///< file type and bits per weight, "Q4_K_M, 4.85 bpw"
    std::string backend;        ///< Model::backend_name()
    model::DeviceFacts device;  ///< Model::device_facts() (the run log's environment)
    /// Device bytes the engine allocated for the model (weights, KV cache,
    /// activations, staging; vk::MemoryReport::total) on the Vulkan backend;
    /// nullopt on the CPU backend, which has no device memory.
    std::optional<uint64_t> device_bytes;
    double load_ms = 0;
    int32_t n_vocab = 0;
    bool same_vocab = true;  ///< vocabulary identical to A's (token texts)

    // Prompt runs. The first timed pass gives the outputs and agreement
    // (greedy: every pass yields the same tokens) and the run-log rows.
    std::vector<GreedyRun> runs;       ///< [n_prompts] the first timed pass
    std::vector<std::string> outputs;  ///< [n_prompts] generated text
    /// [kWarmupPasses * n_prompts] the untimed warm-up runs, in run order;
    /// in no figure and never logged.
    std::vector<GreedyRun> warmup_runs;
    std::vector<std::vector<GreedyRun>> timed_runs;  ///< [repetitions][n_prompts]

    // Speed: one sample per timed pass (speed_figure), from that pass's runs.
    SpeedFigure prefill_tps;  ///< tokens/s: the pass's prompt tokens / its prefill time
    SpeedFigure decode_tps;   ///< tokens/s: the pass's tokens after the first / decode time
    SpeedFigure ttft_ms;      ///< ms: mean TTFT over the pass's prompts
    SpeedFigure e2e_ms;       ///< ms: mean end-to-end time over the pass's prompts

    // Against A (same vocabulary only; A against itself too).
    std::optional<TokenAgreement> teacher_forced;
    std::vector<std::optional<size_t>>
        divergence;                ///< [n_prompts] first split step, nullopt = none
    size_t identical_outputs = 0;  ///< prompts whose text equals A's

    std::optional<PerplexityResult> ppl;
    std::optional<KldResult> kld;

    std::vector<GreedyRun> test_runs;       ///< [n_items] ids and timing of each item
    std::vector<std::string> test_outputs;  ///< [n_items]
    std::vector<bool> test_correct;         ///< [n_items]
    size_t test_correct_count = 0;
};

struct CompareReport {
    std::vector<ModelReport> models;
    std::vector<std::string> prompts;
    uint32_t n_predict = 0;
    uint32_t repetitions = 0;  ///< timed passes per model (CompareOptions::repetitions)
    std::string kv_type;
    std::optional<std::string> text_file;
    uint32_t ppl_ctx = 0;
    std::optional<std::string> testset_file;
    std::vector<TestItem> test_items;
    std::vector<size_t>
        differing_items;             ///< items whose correctness is not the same for all models
    std::vector<std::string> notes;  ///< vocabulary mismatches and other remarks
};

/// Runs the whole comparison, loading every model of opts.models once with
/// `loader`, each with a context of exactly the KV cells its workload needs
/// (longest prompt + n_predict, longest test item + its max tokens,
/// ppl_ctx for the text; n_seq_max 1, opts.kv_type). The models are owned
/// here and freed on return. ModelReport::load_ms times the loader call.
/// The prompts' speed runs go one at a time, each model alone: every
/// model's kWarmupPasses untimed passes, then opts.repetitions timed
/// passes, pass k of every model before pass k + 1 of any.
/// Throws std::invalid_argument for no model or 0 repetitions (one model
/// is A against itself),
/// TestSetError /
/// TextTooShort for bad workloads and gguf::Error for unreadable model
/// files (all before any model is loaded), what `loader` throws (gguf::Error,
/// std::runtime_error, ...), what the models throw, and what `progress`
/// throws (the way to cancel: progress is called before every prompt run,
/// warm-up included, between chunks and between test items).
CompareReport run_compare(const CompareOptions& opts, const ModelLoader& loader,
                          const CompareProgress& progress = {});

/// A model the caller has already loaded, lent to run_compare.
struct LoadedModel {
    /// Borrowed: the caller owns it and keeps it alive for the whole call.
    /// It must be the model of the matching CompareOptions::models path.
    model::Model* model = nullptr;
    /// How long the caller's load took (ms); shown as the model's load time.
    double load_ms = 0;
};

/// Runs the same comparison on models the caller already loaded:
/// `models[i]` is opts.models[i] (the files are still read for their
/// vocabulary, sizes and tensor types, but no weights are loaded again).
/// Only KV-cache sequence 0 is used: it is emptied (Model::seq_rm(0))
/// before every prompt, text chunk and test item, so each starts from a
/// fresh cache whatever the model ran before, and it is left empty when the
/// call returns or throws; other sequences are not touched. ModelReport's
/// n_ctx / kv_bytes describe each model's own context.
/// Throws, before any decoding: std::invalid_argument when there are fewer
/// than 2 models or 0 repetitions, models.size() != opts.models.size(), a model is null, its
/// hyperparameters (n_vocab, n_layer, n_embd, n_head_kv, head_dim) are not
/// those of its file, its KV type is not opts.kv_type, or its context has
/// fewer free cells (after emptying sequence 0) than the workload needs
/// (the message names the model, the cells needed and those free);
/// TestSetError / TextTooShort for bad workloads and gguf::Error for
/// unreadable files. Later, what the models and `progress` throw, as above.
CompareReport run_compare(const CompareOptions& opts, std::span<const LoadedModel> models,
                          const CompareProgress& progress = {});

/// The report as a plain-text table (one column per model) plus the
/// per-prompt divergence and the differing test items.
std::string format_table(const CompareReport& r);

/// The report as JSON (every figure, per prompt and per item).
nlohmann::json to_json(const CompareReport& r);

}  // namespace wb::compare
