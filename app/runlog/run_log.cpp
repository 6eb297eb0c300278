#include "runlog/run_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "gguf/path_kind.h"
#include "runlog/integrity.h"
#include "runlog/model_facts.h"
#include "runlog/schema.h"
#include "runlog/scratch_copy.h"
#include "runlog/sha256.h"
#include "runlog/sqlite_db.h"
#include "runlog/time_utc.h"

namespace wb::runlog {

namespace fs = std::filesystem;

std::string_view to_string(RunKind kind) {
    switch (kind) {
        case RunKind::Generate:
            return "generate";
        case RunKind::Chat:
            return "chat";
        case RunKind::Batch:
            return "batch";
        case RunKind::Compare:
            return "compare";
    }
    return "generate";
}

bool is_valid_run_kind(std::string_view kind) {
    if (kind.empty() || kind.size() > 64) return false;
    for (char c : kind)
        if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
    return true;
}

bool is_valid_finish_reason(std::string_view r) {
    static constexpr std::array<std::string_view, 8> kReasons{
        "stop", "length", "context", "timeout", "cancelled", "rejected", "error", "interrupted"};
    for (std::string_view k : kReasons)
        if (r == k) return true;
    return false;
}

namespace {

constexpr const char* kInsertResponse = R"sql(
INSERT INTO responses (run_id, model_version_id, environment_id, request_id, settings, redacted,
    prompt, prompt_sha256, prompt_bytes, prompt_tokens, output, output_sha256, output_bytes,
    output_tokens, finish_reason, error, queue_wait_ms, ttft_ms, tpot_ms, e2e_ms, prefill_tps,
    decode_tps, started_ms, finished_ms, prompt_cached_tokens, preemptions, prefill_ms)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
    ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27))sql";

// SQLite's primary result code of a DbError mapped to what the user is told.
OpenError to_open_error(const std::string& path, const DbError& e) {
    switch (e.code() & 0xff) {
        case SQLITE_NOTADB:
            return {OpenProblem::NotSqlite,
                    path + ": not a SQLite database (is --db pointing at another file?)"};
        case SQLITE_CORRUPT:
            return {OpenProblem::Corrupt,
                    path + ": the run-log database is corrupt (" + e.what() + ")"};
        case SQLITE_READONLY:
        case SQLITE_PERM:
            return {OpenProblem::ReadOnly, path + ": the run log cannot be written (" + e.what() +
                                               "); check the file's and its folder's permissions"};
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return {OpenProblem::CannotOpen,
                    path +
                        ": the run log stayed locked by another program (a running generate, "
                        "batch or the app); nothing was changed: try again when it is done (" +
                        e.what() + ")"};
        case SQLITE_FULL:
            return {OpenProblem::CannotOpen,
                    path + ": cannot set up the run log: the disk is full (" + e.what() +
                        "); free some space, pass --db with a file on another disk, or --no-log"};
        default:
            return {OpenProblem::CannotOpen, e.what()};
    }
}

// One sentence for a write that failed: the file, the cause in words, and
// SQLite's own text.
std::string write_failure(const std::string& path, const DbError& e, int attempts,
                          int busy_timeout_ms, int sys_errno) {
    const char* sqlite_text = sqlite3_errstr(e.code());
    if (sys_errno != 0 && (e.code() & 0xff) == SQLITE_IOERR)  // the OS's own words first
        return path + ": cannot write the run log: " + std::strerror(sys_errno) +
               " (SQLite: " + sqlite_text + ")";
    switch (e.code() & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return path + ": the run log stayed locked by another program for about " +
                   std::to_string(attempts * busy_timeout_ms / 1000) +
                   " s (SQLite: " + sqlite_text + ")";
        case SQLITE_FULL:
            return path + ": the disk is full (SQLite: " + sqlite_text + ")";
        case SQLITE_READONLY:
            return path + ": the run log cannot be written (SQLite: " + sqlite_text + ")";
        default:
            return path + ": cannot write the run log (SQLite: " + sqlite_text + ")";
    }
}

std::string json_text(const nlohmann::json& j) {
    // Invalid UTF-8 in a setting string is replaced (U+FFFD), never thrown.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct FileStamp {
    int64_t size = 0;
    int64_t mtime_ns = 0;
};

FileStamp stamp_of(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": not a regular file");
    return {static_cast<int64_t>(st.st_size),
            static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

}  // namespace

struct RunLog::Impl {
    Db db;
    bool read_only = false;
    int write_attempts = 3;      // tries of one write while the log is locked
    int busy_timeout_ms = 5000;  // SQLite's wait for the lock, per try (sqlite_db.cpp)
    // Every write starts here: a read-only log says so in a sentence.
    void check_writable() const {
        if (read_only)
            throw DbError(db.path() + ": the run log is open read-only; nothing is written to it",
                          SQLITE_READONLY);
    }
    std::vector<OpenNotice> notices;  // open_notices()
    mutable std::mutex mu;
    std::optional<Stmt> insert_response;
    int64_t sha256_count = 0;

