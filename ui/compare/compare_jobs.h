#pragma once
// The work the Compare tab hands to its worker threads, free of widgets:
// streaming one model's greedy reply token by token, and writing a finished
// comparison to the run log. Called on pool threads; callbacks run there too.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "compare/compare.h"
#include "model/load.h"

namespace wb::ui::compare {

/// Thrown out of a job when its cancel flag is set.
struct Cancelled {};

/// Turns a GGUF path and load settings into a model: the one way the
/// Compare tab loads (default wb::model::load_model; tests count loads
/// through it). Called on worker threads, possibly several at once. Throws
/// what load_model throws.
using ModelLoadFn =
    std::function<std::unique_ptr<model::Model>(const std::string&, const model::LoadOptions&)>;

/// One pane's reply.
struct StreamResult {
    wb::compare::GreedyRun run;  ///< ids and timing (ms, steady clock)
    /// Hash of every token text in the vocabulary, in id order: equal
    /// hashes = same vocabulary, so ids can be compared position by position.
    size_t vocab_hash = 0;
    std::string error;  ///< what went wrong; "" on success
    bool cancelled = false;
    /// The model that produced the reply, with KV-cache sequence 0 empty,
    /// handed on so the figures can reuse it instead of loading the file
    /// again; null when the reply failed or was cancelled (the model is
    /// freed then). Shared: it outlives the worker that loaded it.
    std::shared_ptr<model::Model> model;
    double load_ms = 0;  ///< time spent in the load call (steady clock)
};

/// Called on the worker for every generated token (id, its text piece).
using TokenSink = std::function<void(int32_t, const std::string&)>;

/// Loads `path` once through `load` with `base` (backend, device, KV type;
/// the context is sized here to the prompt + n_predict tokens, one
/// sequence: exactly what run_compare needs for the same single prompt),
/// tokenizes `prompt` with BOS as the model asks, and generates `n_predict`
/// greedy tokens (arg-max, ties to the lower id, no stop token: the same
/// rule as run_compare, so panes line up with the figures table). Every
/// token goes to `sink` as soon as it is chosen; `cancel` is checked before
/// the load and after each token. On success the loaded model comes back in
/// StreamResult::model. Never throws: errors (unreadable or malformed GGUF,
/// no Vulkan device, out of memory) land in `error`.
StreamResult stream_reply(const std::string& path, const std::string& prompt, uint32_t n_predict,
                          const model::LoadOptions& base, const ModelLoadFn& load,
                          const TokenSink& sink, const std::atomic<bool>& cancel);

/// Writes every response of `r` to the run log at `db_path` under one run
/// of kind "compare" named `name`: per model, one row per prompt (request
/// id "<label>/p<k>", finish reason "length" since no stop token is used,
/// TTFT, end-to-end, TPOT, prefill/decode tokens/s from the greedy timing)
/// and one row per test item ("<label>/t:<item id>", finish reason "stop":
/// test items end at end-of-generation or max_tokens, and the report does
/// not say which). Each row is tagged with its model's version (SHA-256)
/// and the environment for `backend` / `device`. Returns the run id.
/// Throws runlog::OpenError when the log cannot be opened and what
/// log_response throws.
int64_t log_comparison(const std::string& db_path, const std::string& name,
                       const wb::compare::CompareReport& r, const model::LoadOptions& base);

/// Responses log_comparison writes for `r`.
size_t responses_in(const wb::compare::CompareReport& r);

}  // namespace wb::ui::compare
