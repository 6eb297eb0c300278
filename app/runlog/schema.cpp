#include "runlog/schema.h"

#include <array>
#include <string>

namespace wb::runlog {

namespace {

// Version 1. Times are UTC milliseconds since the Unix epoch (INTEGER);
// durations are ms (REAL); rates are tokens/s (REAL). NULL means "not
// measured" (e.g. TTFT of a request that never produced a token).
constexpr const char* kV1 = R"sql(
CREATE TABLE model_versions (
    id               INTEGER PRIMARY KEY,
    sha256           TEXT    NOT NULL UNIQUE CHECK (length(sha256) = 64),
    path             TEXT    NOT NULL,           -- where it was first seen
    file_size        INTEGER NOT NULL,           -- bytes
    name             TEXT,                       -- general.name
    architecture     TEXT,                       -- general.architecture
    file_type        INTEGER,                    -- general.file_type (llama_ftype id)
    file_type_name   TEXT,                       -- "MOSTLY_Q8_0", ...
    tensor_types     TEXT    NOT NULL CHECK (json_valid(tensor_types)),  -- {"f32": 48}
    n_params         INTEGER NOT NULL,           -- sum of tensor elements
    context_length   INTEGER,                    -- <arch>.context_length (tokens)
    tokenizer_model  TEXT,                       -- tokenizer.ggml.model
    first_seen_ms    INTEGER NOT NULL
);

-- SHA-256 is computed once per (path, size, mtime); a changed file is
-- hashed again and may map to another model version.
CREATE TABLE file_hash_cache (
    path             TEXT    PRIMARY KEY,
    file_size        INTEGER NOT NULL,
    mtime_ns         INTEGER NOT NULL,
    model_version_id INTEGER NOT NULL REFERENCES model_versions(id)
);

CREATE TABLE environments (
    id                INTEGER PRIMARY KEY,
    app_version       TEXT NOT NULL,
    git_commit        TEXT NOT NULL,
    os                TEXT NOT NULL,   -- /etc/os-release PRETTY_NAME
    kernel            TEXT NOT NULL,   -- uname: sysname release machine
    cpu               TEXT NOT NULL,   -- /proc/cpuinfo model name
    backend           TEXT NOT NULL CHECK (backend IN ('vulkan', 'cpu')),
    vk_device_name    TEXT NOT NULL DEFAULT '',
    vk_device_type    TEXT NOT NULL DEFAULT '',
    vk_driver_name    TEXT NOT NULL DEFAULT '',
    vk_driver_version TEXT NOT NULL DEFAULT '',
    vk_api_version    TEXT NOT NULL DEFAULT '',
    first_seen_ms     INTEGER NOT NULL,
    UNIQUE (app_version, git_commit, os, kernel, cpu, backend, vk_device_name,
            vk_device_type, vk_driver_name, vk_driver_version, vk_api_version)
);

CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    kind        TEXT    NOT NULL CHECK (kind IN ('generate', 'chat', 'batch', 'compare')),
    name        TEXT    NOT NULL,
    started_ms  INTEGER NOT NULL,
    ended_ms    INTEGER,
    settings    TEXT    NOT NULL CHECK (json_valid(settings))
);

CREATE TABLE responses (
    id               INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL REFERENCES runs(id),
    model_version_id INTEGER NOT NULL REFERENCES model_versions(id),
    environment_id   INTEGER NOT NULL REFERENCES environments(id),
    request_id       TEXT    NOT NULL DEFAULT '',
    settings         TEXT    NOT NULL CHECK (json_valid(settings)),
    redacted         INTEGER NOT NULL CHECK (redacted IN (0, 1)),
    prompt           TEXT,                      -- NULL when redacted
    prompt_sha256    TEXT    NOT NULL,
    prompt_bytes     INTEGER NOT NULL,          -- UTF-8 bytes
    prompt_tokens    INTEGER,
    output           TEXT,                      -- NULL when redacted
    output_sha256    TEXT    NOT NULL,
    output_bytes     INTEGER NOT NULL,
    output_tokens    INTEGER,
    finish_reason    TEXT    NOT NULL CHECK (finish_reason IN
                         ('stop', 'length', 'timeout', 'cancelled', 'rejected', 'error')),
    error            TEXT,
    queue_wait_ms    REAL,
    ttft_ms          REAL,
    tpot_ms          REAL,
    e2e_ms           REAL,
    prefill_tps      REAL,
    decode_tps       REAL,
    started_ms       INTEGER NOT NULL,
    finished_ms      INTEGER
);
CREATE INDEX responses_started ON responses(started_ms);
CREATE INDEX responses_run ON responses(run_id);
CREATE INDEX responses_model ON responses(model_version_id);

-- Per-database settings the user chose (redaction, retention).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
)sql";