    std::optional<std::string> get_setting(const char* key) const {
        Stmt st(db, "SELECT value FROM settings WHERE key = ?1");
        st.bind(1, std::string_view(key));
        if (!st.step()) return std::nullopt;
        return std::string(st.text(0));
    }
    void put_setting(const char* key, const std::optional<std::string>& value) {
        if (value) {
            Stmt st(db, "INSERT OR REPLACE INTO settings (key, value) VALUES (?1, ?2)");
            st.bind(1, std::string_view(key)).bind(2, std::string_view(*value)).run();
        } else {
            Stmt st(db, "DELETE FROM settings WHERE key = ?1");
            st.bind(1, std::string_view(key)).run();
        }
    }
    // True when a response of `run_id` is written without its text: global
    // redaction is on, or the run was started with no_text (schema v5). An
    // unknown run reads false; the write then fails on its reference.
    bool text_withheld(int64_t run_id) const {
        if (get_setting("redact_text").value_or("0") == "1") return true;
        Stmt st(db, "SELECT no_text FROM runs WHERE id = ?1");
        st.bind(1, run_id);
        return st.step() && st.int64(0) != 0;
    }
    std::optional<int> retention() const {
        auto v = get_setting("retention_days");
        if (!v) return std::nullopt;
        try {
            const int d = std::stoi(*v);
            if (d >= 1) return d;
        } catch (const std::exception&) {
        }
        return std::nullopt;  // a hand-edited bad value keeps everything
    }
    int64_t prune(int days, int64_t now_ms) {
        const int64_t cutoff = now_ms - int64_t{days} * 86400000;
        Transaction tx(db);
        Stmt del(db, "DELETE FROM responses WHERE started_ms < ?1");
        del.bind(1, cutoff).run();
        const int64_t n = sqlite3_changes64(db.get());
        Stmt loads(db, "DELETE FROM model_loads WHERE opened_ms < ?1");
        loads.bind(1, cutoff).run();
        Stmt events(db, "DELETE FROM run_events WHERE t_ms < ?1");
        events.bind(1, cutoff).run();
        Stmt runs(db,
                  "DELETE FROM runs WHERE ended_ms IS NOT NULL AND ended_ms < ?1 AND NOT EXISTS "
                  "(SELECT 1 FROM responses WHERE responses.run_id = runs.id) AND NOT EXISTS "
                  "(SELECT 1 FROM model_loads WHERE model_loads.run_id = runs.id) AND NOT EXISTS "
                  "(SELECT 1 FROM run_events WHERE run_events.run_id = runs.id)");
        runs.bind(1, cutoff).run();
        tx.commit();
        return n;
    }
};

RunLog::RunLog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RunLog::RunLog(RunLog&&) noexcept = default;
RunLog& RunLog::operator=(RunLog&&) noexcept = default;
RunLog::~RunLog() = default;

const std::string& RunLog::path() const {
    return impl_->db.path();
}
const Db& RunLog::db() const {
    return impl_->db;
}

void RunLog::with_connection(const std::function<void(const Db&)>& fn) {
    impl_->check_writable();
    std::lock_guard lock(impl_->mu);
    fn(impl_->db);
}

const std::vector<OpenNotice>& RunLog::open_notices() const {
    return impl_->notices;
}

namespace {

// The advice every strict open (the CLI) gives with a damaged log.
std::string damaged_advice(const std::string& path) {
    return " Nothing was changed. To keep its responses: `workbench-cli log salvage --db " + path +
           "` copies every readable one into a new log (the damaged file stays as it is); "
           "`workbench-cli export --db " +
           path +
           "` exports them (read-only). To go on now: pass --db with another file, or --no-log.";
}

// Refuses what can never hold a run log, before SQLite opens (and maybe
// creates, or blocks on) anything: a folder, a FIFO, a device (/dev/null
// reads as an empty database and swallows every write), a socket.
void require_regular_or_missing(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;  // missing: created
    if (S_ISREG(st.st_mode)) return;
    const char* kind = gguf::describe_path_kind(st.st_mode);
    throw OpenError(OpenProblem::CannotOpen,
                    path + ": is not a regular file (it is " + kind +
                        "), so it cannot hold a run log; pass --db with a file path, or --no-log");
}

// The file failed a check: what inspect_log() finds, as an OpenError.
OpenError damaged_error(const std::string& path) {
    LogInspection insp = inspect_log(path);
    if (insp.state == LogState::NotSqlite)
        return {OpenProblem::NotSqlite,
                path +
                    ": not a SQLite database, so not a run log (is --db pointing at another "
                    "file?); nothing was changed. Pass --db with a run-log file (a new one is "
                    "created), or --no-log."};
    return {OpenProblem::Corrupt, insp.message() + damaged_advice(path), insp};
}

// "0755": the permission bits of a mode as chmod writes them.
std::string mode_text(mode_t mode) {
    char b[8];
    std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(mode & 07777));
    return b;
}

