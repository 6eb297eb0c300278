#pragma once
// The Compare tab's work, free of widgets, on the one request path:
// streaming one model's greedy reply token by token through an
// EngineSession (app/core), and writing a finished comparison to the run
// log through the one row builder (core::ResponseLogger). Called on worker
// threads; callbacks run there too.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "compare/compare.h"
#include "cost/price.h"
#include "loader/load.h"
#include "scheduler/request.h"

namespace wb::core {
class ResponseLogger;
}

namespace wb::compare {

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
    GreedyRun run;  ///< ids and timing (ms; TTFT from submit, as every surface)
    /// Hash of every token text in the vocabulary, in id order: equal
    /// hashes = same vocabulary, so ids can be compared position by position.
    size_t vocab_hash = 0;
    std::string error;  ///< what went wrong; "" on success
    bool cancelled = false;
    /// The model that produced the reply (its session's, kept alive by this
    /// pointer), with KV-cache sequence 0 empty and its scheduler idle,
    /// handed on so the figures can reuse it instead of loading the file
    /// again; null when the reply failed or was cancelled.
    std::shared_ptr<model::Model> model;
    double load_ms = 0;  ///< time spent loading (steady clock)
    /// What speculative decoding did (StreamDraft); empty drafter without one.
    scheduler::SpeculativeStats speculative;
};

/// A pane that is "target + draft": speculative decoding
/// (docs/speculative.md) with n-gram drafts, or a draft model file loaded
/// beside the target (core::SessionOptions::draft_model). Kind None = plain.
struct StreamDraft {
    scheduler::SpeculativeParams params;
    std::string model_path;  ///< the draft model, for Kind::DraftModel
};

/// Called on the worker for every generated token (id, its text piece).
using TokenSink = std::function<void(int32_t, const std::string&)>;

/// Opens an EngineSession on `path` through `load` with `base` (backend,
/// device, KV type; the context is sized here to the prompt + n_predict
/// tokens, one slot, the prompt in one forward pass: exactly what
/// run_compare needs for the same single prompt) and submits `prompt`
/// (BOS as the model asks) for `n_predict` greedy tokens (arg-max, ties to
/// the lower id, no stop token: the same rule as run_compare, so panes line
/// up with the figures table). Every token goes to `sink` as it comes;
/// `cancel` is checked before the load and while tokens come. Never throws:
/// errors (unreadable or malformed GGUF, no Vulkan device, out of memory)
/// land in `error`. With `draft` the reply is decoded speculatively (the
/// greedy tokens are the same) and the result's `speculative` says how;
/// a draft model whose vocabulary differs is an error naming the token.
StreamResult stream_reply(const std::string& path, const std::string& prompt, uint32_t n_predict,
                          const model::LoadOptions& base, const ModelLoadFn& load,
                          const TokenSink& sink, const std::atomic<bool>& cancel,
                          const StreamDraft& draft = {});

/// Writes every response of `r` to the run log at `db_path` under one run
/// of kind "compare" named `name`, through core::ResponseLogger: per model,
/// one row per prompt from its first timed pass (ModelReport::runs; the
/// warm-up runs and the later timed passes are not logged, the run's
/// settings name the repetitions and speed_method()) (request id
/// "<label>/p<k>", finish reason "length":
/// no stop token is used) and one row per test item ("<label>/t:<item
/// id>", finish reason "stop" when the item ended at an end-of-generation
/// token, else "length"), with TTFT, prefill, e2e, TPOT and tokens/s from
/// the greedy timing (queue wait 0: each ran alone), settings as
/// core::settings_json writes them plus compare_label (and answer, match,
/// correct for items), each tagged with its model's version and the
/// environment of the device it ran on. With `no_text` the run is a
/// no-text run (RunLog::begin_run: rows without prompt and output text).
/// With `price`, the run's settings carry it (cost::to_json) and the run
/// log's exports price each row by it.
/// Returns the run id. Throws runlog::OpenError when the log cannot be
/// opened and what the run log's writes throw.
int64_t log_comparison(const std::string& db_path, const std::string& name, const CompareReport& r,
                       const model::LoadOptions& base, bool no_text = false,
                       const std::optional<cost::Price>& price = std::nullopt);

/// The same through `logger` (its run log; the app's RunRecorder lends its
/// one row builder, so the comparison is written on the app's one
/// connection, in order with its other writes).
int64_t log_comparison(core::ResponseLogger& logger, const std::string& name,
                       const CompareReport& r, const model::LoadOptions& base, bool no_text = false,
                       const std::optional<cost::Price>& price = std::nullopt);

/// The UTC submit time (ms since the epoch) of a run that took `e2e_ms`
/// and ended at `ended_utc_ms`, rounded as FinishedRequest::finished_utc_ms
/// rounds the e2e time, so submit + e2e is `ended_utc_ms` exactly: a row
/// never ends after the moment it was logged (nor after its run's end).
int64_t submitted_utc_ms(int64_t ended_utc_ms, double e2e_ms);

/// Responses log_comparison writes for `r`.
size_t responses_in(const CompareReport& r);

}  // namespace wb::compare