// Version 2: finish_reason 'interrupted', for the row a response gets when
// it starts (RunLog::begin_response) and keeps if the process dies before
// it finishes. SQLite cannot change a CHECK constraint in place, so the
// responses table is rebuilt once (https://sqlite.org/lang_altertable.html,
// "other kinds of table schema changes"): new table, copy, drop, rename, and
// its indexes again. Nothing references responses, so foreign keys hold.
constexpr const char* kV2 = R"sql(
CREATE TABLE responses_v2 (
    id               INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL REFERENCES runs(id),
    model_version_id INTEGER NOT NULL REFERENCES model_versions(id),
    environment_id   INTEGER NOT NULL REFERENCES environments(id),
    request_id       TEXT    NOT NULL DEFAULT '',
    settings         TEXT    NOT NULL CHECK (json_valid(settings)),
    redacted         INTEGER NOT NULL CHECK (redacted IN (0, 1)),
    prompt           TEXT,
    prompt_sha256    TEXT    NOT NULL,
    prompt_bytes     INTEGER NOT NULL,
    prompt_tokens    INTEGER,
    output           TEXT,
    output_sha256    TEXT    NOT NULL,
    output_bytes     INTEGER NOT NULL,
    output_tokens    INTEGER,
    finish_reason    TEXT    NOT NULL CHECK (finish_reason IN
                         ('stop', 'length', 'timeout', 'cancelled', 'rejected', 'error',
                          'interrupted')),
    error            TEXT,
    queue_wait_ms    REAL,
    ttft_ms          REAL,
    tpot_ms          REAL,
    e2e_ms           REAL,
    prefill_tps      REAL,
    decode_tps       REAL,
    started_ms       INTEGER NOT NULL,
    finished_ms      INTEGER
);
INSERT INTO responses_v2 SELECT * FROM responses;
DROP TABLE responses;
ALTER TABLE responses_v2 RENAME TO responses;
CREATE INDEX responses_started ON responses(started_ms);
CREATE INDEX responses_run ON responses(run_id);
CREATE INDEX responses_model ON responses(model_version_id);
)sql";

// Version 3: the KV pool and its prefix cache.
//  - finish_reason 'context': the request reached the context size (the
//    conversation must be shortened), distinct from 'length' (max tokens).
//  - prompt_cached_tokens: prompt tokens whose K/V came from the prefix
//    cache instead of being computed (NULL: not measured); preemptions:
//    times the request gave its KV blocks back to wait and recompute.
// SQLite cannot change a CHECK constraint, so `responses` is rebuilt (the
// procedure of https://sqlite.org/lang_altertable.html#otheralter: new
// table, copy, drop, rename, indexes again). No table refers to it.
constexpr const char* kV3 = R"sql(
CREATE TABLE responses_v3 (
    id                   INTEGER PRIMARY KEY,
    run_id               INTEGER NOT NULL REFERENCES runs(id),
    model_version_id     INTEGER NOT NULL REFERENCES model_versions(id),
    environment_id       INTEGER NOT NULL REFERENCES environments(id),
    request_id           TEXT    NOT NULL DEFAULT '',
    settings             TEXT    NOT NULL CHECK (json_valid(settings)),
    redacted             INTEGER NOT NULL CHECK (redacted IN (0, 1)),
    prompt               TEXT,
    prompt_sha256        TEXT    NOT NULL,
    prompt_bytes         INTEGER NOT NULL,
    prompt_tokens        INTEGER,
    output               TEXT,
    output_sha256        TEXT    NOT NULL,
    output_bytes         INTEGER NOT NULL,
    output_tokens        INTEGER,
    finish_reason        TEXT    NOT NULL CHECK (finish_reason IN
                             ('stop', 'length', 'context', 'timeout', 'cancelled', 'rejected',
                              'error', 'interrupted')),
    error                TEXT,
    queue_wait_ms        REAL,
    ttft_ms              REAL,
    tpot_ms              REAL,
    e2e_ms               REAL,
    prefill_tps          REAL,
    decode_tps           REAL,
    started_ms           INTEGER NOT NULL,
    finished_ms          INTEGER,
    prompt_cached_tokens INTEGER,
    preemptions          INTEGER
);
INSERT INTO responses_v3 (id, run_id, model_version_id, environment_id, request_id, settings,
    redacted, prompt, prompt_sha256, prompt_bytes, prompt_tokens, output, output_sha256,
    output_bytes, output_tokens, finish_reason, error, queue_wait_ms, ttft_ms, tpot_ms, e2e_ms,
    prefill_tps, decode_tps, started_ms, finished_ms)
  SELECT id, run_id, model_version_id, environment_id, request_id, settings, redacted, prompt,
    prompt_sha256, prompt_bytes, prompt_tokens, output, output_sha256, output_bytes,
    output_tokens, finish_reason, error, queue_wait_ms, ttft_ms, tpot_ms, e2e_ms, prefill_tps,
    decode_tps, started_ms, finished_ms FROM responses;