// What open() made, so that a failed open takes it away again.
struct Created {
    std::vector<std::string> folders;  // outermost first
    bool file = false;
};

// Removes what `c` lists for the log at `path` (its -wal, -shm and
// -journal too, when the file is ours); folders only when empty.
void remove_created(const std::string& path, const Created& c) {
    if (c.file)
        for (const char* suffix : {"", "-wal", "-shm", "-journal"})
            ::unlink((path + suffix).c_str());
    for (auto it = c.folders.rbegin(); it != c.folders.rend(); ++it) ::rmdir(it->c_str());
}

// The log's folder: each missing level made 0700 (one note naming the
// folder); an existing one that group or others may enter is left as it
// is, with a warning. Throws OpenError (CannotOpen) when a level cannot be made.
void prepare_folder(const std::string& path, Created& created, std::vector<OpenNotice>& notices) {
    const fs::path dir = fs::path(path).parent_path();
    const fs::path folder = dir.empty() ? fs::path(".") : dir;
    struct stat st {};
    if (::stat(folder.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode) && (st.st_mode & 077) != 0)
            notices.push_back(
                {true, folder.string() + ": the run log's folder is open to other users (mode " +
                           mode_text(st.st_mode) +
                           "); the log itself is created private (0600), the folder is left as "
                           "it is (`chmod 700 " +
                           folder.string() + "` makes it private)"});
        return;
    }
    // The missing levels, outermost first.
    std::vector<fs::path> missing;
    for (fs::path f = folder; !f.empty(); f = f.parent_path()) {
        if (::stat(f.c_str(), &st) == 0) break;
        missing.insert(missing.begin(), f);
        if (f == f.parent_path()) break;
    }
    for (const fs::path& f : missing) {
        if (::mkdir(f.c_str(), 0700) == 0) {
            created.folders.push_back(f.string());
        } else if (errno != EEXIST) {  // EEXIST: made meanwhile by another process
            const std::string why = std::strerror(errno);
            remove_created(path, created);
            throw OpenError(OpenProblem::CannotOpen,
                            path + ": cannot create folder " + f.string() + ": " + why);
        }
    }
    notices.push_back({false, "created the run log's folder " + folder.string() +
                                  " (mode 0700: only you can read it)"});
}

// Creates the missing log file empty, mode 0600 (whatever the umask), so
// that SQLite opens a private file and gives its -wal and -shm the same
// mode. An existing file is left as it is.
void create_private_file(const std::string& path, Created& created) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        if (errno == EEXIST) return;  // made meanwhile by another process: theirs
        const std::string why = std::strerror(errno);
        remove_created(path, created);
        throw OpenError(OpenProblem::CannotOpen, path + ": cannot create the run log: " + why);
    }
    ::close(fd);
    created.file = true;
}

}  // namespace

RunLog RunLog::open(const std::string& path) {
    std::error_code ec;
    const fs::path p(path);
    if (fs::is_directory(p, ec))
        throw OpenError(OpenProblem::CannotOpen, path + ": is a folder, not a run-log file");
    require_regular_or_missing(path);
    // A file that is there but not SQLite: a damaged header of a real log,
    // or another file (a typo). Decided from its bytes, before SQLite.
    if (fs::file_size(p, ec) > 0 && !ec && !has_sqlite_header(path)) throw damaged_error(path);
    Created created;
    std::vector<OpenNotice> notices;
    prepare_folder(path, created, notices);
    if (!fs::exists(p, ec)) create_private_file(path, created);
    try {
        RunLog log = open_prepared(path);
        log.impl_->notices = std::move(notices);
        return log;
    } catch (...) {
        // Nothing of a log that could not be set up stays behind (a full
        // disk used to leave an empty runlog.sqlite).
        remove_created(path, created);
        throw;
    }
}

