#pragma once
// The run log: one durable SQLite record per finished response, tagged with
// the model version (file SHA-256 + GGUF facts), the environment (build,
// OS, CPU, Vulkan device) and the full settings, so "which model, with which
// settings, on which machine produced this answer?" has an answer.
//
// Used the same way by workbench-cli (generate, batch) and the GUI:
//
//   RunLog log = RunLog::open(path);                       // strict: refuses a bad file
//   int64_t run = log.begin_run(RunKind::Batch, "prompts.txt", settings);
//   int64_t mv  = log.ensure_model_version(model_path);    // hashed once per file
//   int64_t env = log.ensure_environment(collect_environment(model.device_facts()));
//   ... for each finished response: log.log_response({run, mv, env, ...});
//   log.end_run(run);
//
// File: WAL journal, foreign keys on, synchronous=FULL. Each response is
// one INSERT in its own transaction, committed before log_response returns,
// so a crash (even kill -9 or power loss) loses only responses that were
// still running. All methods are thread-safe (one internal mutex).

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runlog/environment.h"
#include "runlog/integrity.h"

namespace wb::runlog {

class Db;
class Stmt;

/// Why a run-log file could not be opened.
enum class OpenProblem {
    CannotOpen,   ///< missing folder, no permission, not a regular file (folder, FIFO, /dev/null)
    NotSqlite,    ///< the file is not a SQLite database (and not a run log with a damaged header)
    Corrupt,      ///< a damaged run log: quick_check fails, a damaged header, SQLITE_CORRUPT
    Foreign,      ///< a SQLite database, but not an Inference Workbench run log
    NewerSchema,  ///< schema version above what this build knows
    ReadOnly,     ///< the file (or its folder) cannot be written
};

/// A run-log file that cannot be used. what() names the file and the
/// problem, e.g. "/home/u/runlog.sqlite: schema version 3 is newer than this
/// build supports (1); use a newer Inference Workbench or pass --db".
class OpenError : public std::runtime_error {
  public:
    OpenError(OpenProblem problem, const std::string& what,
              std::optional<LogInspection> inspection = std::nullopt)
        : std::runtime_error(what), problem_(problem), inspection_(std::move(inspection)) {}
    OpenProblem problem() const { return problem_; }
    /// For Corrupt: what inspect_log() found (readable responses, ...).
    const std::optional<LogInspection>& inspection() const { return inspection_; }

