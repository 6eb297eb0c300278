#pragma once
// Environment drift between two runs of the run log:
// every tag that differs (model version, tokenizer and template, sampling,
// engine build, device and driver, run settings), the tags that change what
// the model writes first, and on the prompts both runs answered (matched by
// the prompt's SHA-256) the share of identical outputs, where the first
// differing ones part, and the latency deltas. Read from the tables of
// schema.cpp; used by `workbench-cli diff` and the History tab's "Compare
// environments". Qt-free.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wb::runlog {

class Db;

/// A run id that is not in the log. what(): "run 12 is not in the run log
/// <path>".
class RunNotFound : public std::invalid_argument {
  public:
    RunNotFound(int64_t id, const std::string& what) : std::invalid_argument(what), id_(id) {}
    int64_t id() const { return id_; }

  private:
    int64_t id_;
};

/// What one run says for one tag: the distinct values its responses carry,
/// in the order first seen (more than one = "mixed": the responses disagree
/// among themselves). Values are text: JSON strings unquoted, other JSON as
/// compact JSON ("0.95", "[\"\\n\"]"), "(none)" for a key a response lacks.
/// Empty when the run has no responses (and no run setting for the tag).
struct FieldValues {
    std::vector<std::string> values;
    bool mixed() const { return values.size() > 1; }
    /// "" for none, the value, or "mixed: v1 | v2 | ...".
    std::string text() const;
};

/// One tag whose values differ between the runs (as sets of values).
struct FieldDiff {
    std::string group;  ///< "model", "tokenizer", "sampling", "engine", "environment", "run"
    std::string key;    ///< stable id, "<group>.<name>": "model.sha256", "sampling.top_p"
    std::string label;  ///< for people: "file SHA-256", "top-p"
    /// The tag changes what the model writes for the same prompt (model
    /// file, tokenizer and template, sampling, and the numerics: KV type,
    /// backend); such rows come first. Top-k, top-p, min-p and the seed
    /// are not marked when both runs sampled greedily (temperature 0), and
    /// their label says "(not used: greedy)".
    bool changes_outputs = false;
    FieldValues a, b;
};

/// Where two outputs of one prompt part.
struct Divergence {
    std::string prompt_sha256;   ///< 64 hex digits
    std::string prompt_excerpt;  ///< the prompt's first 40 characters ("" when redacted)
    /// The first differing character (Unicode code point, 0-based; a shorter
    /// output that is a prefix of the other parts at its length); nullopt
    /// when either text is redacted (only the SHA-256 is known).
    std::optional<size_t> offset;
    /// Up to 32 characters of each output from `offset` ("" at its end).
    std::string a_excerpt, b_excerpt;
    int64_t a_response = 0, b_response = 0;  ///< responses.id
};

/// A latency over the matched pairs where both runs measured it, in ms.
/// p50 is the median (the mean of the two middle values for an even
/// count); deltas are B minus A. All nullopt when no pair measured it.
struct LatencyDelta {
    size_t pairs = 0;
    std::optional<double> a_p50, b_p50, a_mean, b_mean;
    std::optional<double> p50_delta() const;
    std::optional<double> mean_delta() const;
};

/// The prompts both runs answered. A prompt answered k times in A and m
/// times in B gives min(k, m) pairs, in response-id order.
struct PromptComparison {
    size_t a_responses = 0, b_responses = 0;
    size_t matched = 0;    ///< pairs
    size_t identical = 0;  ///< pairs whose output SHA-256 is equal
    /// identical / matched; nullopt when nothing matched.
    std::optional<double> identical_share() const;
    /// One per differing pair, in pair order.
    std::vector<Divergence> divergences;
    LatencyDelta ttft;  ///< responses.ttft_ms
    LatencyDelta e2e;   ///< responses.e2e_ms
};

/// A run's headline.
struct RunHeader {
    int64_t id = 0;
    std::string kind, name;
    int64_t started_ms = 0;  ///< UTC ms since the Unix epoch
};

/// The whole comparison.
struct RunDiff {
    RunHeader a, b;
    /// Differing tags: those that change outputs first, then by group
    /// (model, tokenizer, sampling, run, engine, environment), then a fixed
    /// order within the group. Empty when the runs match on every tag.
    std::vector<FieldDiff> fields;
    PromptComparison prompts;
    /// What could not be read (a damaged part of the log, a settings text
    /// that is not JSON): the rest is still reported.
    std::vector<std::string> warnings;
};

/// Compares runs `run_a` and `run_b` of the open log `db` (schema 1-4; a
/// log opened read-only and not migrated reads too). Throws RunNotFound
/// naming the first id that is not there, DbError when the runs table
/// cannot be read. A failure reading the responses (a damaged page) is a
/// warning in the result, with the tags read so far.
RunDiff diff_runs(const Db& db, int64_t run_a, int64_t run_b);

/// diff_runs on the log at `path`, opened read-only as the History tab
/// does (HistoryReader::open: OpenError for no file, not SQLite, a
/// damaged or foreign file, a newer schema). Never changes the file.
RunDiff diff_runs_at(const std::string& path, int64_t run_a, int64_t run_b);

/// The diff as one JSON object: {"a": {id, kind, name, started_ms}, "b",
/// "fields": [{group, key, label, changes_outputs, a: [values], b:
/// [values], a_mixed, b_mixed}], "prompts": {a_responses, b_responses,
/// matched, identical, identical_share (null when nothing matched),
/// divergences: [{prompt_sha256, prompt, offset (null when redacted),
/// a_excerpt, b_excerpt, a_response, b_response}], ttft_ms and e2e_ms:
/// {pairs, a_p50, b_p50, p50_delta, a_mean, b_mean, mean_delta} (ms, null
/// when not measured)}, "warnings": [text]}.
nlohmann::json to_json(const RunDiff& d);

/// The first differing code point of two UTF-8 texts (invalid bytes count
/// one each); nullopt when equal.
std::optional<size_t> first_divergence(const std::string& a, const std::string& b);

}  // namespace wb::runlog