RunLog RunLog::open_prepared(const std::string& path) {
    auto impl = std::make_unique<Impl>();
    try {
        impl->db = Db(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX);
    } catch (const DbError& e) {
        throw to_open_error(path, e);
    }
    const Db& db = impl->db;
    // SQLite silently falls back to read-only when the file is not writable.
    if (sqlite3_db_readonly(db.get(), "main") == 1)
        throw OpenError(OpenProblem::ReadOnly,
                        path +
                            ": the run log is read-only (file permissions); make it "
                            "writable, pass --db with another file, or --no-log");
    try {
        // Read-only checks first: nothing is written to a file we reject.
        const int64_t app_id = db.query_int("PRAGMA application_id", "read application id");
        const int64_t version = db.query_int("PRAGMA user_version", "read schema version");
        const int64_t n_objects = db.query_int("SELECT count(*) FROM sqlite_schema", "read schema");
        if (app_id != kApplicationId && (app_id != 0 || version != 0 || n_objects != 0))
            throw OpenError(OpenProblem::Foreign,
                            path +
                                ": a SQLite database that is not an Inference Workbench "
                                "run log; pass --db with another file");
        if (version > schema_version())
            throw OpenError(OpenProblem::NewerSchema,
                            path + ": schema version " + std::to_string(version) +
                                " is newer than this build supports (" +
                                std::to_string(schema_version()) +
                                "); use a newer Inference Workbench or pass --db");
        // The quick integrity check (every page read once, no index
        // cross-check): a damaged log is reported, never written into.
        if (n_objects > 0) {
            Stmt qc(db, "PRAGMA quick_check(1)");
            if (!qc.step() || qc.text(0) != "ok") {
                impl.reset();  // close before inspecting a private copy
                throw damaged_error(path);
            }
        }
        const int64_t wal_ok = [&] {
            Stmt st(db, "PRAGMA journal_mode = WAL");
            return st.step() && st.text(0) == "wal";
        }();
        if (!wal_ok)
            throw OpenError(OpenProblem::CannotOpen, path + ": cannot switch to WAL journal");
        db.exec("PRAGMA foreign_keys = ON", "enable foreign keys");
        // FULL: a committed response survives power loss too, not just a crash.
        db.exec("PRAGMA synchronous = FULL", "set synchronous");
        migrate(db, migrations());
        impl->insert_response.emplace(db, kInsertResponse);
        if (auto days = impl->retention()) impl->prune(*days, now_utc_ms());
    } catch (const DbError& e) {
        if ((e.code() & 0xff) == SQLITE_CORRUPT || (e.code() & 0xff) == SQLITE_NOTADB) {
            impl.reset();
            throw damaged_error(path);
        }
        throw to_open_error(path, e);
    }
    return RunLog(std::move(impl));
}

RunLog RunLog::open_readonly(const std::string& path) {
    std::error_code ec;
    require_regular_or_missing(path);
    if (!fs::exists(path, ec)) throw OpenError(OpenProblem::CannotOpen, path + ": no run log here");
    auto impl = std::make_unique<Impl>();
    impl->read_only = true;
    try {
        impl->db = Db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
        const Db& db = impl->db;
        const int64_t app_id = db.query_int("PRAGMA application_id", "read application id");
        const int64_t version = db.query_int("PRAGMA user_version", "read schema version");
        if (app_id != kApplicationId)
            throw OpenError(OpenProblem::Foreign, path + ": not an Inference Workbench run log");
        if (version > schema_version())
            throw OpenError(OpenProblem::NewerSchema, path + ": schema version " +
                                                          std::to_string(version) +
                                                          " is newer than this build supports (" +
                                                          std::to_string(schema_version()) + ")");
    } catch (const DbError& e) {
        throw to_open_error(path, e);
    }
    return RunLog(std::move(impl));
}

bool RunLog::read_only() const {
    return impl_->read_only;
}

void RunLog::set_write_retry(int attempts, int busy_timeout_ms) {
    if (attempts < 1 || busy_timeout_ms < 0)
        throw std::invalid_argument("set_write_retry: attempts must be >= 1 and the timeout >= 0");
    std::lock_guard lock(impl_->mu);
    impl_->write_attempts = attempts;
    impl_->busy_timeout_ms = busy_timeout_ms;
    sqlite3_busy_timeout(impl_->db.get(), busy_timeout_ms);
}

int64_t RunLog::begin_run(RunKind kind, const std::string& name, const nlohmann::json& settings,
                          bool no_text) {
    return begin_run(to_string(kind), name, settings, no_text);
}

int64_t RunLog::begin_run(std::string_view kind, const std::string& name,
                          const nlohmann::json& settings, bool no_text) {
    impl_->check_writable();
    if (!is_valid_run_kind(kind))
        throw std::invalid_argument("run kind \"" + std::string(kind) +
                                    "\" is not a lowercase word (1 to 64 of a-z and _), e.g. "
                                    "generate, chat, batch, compare, server");
    if (!settings.is_object())
        throw std::invalid_argument("run settings must be a JSON object, got " +
                                    std::string(settings.type_name()));
    std::lock_guard lock(impl_->mu);
    Stmt st(impl_->db,
            "INSERT INTO runs (kind, name, started_ms, settings, no_text) "
            "VALUES (?1, ?2, ?3, ?4, ?5)");
    st.bind(1, kind).bind(2, std::string_view(name)).bind(3, now_utc_ms());
    // A no-text run keeps no text in its settings either (batch's system prompt).
    nlohmann::json stored = settings;
    if (no_text) stored.erase("system_prompt");
    st.bind(4, std::string_view(json_text(stored))).bind(5, int64_t{no_text});
    run_write(st, "run \"" + name + "\" was not started", nullptr);
    return sqlite3_last_insert_rowid(impl_->db.get());
}