DROP TABLE responses;
ALTER TABLE responses_v3 RENAME TO responses;
CREATE INDEX responses_started ON responses(started_ms);
CREATE INDEX responses_run ON responses(run_id);
CREATE INDEX responses_model ON responses(model_version_id);
)sql";

// Version 4 (one meaning of TTFT, and the cold start of a model load):
//  - runs.kind is open-ended: any lowercase word (generate, chat, batch,
//    compare, and later server, load_test, ...) checked by its shape, not
//    by a list, so a new kind needs no table rebuild. RunLog::begin_run
//    checks the same shape and says so. SQLite cannot drop a CHECK in
//    place, so `runs` is rebuilt (new table, copy, drop, rename). Other
//    tables refer to runs(id) by name and id, and ids are copied as they
//    are; migrate() runs every step with foreign keys off and checks them
//    (PRAGMA foreign_key_check) before it commits.
//  - responses.prefill_ms: admission to first token (ms), stored as
//    measured beside queue_wait_ms and ttft_ms (core/finished_request.h:
//    ttft = queue wait + prefill); NULL in older rows (not stored then).
//  - model_loads: the cold start of each model load, by phase (ms on the
//    steady clock), written when a surface opens a model
//    (core::EngineSession); first_token_ms / first_ttft_ms when its first
//    request produced a token.
constexpr const char* kV4 = R"sql(
CREATE TABLE runs_v4 (
    id          INTEGER PRIMARY KEY,
    kind        TEXT    NOT NULL CHECK (length(kind) BETWEEN 1 AND 64
                                        AND kind NOT GLOB '*[^a-z_]*'),
    name        TEXT    NOT NULL,
    started_ms  INTEGER NOT NULL,
    ended_ms    INTEGER,
    settings    TEXT    NOT NULL CHECK (json_valid(settings))
);
INSERT INTO runs_v4 (id, kind, name, started_ms, ended_ms, settings)
  SELECT id, kind, name, started_ms, ended_ms, settings FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v4 RENAME TO runs;

ALTER TABLE responses ADD COLUMN prefill_ms REAL;

CREATE TABLE model_loads (
    id                   INTEGER PRIMARY KEY,
    model_version_id     INTEGER NOT NULL REFERENCES model_versions(id),
    environment_id       INTEGER NOT NULL REFERENCES environments(id),
    run_id               INTEGER REFERENCES runs(id),  -- the run it was opened for; NULL: the app's load (many runs)
    surface              TEXT    NOT NULL CHECK (length(surface) BETWEEN 1 AND 64
                                                 AND surface NOT GLOB '*[^a-z_]*'),
    settings             TEXT    NOT NULL CHECK (json_valid(settings)),  -- backend, device, n_ctx, n_parallel, kv_type
    opened_ms            INTEGER NOT NULL,  -- UTC ms when the open began
    vocab_ms             REAL,              -- vocabulary and chat template read
    map_ms               REAL,              -- the model's mapping of the file
    parse_ms             REAL,              -- metadata parse, tensor checks
    device_ms            REAL,              -- Vulkan instance, device, pipeline-cache file (0 on CPU)
    upload_ms            REAL,              -- weights to the device, KV pool (CPU: weight prep)
    pipelines_ms         REAL,              -- compute pipelines created during the load
    pipelines            INTEGER,
    ready_ms             REAL    NOT NULL,  -- open until the session is ready (scheduler started)
    pipeline_cache       TEXT    NOT NULL CHECK (pipeline_cache IN ('cold', 'warm', 'none')),
    pipeline_cache_bytes INTEGER NOT NULL,  -- on-disk pipeline cache found at load (bytes)
    first_token_ms       REAL,              -- open until the first token of its first request
    first_ttft_ms        REAL               -- that request's TTFT (its first prefill inside)
);
CREATE INDEX model_loads_model ON model_loads(model_version_id);
CREATE INDEX model_loads_opened ON model_loads(opened_ms);
)sql";

// Version 5 (keeping the run log's text safe): runs.no_text, a run whose
// responses are written without prompt and output text (the "do not store
// text" mode of `generate --no-text`, `batch --no-text` and the app's
// setting): rows keep the SHA-256, byte lengths, token counts and every
// figure, with `redacted` = 1 as for global redaction. A column added with
// a constant default needs no table rebuild
// (https://sqlite.org/lang_altertable.html#altertabaddcol); old runs read 0.
constexpr const char* kV5 = R"sql(
ALTER TABLE runs ADD COLUMN no_text INTEGER NOT NULL DEFAULT 0 CHECK (no_text IN (0, 1));
)sql";