  private:
    OpenProblem problem_;
    std::optional<LogInspection> inspection_;
};

/// The run kinds the product writes today: one CLI generate, a chat
/// session, a batch run or a comparison. runs.kind is open-ended (schema
/// v4): any other lowercase word ("server", "load_test") is stored as it
/// is with begin_run(std::string_view, ...), no table rebuild needed.
enum class RunKind { Generate, Chat, Batch, Compare };

/// "generate" | "chat" | "batch" | "compare" (the runs.kind column).
std::string_view to_string(RunKind kind);

/// True for a run kind the runs table accepts: 1 to 64 characters, each
/// a-z or '_' (the same rule as the table's CHECK).
bool is_valid_run_kind(std::string_view kind);

/// One event of a run (a run_events row, schema v6): something that
/// happened to the run besides its responses.
struct RunEvent {
    int64_t id = 0;      ///< row id (ignored by log_event)
    int64_t run_id = 0;  ///< the run it belongs to
    int64_t t_ms = 0;    ///< UTC ms since the Unix epoch
    /// A lowercase word: "server_start", "server_stop", "canary_step",
    /// "promote", "rollback", ...
    std::string kind;
    nlohmann::json details = nlohmann::json::object();  ///< a JSON object
};

/// The cold start of one model load (one model_loads row, schema v4):
/// where the time from "open" to a ready session went, by phase, in ms on
/// the steady clock (model::LoadTimings and core::EngineSession's own
/// steps); nullopt = not measured (e.g. a loader that reports no phases).
struct ModelLoadRecord {
    int64_t model_version_id = 0;  ///< from ensure_model_version()
    int64_t environment_id = 0;    ///< from ensure_environment()
    /// The run the model was opened for (a CLI generate or batch); nullopt
    /// for a load that serves many runs (the app's loaded model).
    std::optional<int64_t> run_id;
    /// Who opened it, a lowercase word as a run kind: "generate", "batch",
    /// "app", "compare", ...
    std::string surface;
    /// Load settings (JSON object): backend, device, n_ctx, n_parallel, kv_type.
    nlohmann::json settings = nlohmann::json::object();
    int64_t opened_ms = 0;            ///< UTC ms since the Unix epoch when the open began
    std::optional<double> vocab_ms;   ///< vocabulary and chat template read
    std::optional<double> map_ms;     ///< the model's mapping of the file
    std::optional<double> parse_ms;   ///< metadata parse and tensor checks
    std::optional<double> device_ms;  ///< Vulkan instance, device, pipeline-cache file (0 on CPU)
    std::optional<double> upload_ms;  ///< weights to the device, KV pool (CPU: weight prep)
    /// Compute pipelines created during the load; unset (NULL) when none
    /// were (Vulkan creates them in the first request: see first_token_ms).
    std::optional<double> pipelines_ms;
    std::optional<int64_t> pipelines;  ///< how many
    double ready_ms = 0;               ///< open until the session was ready
    /// "cold" (no on-disk pipeline cache), "warm" (one was found) or
    /// "none" (a backend without pipelines: CPU).
    std::string pipeline_cache = "none";
    int64_t pipeline_cache_bytes = 0;  ///< bytes of the on-disk cache found at load
};

/// One finished response. Times: UTC ms since the Unix epoch; durations in
/// ms; rates in tokens/s; nullopt = not measured (e.g. TTFT of a request
/// rejected before its first token). Definitions follow vLLM's benchmark:
/// TTFT and e2e from submit, TPOT = (e2e - TTFT) / (output tokens - 1).
struct ResponseRecord {
    int64_t run_id = 0;            ///< from begin_run()
    int64_t model_version_id = 0;  ///< from ensure_model_version()
    int64_t environment_id = 0;    ///< from ensure_environment()
    std::string request_id;        ///< caller's id within the run ("p17", "chat-3"); may be ""
    /// Full settings the response ran with: a JSON object with the sampling
    /// parameters, seed, n_ctx, n_parallel, max_tokens and "prompt_mode"
    /// ("raw" or "chat") plus "chat_template" when a template was applied.
    nlohmann::json settings = nlohmann::json::object();
    std::string prompt;  ///< prompt text as given (UTF-8)
    std::optional<int64_t> prompt_tokens;
    std::string output;  ///< generated text (UTF-8)
    std::optional<int64_t> output_tokens;
    /// stop | length | context | timeout | cancelled | rejected | error |
    /// interrupted (context: the sequence reached the context size, length:
    /// max tokens; interrupted: the process ended before the response
    /// finished, see RunLog::begin_response)
    std::string finish_reason = "stop";
    std::string error;                    ///< message when finish_reason is error/rejected, else ""
    std::optional<double> queue_wait_ms;  ///< submit -> admitted (a slot took it)
    /// admitted -> first token: the prompt's forward passes and the first
    /// sample (schema v4; ttft_ms = queue_wait_ms + prefill_ms).
    std::optional<double> prefill_ms;
    std::optional<double> ttft_ms;  ///< submit -> first token
    std::optional<double> tpot_ms;
    std::optional<double> e2e_ms;
    std::optional<double> prefill_tps;
    std::optional<double> decode_tps;
    int64_t started_ms = 0;              ///< submit time (UTC ms)
    std::optional<int64_t> finished_ms;  ///< completion time (UTC ms)
    /// Prompt tokens whose K/V came from the prefix cache instead of being
    /// computed (prompt_tokens - this = tokens prefilled); nullopt = not measured.
    std::optional<int64_t> prompt_cached_tokens;
    /// Times the request gave its KV blocks back to an older one and
    /// recomputed them later; nullopt = not measured.
    std::optional<int64_t> preemptions;
};

/// True for the finish reasons the responses table accepts.
bool is_valid_finish_reason(std::string_view reason);

/// The error text of a row begin_response() wrote and nothing finished.
inline constexpr const char* kInterruptedError =
    "the process ended before this response finished (killed, crashed or the machine went "
    "down); the output is the text streamed until then";

/// Something RunLog::open() did or saw that the user should be told: a
/// folder it created, an existing folder that other users can enter.
struct OpenNotice {
    bool warning = false;  ///< true: a warning (a folder open to others); false: a note
    std::string text;      ///< one sentence naming the folder and its mode
};

class RunLog {
  public:
    /// Strict open (the CLI and the app): creates the file (and its folder)
    /// if missing, runs SQLite's quick integrity check, migrates an older
    /// schema, applies the retention setting. The log holds prompts and
    /// outputs, so what it creates is private whatever the umask: missing
    /// folders mode 0700, the file 0600 before SQLite opens it (SQLite gives
    /// its -wal and -shm files the file's mode); each folder created is an
    /// open_notices() note. An existing folder that group or others can
    /// read or enter is left as it is, with a warning there. When the open
    /// fails after creating the file (a full disk), the file, its -wal/-shm
    /// and the folders it created are removed again. Throws OpenError for
    /// every bad file and never modifies, renames or moves such a file:
    /// CannotOpen for a folder, FIFO or device (/dev/null), a folder or file
    /// that cannot be made, or a full disk; NotSqlite for another kind of
    /// file; Corrupt for a damaged run log (quick_check fails, or its header
    /// is damaged), with inspection() counting what can still be read and
    /// what() saying what to do; Foreign; NewerSchema; ReadOnly.
    static RunLog open(const std::string& path);