void RunLog::end_run(int64_t run_id) {
    impl_->check_writable();
    std::lock_guard lock(impl_->mu);
    Stmt st(impl_->db, "UPDATE runs SET ended_ms = ?1 WHERE id = ?2");
    st.bind(1, now_utc_ms()).bind(2, run_id);
    run_write(st, "run " + std::to_string(run_id) + " has no end time yet", nullptr);
    if (sqlite3_changes64(impl_->db.get()) != 1)
        throw std::invalid_argument("end_run: no run with id " + std::to_string(run_id));
}

int64_t RunLog::ensure_model_version(const std::string& gguf_path) {
    impl_->check_writable();
    std::error_code ec;
    const std::string path = fs::canonical(gguf_path, ec).string();
    if (ec) throw std::runtime_error(gguf_path + ": cannot read: " + ec.message());
    FileStamp stamp = stamp_of(path);
    {
        std::lock_guard lock(impl_->mu);
        Stmt st(impl_->db,
                "SELECT model_version_id FROM file_hash_cache "
                "WHERE path = ?1 AND file_size = ?2 AND mtime_ns = ?3");
        st.bind(1, std::string_view(path)).bind(2, stamp.size).bind(3, stamp.mtime_ns);
        if (st.step()) return st.int64(0);
    }
    // Hash outside the lock: a multi-GB file takes seconds and other threads
    // keep logging meanwhile. Repeat if the file changed while we read it.
    ModelFacts facts;
    std::string sha;
    for (int attempt = 0;; ++attempt) {
        facts = read_model_facts(path);
        sha = sha256_file_hex(path);
        const FileStamp after = stamp_of(path);
        if (after.size == stamp.size && after.mtime_ns == stamp.mtime_ns) break;
        if (attempt == 2) throw std::runtime_error(path + ": the file keeps changing while hashed");
        stamp = after;
    }
    std::lock_guard lock(impl_->mu);
    ++impl_->sha256_count;
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [type, count] : facts.tensor_types) types[type] = count;
    Transaction tx(impl_->db);
    Stmt ins(impl_->db, R"sql(
        INSERT OR IGNORE INTO model_versions (sha256, path, file_size, name, architecture,
            file_type, file_type_name, tensor_types, n_params, context_length, tokenizer_model,
            first_seen_ms)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12))sql");
    ins.bind(1, std::string_view(sha)).bind(2, std::string_view(path));
    ins.bind(3, stamp.size).bind(4, facts.name).bind(5, facts.architecture);
    ins.bind(6, facts.file_type).bind(7, facts.file_type_name);
    ins.bind(8, std::string_view(json_text(types))).bind(9, facts.n_params);
    ins.bind(10, facts.context_length).bind(11, facts.tokenizer_model).bind(12, now_utc_ms());
    ins.run();
    Stmt sel(impl_->db, "SELECT id FROM model_versions WHERE sha256 = ?1");
    sel.bind(1, std::string_view(sha));
    if (!sel.step()) throw DbError(path + ": model version row missing after insert", 0);
    const int64_t id = sel.int64(0);
    Stmt cache(impl_->db,
               "INSERT OR REPLACE INTO file_hash_cache (path, file_size, mtime_ns, "
               "model_version_id) VALUES (?1, ?2, ?3, ?4)");
    cache.bind(1, std::string_view(path)).bind(2, stamp.size).bind(3, stamp.mtime_ns).bind(4, id);
    cache.run();
    tx.commit();
    return id;
}

int64_t RunLog::ensure_environment(const EnvironmentInfo& e) {
    impl_->check_writable();
    if (e.device.backend != "vulkan" && e.device.backend != "cpu")
        throw std::invalid_argument("environment backend must be \"vulkan\" or \"cpu\", got \"" +
                                    e.device.backend + "\"");
    std::lock_guard lock(impl_->mu);
    const std::array<std::string_view, 11> fields{e.app_version,
                                                  e.git_commit,
                                                  e.os,
                                                  e.kernel,
                                                  e.cpu,
                                                  e.device.backend,
                                                  e.device.name,
                                                  e.device.type,
                                                  e.device.driver_name,
                                                  e.device.driver_version,
                                                  e.device.api_version};
    Transaction tx(impl_->db);
    Stmt ins(impl_->db, R"sql(
        INSERT OR IGNORE INTO environments (app_version, git_commit, os, kernel, cpu, backend,
            vk_device_name, vk_device_type, vk_driver_name, vk_driver_version, vk_api_version,
            first_seen_ms)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12))sql");
    for (int i = 0; i < 11; ++i) ins.bind(i + 1, fields[size_t(i)]);
    ins.bind(12, now_utc_ms()).run();
    Stmt sel(impl_->db, R"sql(
        SELECT id FROM environments WHERE app_version = ?1 AND git_commit = ?2 AND os = ?3
            AND kernel = ?4 AND cpu = ?5 AND backend = ?6 AND vk_device_name = ?7
            AND vk_device_type = ?8 AND vk_driver_name = ?9 AND vk_driver_version = ?10
            AND vk_api_version = ?11)sql");
    for (int i = 0; i < 11; ++i) sel.bind(i + 1, fields[size_t(i)]);
    if (!sel.step()) throw DbError(path() + ": environment row missing after insert", 0);
    const int64_t id = sel.int64(0);
    tx.commit();
    return id;
}