// Version 6 (serving): run_events, what happened to a run besides
// its responses: a server started or stopped, each decision of a canary
// rollout (canary_step, promote, rollback) with the figures that made it.
// `details` is a JSON object (rollout::Decision::to_json() for a decision).
// t_ms is UTC ms since the epoch, as every other time here.
constexpr const char* kV6 = R"sql(
CREATE TABLE run_events (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id),
    t_ms     INTEGER NOT NULL,
    kind     TEXT    NOT NULL CHECK (length(kind) BETWEEN 1 AND 64
                                     AND kind NOT GLOB '*[^a-z_]*'),
    details  TEXT    NOT NULL CHECK (json_valid(details))
);
CREATE INDEX run_events_run ON run_events(run_id, t_ms);
)sql";

constexpr std::array<Migration, 6> kMigrations{
    {{0, kV1}, {1, kV2}, {2, kV3}, {3, kV4}, {4, kV5}, {5, kV6}}};

}  // namespace

std::span<const Migration> migrations() {
    return kMigrations;
}

int schema_version() {
    return static_cast<int>(kMigrations.size());
}

namespace {

// Foreign keys off while migrating (a step may rebuild a table others refer
// to: https://sqlite.org/lang_altertable.html#otheralter, step 1), back to
// what they were afterwards, whatever happens. PRAGMA foreign_keys cannot
// change inside a transaction, so this wraps the steps' transactions.
class ForeignKeysOff {
  public:
    explicit ForeignKeysOff(const Db& db)
        : db_(db), was_on_(db.query_int("PRAGMA foreign_keys", "read foreign_keys") != 0) {
        if (was_on_) db_.exec("PRAGMA foreign_keys = OFF", "migrate: foreign keys off");
    }
    ~ForeignKeysOff() {
        if (!was_on_) return;
        try {
            db_.exec("PRAGMA foreign_keys = ON", "migrate: foreign keys on");
        } catch (const DbError&) {
            // The connection is closing or broken; the next open sets it again.
        }
    }
    ForeignKeysOff(const ForeignKeysOff&) = delete;
    ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;

  private:
    const Db& db_;
    bool was_on_;
};

}  // namespace

void migrate(const Db& db, std::span<const Migration> steps) {
    const ForeignKeysOff fk_off(db);
    // A reference that is already broken (an edit by another program, an
    // old bug) is the log's damage, not a failed step: say so before any
    // step runs, naming the row, and change nothing.
    if (!steps.empty() &&
        db.query_int("PRAGMA user_version", "read schema version") <= steps.back().from) {
        Stmt fk(db, "PRAGMA foreign_key_check");
        if (fk.step())
            throw DbError(db.path() + ": the run log is damaged: table " + std::string(fk.text(0)) +
                              " row " + std::to_string(fk.int64(1)) + " refers to a missing " +
                              std::string(fk.text(2)) + " row, so it is not migrated to schema " +
                              std::to_string(steps.back().from + 1) +
                              "; nothing was changed (open it read-only to export what it holds)",
                          SQLITE_CONSTRAINT);
    }
    for (size_t k = 0; k < steps.size(); ++k) {
        const int from = steps[k].from;
        if (from != static_cast<int>(k))
            throw DbError(
                db.path() + ": migration list is out of order at step " + std::to_string(k), 0);
        Transaction tx(db);
        // Read inside the write lock: another process may have migrated.
        const int64_t current = db.query_int("PRAGMA user_version", "read schema version");
        if (current > from) continue;  // tx rolls back (nothing done)
        const std::string action =
            "migrate schema " + std::to_string(from) + " -> " + std::to_string(from + 1);
        db.exec(steps[k].sql, action);
        const std::string set_version = "PRAGMA user_version = " + std::to_string(from + 1);
        db.exec(set_version.c_str(), action);
        // A step must leave every reference intact (ids copied as they are).
        {
            Stmt fk(db, "PRAGMA foreign_key_check");
            if (fk.step())
                throw DbError(db.path() + ": " + action + ": table " + std::string(fk.text(0)) +
                                  " row " + std::to_string(fk.int64(1)) + " refers to a missing " +
                                  std::string(fk.text(2)) + " row; the step was rolled back",
                              SQLITE_CONSTRAINT);
        }
        if (from == 0) {
            const std::string set_app = "PRAGMA application_id = " + std::to_string(kApplicationId);
            db.exec(set_app.c_str(), action);
        }
        tx.commit();
    }
}

}  // namespace wb::runlog