    /// What open() did or saw that the user should be told, in order (empty
    /// for an existing log in a private folder, and after open_readonly()).
    const std::vector<OpenNotice>& open_notices() const;

    /// Opens an existing run log for reading only (History, export of a
    /// log that cannot be written): no integrity check, no migration, no
    /// pruning; every write method throws DbError ("... is open
    /// read-only"). Throws OpenError (CannotOpen when missing or not a
    /// regular file, Foreign, NewerSchema) and as open() for SQLite errors.
    static RunLog open_readonly(const std::string& path);

    /// True for a log from open_readonly().
    bool read_only() const;

    /// How long a write waits while another program holds the log's write
    /// lock: `attempts` tries of `busy_timeout_ms` each (default 3 x 5000
    /// ms). Throws std::invalid_argument for attempts < 1 or a negative
    /// timeout.
    void set_write_retry(int attempts, int busy_timeout_ms);

    RunLog(RunLog&&) noexcept;
    RunLog& operator=(RunLog&&) noexcept;
    ~RunLog();

    /// Path of the database file.
    const std::string& path() const;

    /// Starts a run of `kind` (is_valid_run_kind: "generate", "chat",
    /// "batch", "compare" or a new kind such as "server"); `settings` (a
    /// JSON object) are the settings it was started with. With `no_text`
    /// (runs.no_text, schema v5: "do not store text") every response of the
    /// run is written without prompt and output text, as redaction writes
    /// it (redacted = 1; SHA-256, byte lengths, token counts and timings
    /// kept). Returns the run id. Throws std::invalid_argument naming the kind when it is not a
    /// lowercase word, or when settings is not an object; DbError on a
    /// write failure (retried while another program holds the write lock,
    /// as log_response()).
    int64_t begin_run(std::string_view kind, const std::string& name,
                      const nlohmann::json& settings, bool no_text = false);
    /// begin_run(to_string(kind), name, settings, no_text).
    int64_t begin_run(RunKind kind, const std::string& name, const nlohmann::json& settings,
                      bool no_text = false);
    /// Sets the run's end time to now. Throws std::invalid_argument for an
    /// unknown run id, DbError on a write failure (retried as begin_run()).
    void end_run(int64_t run_id);

    /// Model version id of the GGUF file at `gguf_path`. The SHA-256 is
    /// computed only when (absolute path, size, mtime) is not in the cache
    /// table; files with equal SHA-256 share one model version. Throws
    /// gguf::Error for a malformed GGUF, std::runtime_error when unreadable.
    int64_t ensure_model_version(const std::string& gguf_path);

    /// Environment id for `env` (an existing row when every field matches).
    int64_t ensure_environment(const EnvironmentInfo& env);

    /// Writes one response in its own transaction and returns its id.
    /// Redaction (see set_redact_text) or a no_text run (begin_run) stores
    /// prompt/output as NULL (redacted = 1) and keeps
    /// their SHA-256 and UTF-8 byte length. While another program holds the
    /// write lock the write is retried (set_write_retry). Throws
    /// std::invalid_argument for a bad finish_reason or non-object settings,
    /// DbError when a referenced run / model version / environment does not
    /// exist, or with one sentence naming the file and the cause ("the run
    /// log stayed locked ...", "the disk is full ...") and the response when
    /// the write fails: nothing was written then, so the caller may keep the
    /// record and try again later.
    int64_t log_response(const ResponseRecord& r);