namespace {

constexpr const char* kUpdateResponse = R"sql(
UPDATE responses SET run_id = ?1, model_version_id = ?2, environment_id = ?3, request_id = ?4,
    settings = ?5, redacted = ?6, prompt = ?7, prompt_sha256 = ?8, prompt_bytes = ?9,
    prompt_tokens = ?10, output = ?11, output_sha256 = ?12, output_bytes = ?13,
    output_tokens = ?14, finish_reason = ?15, error = ?16, queue_wait_ms = ?17, ttft_ms = ?18,
    tpot_ms = ?19, e2e_ms = ?20, prefill_tps = ?21, decode_tps = ?22, started_ms = ?23,
    finished_ms = ?24, prompt_cached_tokens = ?25, preemptions = ?26, prefill_ms = ?27
WHERE id = ?28)sql";

void check_record(const ResponseRecord& r, const char* who) {
    if (!is_valid_finish_reason(r.finish_reason))
        throw std::invalid_argument(std::string(who) + ": finish_reason \"" + r.finish_reason +
                                    "\" is not one of stop, length, context, timeout, "
                                    "cancelled, rejected, error, interrupted");
    if (!r.settings.is_object())
        throw std::invalid_argument(std::string(who) + ": settings must be a JSON object, got " +
                                    std::string(r.settings.type_name()));
}

// Binds the 27 columns of kInsertResponse / kUpdateResponse.
void bind_record(Stmt& st, const ResponseRecord& r, bool redact) {
    st.bind(1, r.run_id).bind(2, r.model_version_id).bind(3, r.environment_id);
    st.bind(4, std::string_view(r.request_id)).bind(5, std::string_view(json_text(r.settings)));
    st.bind(6, int64_t{redact});
    if (redact)
        st.bind_null(7);
    else
        st.bind(7, std::string_view(r.prompt));
    st.bind(8, std::string_view(sha256_hex(r.prompt)));
    st.bind(9, static_cast<int64_t>(r.prompt.size()));
    st.bind(10, r.prompt_tokens);
    if (redact)
        st.bind_null(11);
    else
        st.bind(11, std::string_view(r.output));
    st.bind(12, std::string_view(sha256_hex(r.output)));
    st.bind(13, static_cast<int64_t>(r.output.size()));
    st.bind(14, r.output_tokens).bind(15, std::string_view(r.finish_reason));
    if (r.error.empty())
        st.bind_null(16);
    else
        st.bind(16, std::string_view(r.error));
    st.bind(17, r.queue_wait_ms).bind(18, r.ttft_ms).bind(19, r.tpot_ms).bind(20, r.e2e_ms);
    st.bind(21, r.prefill_tps).bind(22, r.decode_tps).bind(23, r.started_ms);
    st.bind(24, r.finished_ms).bind(25, r.prompt_cached_tokens).bind(26, r.preemptions);
    st.bind(27, r.prefill_ms);
}

}  // namespace

// Runs a bound write statement as its own durable transaction, waiting
// again while another program holds the lock (write_attempts tries);
// afterwards a failure is one sentence naming the file, the cause and
// `what` (the response).
void RunLog::run_write(Stmt& st, const std::string& what, const ResponseRecord* r) {
    for (int attempt = 1;; ++attempt) {
        try {
            st.run();  // autocommit
            return;
        } catch (const DbError& e) {
            const int primary = e.code() & 0xff;
            if ((primary == SQLITE_BUSY || primary == SQLITE_LOCKED) &&
                attempt < impl_->write_attempts) {
                sqlite3_reset(st.get());  // bindings kept
                continue;
            }
            st.reset();
            if (primary == SQLITE_CONSTRAINT && r)
                throw DbError(std::string(e.what()) + " (run " + std::to_string(r->run_id) +
                                  ", model version " + std::to_string(r->model_version_id) +
                                  ", environment " + std::to_string(r->environment_id) +
                                  " must exist)",
                              e.code());
            throw DbError(write_failure(path(), e, attempt, impl_->busy_timeout_ms,
                                        sqlite3_system_errno(impl_->db.get())) +
                              "; " + what,
                          e.code());
        }
    }
}

