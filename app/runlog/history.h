#pragma once
// Reading the run log for the History tab: the rows the filters match, the
// lists for the model and run pickers, and one response with all its tags.
// The widget asks these questions; the SQL over the schema lives here, next
// to the schema, so a schema change touches this library only. The rows are
// selected with the exporter's filter_sql(), so the table shows exactly
// what an export writes. Qt-free.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runlog/exporter.h"

namespace wb::runlog {

class Db;

/// One line of the History table: the headline facts of a response.
struct HistoryRow {
    int64_t id = 0;          ///< responses.id
    int64_t started_ms = 0;  ///< submit time, UTC ms since the Unix epoch
    int64_t run_id = 0;
    std::string run_kind;  ///< "chat", "batch", "generate", "compare"
    /// The model version's label, "<file name> · <quantization> · <8 hex
    /// digits of SHA-256>" (runlog/model_label.h).
    std::string model;
    std::string request_id;
    std::string finish_reason;
    /// The first 60 (prompt) and 100 (output) characters, newlines as
    /// spaces; nullopt when the response is redacted.
    std::optional<std::string> prompt_preview;
    std::optional<std::string> output_preview;
    std::optional<int64_t> output_tokens;
    std::optional<double> ttft_ms, tpot_ms, e2e_ms;
};

/// A model version for the picker.
struct ModelChoice {
    int64_t id = 0;
    std::string label;   ///< "<file name> · <quantization> · <8 hex digits>" (model_label.h)
    std::string name;    ///< general.name ("" when absent)
    std::string sha256;  ///< 64 hex digits
};

/// A run for the picker.
struct RunChoice {
    int64_t id = 0;
    std::string kind;
    std::string name;
};

/// One model load's cold start (a model_loads row, schema 4), in ms on the
/// steady clock; nullopt = not measured.
struct ModelLoadRow {
    int64_t id = 0;
    int64_t opened_ms = 0;  ///< UTC ms since the Unix epoch when the open began
    std::string surface;    ///< "generate", "batch", "app", ...
    std::optional<int64_t> run_id;
    std::string model;           ///< the model version's label (model_label.h)
    std::string backend;         ///< settings.backend ("vulkan", "cpu")
    std::string pipeline_cache;  ///< "cold", "warm" or "none"
    std::optional<double> vocab_ms, map_ms, parse_ms, device_ms, upload_ms, pipelines_ms;
    double ready_ms = 0;  ///< open until the session was ready
    /// ready_ms plus its first request's TTFT: open to the first token, less
    /// the wait for that request (a person typing)
    std::optional<double> first_token_ms;
    std::optional<double> first_ttft_ms;  ///< that request's TTFT
};

/// One run event (a run_events row, schema 6).
struct RunEventRow {
    int64_t id = 0;
    int64_t run_id = 0;
    int64_t t_ms = 0;     ///< UTC ms since the Unix epoch
    std::string kind;     ///< "server_start", "canary_step", "promote", "rollback", ...
    std::string details;  ///< its JSON object, as stored
};

/// Every tag of one response as (name, value as text, nullopt = NULL), in a
/// fixed order: ids, times, run, model version, environment, settings,
/// prompt, output, finish reason, timings.
using ResponseDetail = std::vector<std::pair<std::string, std::optional<std::string>>>;

class HistoryReader {
  public:
    /// Opens the run log at `path` read-only, with a connection of its own
    /// (it never creates, migrates or prunes the file; WAL lets the app's
    /// writer go on meanwhile). Throws OpenError (CannotOpen: no such file;
    /// NotSqlite: another kind of file, "<path>: not a SQLite database, so
    /// not a run log ..."; Corrupt: a damaged log, pointing to `log check`
    /// and `log salvage`; Foreign: not a run log; NewerSchema: written by a
    /// newer build) and DbError for other SQLite failures (a busy lock).
    static HistoryReader open(const std::string& path);
    HistoryReader(HistoryReader&&) noexcept;
    HistoryReader& operator=(HistoryReader&&) noexcept;
    ~HistoryReader();

    const std::string& path() const;
    /// The read-only connection, for readers beside this one (run_diff.h)
    /// that ask the same file their own questions.
    const Db& db() const;

    /// (model versions, newest run id): when it changes, the pickers'
    /// lists need refilling.
    std::pair<int64_t, int64_t> lists_key() const;
    /// Model versions, oldest first.
    std::vector<ModelChoice> models() const;
    /// The newest `limit` runs, newest first.
    std::vector<RunChoice> runs(size_t limit = 500) const;
    /// The responses `filter` matches (filter_sql), newest first, at most
    /// `limit`. Throws std::invalid_argument for a bad filter, DbError.
    std::vector<HistoryRow> rows(const ExportFilter& filter, size_t limit = 10000) const;
    /// Every tag of response `id`; empty when there is none.
    ResponseDetail detail(int64_t id) const;

    /// The newest `limit` model loads (cold starts), newest first; empty for
    /// a log older than schema 4 (opened read-only, not migrated). Throws
    /// DbError on a read failure.
    std::vector<ModelLoadRow> model_loads(size_t limit = 100) const;
    /// The events of run `run_id` (0: of every run), the newest `limit`,
    /// oldest first; empty before schema 6. Throws DbError when the read fails.
    std::vector<RunEventRow> run_events(int64_t run_id, size_t limit = 200) const;

  private:
    struct Impl;
    explicit HistoryReader(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace wb::runlog