    /// Writes the row of a response as it starts and returns its id:
    /// finish_reason "interrupted", error kInterruptedError, no finish time,
    /// the output given (usually ""). A process that dies before
    /// finish_response() (kill -9, a crash, power loss) leaves this honest
    /// row: the response was interrupted, with the text streamed up to the
    /// last update_response(). Checks and errors as log_response().
    int64_t begin_response(const ResponseRecord& started);

    /// Stores the output streamed so far (and its token count) in a row
    /// begin_response() wrote and nothing finished yet (later calls for a
    /// finished row change nothing). One small durable transaction: callers
    /// throttle it (the CLI and the app: about once a second). Throws as
    /// log_response() when the write fails.
    void update_response(int64_t id, const std::string& output,
                         std::optional<int64_t> output_tokens);

    /// Overwrites the row `id` (from begin_response) with the finished
    /// response `r`, every field. Checks and errors as log_response();
    /// std::invalid_argument for an unknown id.
    void finish_response(int64_t id, const ResponseRecord& r);

    /// Writes the cold start of one model load (a model_loads row) in its
    /// own transaction and returns its id. Throws std::invalid_argument for
    /// a surface that is not a lowercase word, settings that are not an
    /// object, a pipeline_cache other than cold|warm|none; DbError when the
    /// model version, environment or run does not exist, or the write fails
    /// (retried while the log is locked, as log_response()).
    int64_t log_model_load(const ModelLoadRecord& load);

    /// Writes one run event (a run_events row) in its own transaction and
    /// returns its id. Throws std::invalid_argument for a kind that is not a
    /// lowercase word or details that are not an object; DbError when the
    /// run does not exist or the write fails (retried while the log is
    /// locked, as log_response()).
    int64_t log_event(const RunEvent& event);

    /// The events of run `run_id`, oldest first (empty for an unknown run).
    /// Throws DbError when the read fails.
    std::vector<RunEvent> events(int64_t run_id) const;

    /// Sets the first token of load `load_id`'s first request: open until
    /// that token (ms; callers pass ready_ms + TTFT, so the wait for the
    /// first request is not counted) and the request's TTFT (ms). Only the first call for
    /// a load changes the row. Throws std::invalid_argument for an unknown
    /// id, DbError when the write fails.
    void set_model_load_first_token(int64_t load_id, double first_token_ms, double first_ttft_ms);

    /// Redaction setting (stored in the database, default off).
    bool redact_text() const;
    void set_redact_text(bool on);

    /// Retention setting in days (stored in the database; nullopt = keep
    /// everything). When set, open() prunes older responses. Throws
    /// std::invalid_argument for days < 1.
    std::optional<int> retention_days() const;
    void set_retention_days(std::optional<int> days);

    /// Deletes responses and model loads that started before now_ms - days
    /// * 86400000, and ended runs left without responses or loads. Returns the responses deleted.
    /// Throws std::invalid_argument for days < 0.
    int64_t prune_older_than_days(int days, int64_t now_ms);

    /// How many SHA-256 file hashes this object has computed (the cache's
    /// effect is observable in tests).
    int64_t sha256_computations() const;

    /// The connection, for readers in this library (export). Callers must
    /// not use it concurrently with other methods.
    const Db& db() const;

    /// Runs `fn` with the connection while holding this object's lock, so
    /// no other method runs on it meanwhile (maintenance that needs the
    /// connection to itself: retention.h's purges, VACUUM). Throws DbError
    /// for a log opened read-only, and what `fn` throws.
    void with_connection(const std::function<void(const Db&)>& fn);

  private:
    struct Impl;
    explicit RunLog(std::unique_ptr<Impl> impl);
    // open() once the folder and file exist: SQLite's open, the checks and
    // migration (throws as open()).
    static RunLog open_prepared(const std::string& path);
    void run_write(Stmt& st, const std::string& what, const ResponseRecord* r);
    std::unique_ptr<Impl> impl_;
};

}  // namespace wb::runlog