int64_t RunLog::log_response(const ResponseRecord& r) {
    impl_->check_writable();
    check_record(r, "log_response");
    std::lock_guard lock(impl_->mu);
    const bool redact = impl_->text_withheld(r.run_id);
    Stmt& st = *impl_->insert_response;
    bind_record(st, r, redact);
    run_write(st, "response \"" + r.request_id + "\" is not logged yet", &r);
    return sqlite3_last_insert_rowid(impl_->db.get());
}

int64_t RunLog::begin_response(const ResponseRecord& started) {
    ResponseRecord r = started;
    r.finish_reason = "interrupted";
    r.error = kInterruptedError;
    r.finished_ms.reset();
    return log_response(r);
}

void RunLog::update_response(int64_t id, const std::string& output,
                             std::optional<int64_t> output_tokens) {
    impl_->check_writable();
    std::lock_guard lock(impl_->mu);
    const bool redact = impl_->get_setting("redact_text").value_or("0") == "1";
    // A row started without text (a no-text run, or redacted since) stays
    // without: the row's own flag decides, in the same statement.
    Stmt st(impl_->db,
            "UPDATE responses SET output = CASE WHEN redacted = 1 THEN NULL ELSE ?1 END, "
            "output_sha256 = ?2, output_bytes = ?3, "
            "output_tokens = ?4 WHERE id = ?5 AND finish_reason = 'interrupted'");
    if (redact)
        st.bind_null(1);
    else
        st.bind(1, std::string_view(output));
    st.bind(2, std::string_view(sha256_hex(output)));
    st.bind(3, static_cast<int64_t>(output.size())).bind(4, output_tokens).bind(5, id);
    run_write(st, "the text of response " + std::to_string(id) + " so far is not logged yet",
              nullptr);
}

void RunLog::finish_response(int64_t id, const ResponseRecord& r) {
    impl_->check_writable();
    check_record(r, "finish_response");
    std::lock_guard lock(impl_->mu);
    // A started row whose text was withheld or removed since (redact_run,
    // retention) gets none back when it finishes.
    bool redact = impl_->text_withheld(r.run_id);
    if (!redact) {
        Stmt row(impl_->db, "SELECT redacted FROM responses WHERE id = ?1");
        row.bind(1, id);
        redact = row.step() && row.int64(0) != 0;
    }
    Stmt st(impl_->db, kUpdateResponse);
    bind_record(st, r, redact);
    st.bind(28, id);
    run_write(st, "response \"" + r.request_id + "\" keeps its started row for now", &r);
    if (sqlite3_changes64(impl_->db.get()) != 1)
        throw std::invalid_argument("finish_response: no response with id " + std::to_string(id));
}

int64_t RunLog::log_model_load(const ModelLoadRecord& l) {
    impl_->check_writable();
    if (!is_valid_run_kind(l.surface))
        throw std::invalid_argument("log_model_load: surface \"" + l.surface +
                                    "\" is not a lowercase word (1 to 64 of a-z and _)");
    if (!l.settings.is_object())
        throw std::invalid_argument("log_model_load: settings must be a JSON object, got " +
                                    std::string(l.settings.type_name()));
    if (l.pipeline_cache != "cold" && l.pipeline_cache != "warm" && l.pipeline_cache != "none")
        throw std::invalid_argument("log_model_load: pipeline_cache \"" + l.pipeline_cache +
                                    "\" is not one of cold, warm, none");
    std::lock_guard lock(impl_->mu);
    Stmt st(impl_->db, R"sql(
        INSERT INTO model_loads (model_version_id, environment_id, run_id, surface, settings,
            opened_ms, vocab_ms, map_ms, parse_ms, device_ms, upload_ms, pipelines_ms, pipelines,
            ready_ms, pipeline_cache, pipeline_cache_bytes)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16))sql");
    st.bind(1, l.model_version_id).bind(2, l.environment_id).bind(3, l.run_id);
    st.bind(4, std::string_view(l.surface)).bind(5, std::string_view(json_text(l.settings)));
    st.bind(6, l.opened_ms).bind(7, l.vocab_ms).bind(8, l.map_ms).bind(9, l.parse_ms);
    st.bind(10, l.device_ms).bind(11, l.upload_ms).bind(12, l.pipelines_ms).bind(13, l.pipelines);
    st.bind(14, l.ready_ms).bind(15, std::string_view(l.pipeline_cache));
    st.bind(16, l.pipeline_cache_bytes);
    try {
        run_write(
            st,
            "the load of model version " + std::to_string(l.model_version_id) + " is not logged",
            nullptr);
    } catch (const DbError& e) {
        if ((e.code() & 0xff) == SQLITE_CONSTRAINT)
            throw DbError(std::string(e.what()) + " (model version " +
                              std::to_string(l.model_version_id) + ", environment " +
                              std::to_string(l.environment_id) + " and the run must exist)",
                          e.code());
        throw;
    }
    return sqlite3_last_insert_rowid(impl_->db.get());
}

int64_t RunLog::log_event(const RunEvent& e) {
    impl_->check_writable();
    if (!is_valid_run_kind(e.kind))
        throw std::invalid_argument("log_event: kind \"" + e.kind +
                                    "\" is not a lowercase word (1 to 64 of a-z and _)");
    if (!e.details.is_object())
        throw std::invalid_argument("log_event: details must be a JSON object, got " +
                                    std::string(e.details.type_name()));
    std::lock_guard lock(impl_->mu);
    Stmt st(impl_->db,
            "INSERT INTO run_events (run_id, t_ms, kind, details) VALUES (?1, ?2, ?3, ?4)");
    st.bind(1, e.run_id).bind(2, e.t_ms).bind(3, std::string_view(e.kind));
    st.bind(4, std::string_view(json_text(e.details)));
    try {
        run_write(st,
                  "the " + e.kind + " event of run " + std::to_string(e.run_id) + " is not logged",
                  nullptr);
    } catch (const DbError& err) {
        if ((err.code() & 0xff) == SQLITE_CONSTRAINT)
            throw DbError(
                std::string(err.what()) + " (run " + std::to_string(e.run_id) + " must exist)",
                err.code());
        throw;
    }
    return sqlite3_last_insert_rowid(impl_->db.get());
}

std::vector<RunEvent> RunLog::events(int64_t run_id) const {
    std::lock_guard lock(impl_->mu);
    std::vector<RunEvent> out;
    Stmt st(impl_->db,
            "SELECT id, run_id, t_ms, kind, details FROM run_events WHERE run_id = ?1 "
            "ORDER BY t_ms, id");
    st.bind(1, run_id);
    while (st.step()) {
        RunEvent e;
        e.id = st.int64(0);
        e.run_id = st.int64(1);
        e.t_ms = st.int64(2);
        e.kind = std::string(st.text(3));
        e.details = nlohmann::json::parse(st.text(4), nullptr, false);
        if (e.details.is_discarded()) e.details = nlohmann::json::object();
        out.push_back(std::move(e));
    }
    return out;
}

void RunLog::set_model_load_first_token(int64_t load_id, double first_token_ms,
                                        double first_ttft_ms) {
    impl_->check_writable();
    std::lock_guard lock(impl_->mu);
    {
        Stmt has(impl_->db, "SELECT 1 FROM model_loads WHERE id = ?1");
        has.bind(1, load_id);
        if (!has.step())
            throw std::invalid_argument("set_model_load_first_token: no model load with id " +
                                        std::to_string(load_id));
    }
    Stmt st(impl_->db,
            "UPDATE model_loads SET first_token_ms = ?1, first_ttft_ms = ?2 "
            "WHERE id = ?3 AND first_token_ms IS NULL");
    st.bind(1, first_token_ms).bind(2, first_ttft_ms).bind(3, load_id);
    run_write(st, "the first token of model load " + std::to_string(load_id) + " is not logged",
              nullptr);
}

bool RunLog::redact_text() const {
    std::lock_guard lock(impl_->mu);
    return impl_->get_setting("redact_text").value_or("0") == "1";
}

void RunLog::set_redact_text(bool on) {
    impl_->check_writable();
    std::lock_guard lock(impl_->mu);
    impl_->put_setting("redact_text", std::string(on ? "1" : "0"));
}

std::optional<int> RunLog::retention_days() const {
    std::lock_guard lock(impl_->mu);
    return impl_->retention();
}

void RunLog::set_retention_days(std::optional<int> days) {
    impl_->check_writable();
    if (days && *days < 1)
        throw std::invalid_argument("retention must be at least 1 day, got " +
                                    std::to_string(*days));
    std::lock_guard lock(impl_->mu);
    impl_->put_setting("retention_days",
                       days ? std::optional<std::string>(std::to_string(*days)) : std::nullopt);
}

int64_t RunLog::prune_older_than_days(int days, int64_t now_ms) {
    impl_->check_writable();
    if (days < 0)
        throw std::invalid_argument("prune: days must be >= 0, got " + std::to_string(days));
    std::lock_guard lock(impl_->mu);
    return impl_->prune(days, now_ms);
}

int64_t RunLog::sha256_computations() const {
    std::lock_guard lock(impl_->mu);
    return impl_->sha256_count;
}

}  // namespace wb::runlog
