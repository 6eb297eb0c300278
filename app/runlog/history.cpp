#include "runlog/history.h"

#include <filesystem>

#include "runlog/exporter.h"
#include "runlog/model_label.h"
#include "runlog/row_scan.h"
#include "runlog/run_log.h"
#include "runlog/schema.h"
#include "runlog/scratch_copy.h"
#include "runlog/sqlite_db.h"
#include "runlog/time_utc.h"

namespace wb::runlog {

namespace {

constexpr const char* kFrom =
    " FROM responses r JOIN runs u ON u.id = r.run_id"
    " JOIN model_versions m ON m.id = r.model_version_id"
    " JOIN environments e ON e.id = r.environment_id";

std::optional<std::string> opt_text(const Stmt& st, int col) {
    if (st.is_null(col)) return std::nullopt;
    return std::string(st.text(col));
}

std::optional<int64_t> opt_int(const Stmt& st, int col) {
    if (st.is_null(col)) return std::nullopt;
    return st.int64(col);
}

std::optional<double> opt_real(const Stmt& st, int col) {
    if (st.is_null(col)) return std::nullopt;
    return st.real(col);
}

}  // namespace

struct HistoryReader::Impl {
    Db db;
    int64_t version = 0;
};

HistoryReader::HistoryReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HistoryReader::HistoryReader(HistoryReader&&) noexcept = default;
HistoryReader& HistoryReader::operator=(HistoryReader&&) noexcept = default;
HistoryReader::~HistoryReader() = default;

HistoryReader HistoryReader::open(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw OpenError(OpenProblem::CannotOpen, path + ": no run log here");
    auto impl = std::make_unique<Impl>();
    try {
        // NOMUTEX: the History tab uses its reader from the GUI thread only.
        impl->db = Db(path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
        sqlite3_busy_timeout(impl->db.get(), 2000);
        if (impl->db.query_int("PRAGMA application_id", "read application id") != kApplicationId)
            throw OpenError(OpenProblem::Foreign,
                            path + ": a SQLite database, but not an Inference Workbench run log");
        impl->version = impl->db.query_int("PRAGMA user_version", "read schema version");
    } catch (const DbError& e) {
        // What the file is, in the words export and the strict open use,
        // not SQLite's "file is not a database".
        if (!is_damage(e)) throw;
        if (has_sqlite_header(path) || guess_page_size(path) != 0)
            throw OpenError(OpenProblem::Corrupt,
                            path + ": the run log is damaged, so it cannot be read (" + e.what() +
                                "); `workbench-cli log check --db " + path +
                                "` says what can still be read, `log salvage` copies it out");
        throw OpenError(OpenProblem::NotSqlite,
                        path +
                            ": not a SQLite database, so not a run log (is --db pointing at "
                            "another file?); nothing was changed");
    }
    if (impl->version > schema_version())
        throw OpenError(OpenProblem::NewerSchema, path + ": schema version " +
                                                      std::to_string(impl->version) +
                                                      " is newer than this build supports (" +
                                                      std::to_string(schema_version()) + ")");
    return HistoryReader(std::move(impl));
}

const std::string& HistoryReader::path() const {
    return impl_->db.path();
}

const Db& HistoryReader::db() const {
    return impl_->db;
}

std::pair<int64_t, int64_t> HistoryReader::lists_key() const {
    Stmt st(
        impl_->db,
        "SELECT (SELECT COUNT(*) FROM model_versions), (SELECT COALESCE(MAX(id), 0) FROM runs)");
    if (!st.step()) return {0, 0};
    return {st.int64(0), st.int64(1)};
}

std::vector<ModelChoice> HistoryReader::models() const {
    std::vector<ModelChoice> out;
    const std::string sql = std::string("SELECT m.id, ") + kModelLabelSql +
                            ", COALESCE(m.name, ''), m.sha256 FROM model_versions m ORDER BY m.id";
    Stmt st(impl_->db, sql.c_str());
    while (st.step())
        out.push_back({st.int64(0), std::string(st.text(1)), std::string(st.text(2)),
                       std::string(st.text(3))});
    return out;
}

std::vector<RunChoice> HistoryReader::runs(size_t limit) const {
    std::vector<RunChoice> out;
    Stmt st(impl_->db, "SELECT id, kind, name FROM runs ORDER BY id DESC LIMIT ?1");
    st.bind(1, static_cast<int64_t>(limit));
    while (st.step())
        out.push_back({st.int64(0), std::string(st.text(1)), std::string(st.text(2))});
    return out;
}

std::vector<HistoryRow> HistoryReader::rows(const ExportFilter& filter, size_t limit) const {
    const FilterSql where = filter_sql(filter);
    // Newest second first, as the table shows the time; within a second by
    // id (the order the rows were written), so ids do not interleave.
    const std::string sql =
        std::string("SELECT r.id, r.started_ms, r.run_id, u.kind, ") + kModelLabelSql +
        ", r.request_id, r.finish_reason, substr(replace(r.prompt, char(10), ' '), 1, 60), "
        "substr(replace(r.output, char(10), ' '), 1, 100), r.output_tokens, r.ttft_ms, "
        "r.tpot_ms, r.e2e_ms" +
        kFrom + " WHERE " + where.condition +
        " ORDER BY r.started_ms / 1000 DESC, r.id DESC LIMIT ?";
    Stmt st(impl_->db, sql.c_str());
    bind_all(st, where.binds);
    st.bind(static_cast<int>(where.binds.size()) + 1, static_cast<int64_t>(limit));
    std::vector<HistoryRow> out;
    while (st.step()) {
        HistoryRow h;
        h.id = st.int64(0);
        h.started_ms = st.int64(1);
        h.run_id = st.int64(2);
        h.run_kind = std::string(st.text(3));
        h.model = std::string(st.text(4));
        h.request_id = std::string(st.text(5));
        h.finish_reason = std::string(st.text(6));
        h.prompt_preview = opt_text(st, 7);
        h.output_preview = opt_text(st, 8);
        h.output_tokens = opt_int(st, 9);
        h.ttft_ms = opt_real(st, 10);
        h.tpot_ms = opt_real(st, 11);
        h.e2e_ms = opt_real(st, 12);
        out.push_back(std::move(h));
    }
    return out;
}

std::vector<ModelLoadRow> HistoryReader::model_loads(size_t limit) const {
    std::vector<ModelLoadRow> out;
    if (!impl_->db.has_column("model_loads", "id")) return out;  // before schema 4
    const std::string sql =
        std::string("SELECT l.id, l.opened_ms, l.surface, l.run_id, ") + kModelLabelSql +
        ", coalesce(json_extract(l.settings, '$.backend'), ''), l.pipeline_cache, l.vocab_ms, "
        "l.map_ms, l.parse_ms, l.device_ms, l.upload_ms, l.pipelines_ms, l.ready_ms, "
        "l.first_token_ms, l.first_ttft_ms FROM model_loads l "
        "JOIN model_versions m ON m.id = l.model_version_id ORDER BY l.id DESC LIMIT ?1";
    Stmt st(impl_->db, sql.c_str());
    st.bind(1, static_cast<int64_t>(limit));
    while (st.step()) {
        ModelLoadRow r;
        r.id = st.int64(0);
        r.opened_ms = st.int64(1);
        r.surface = std::string(st.text(2));
        r.run_id = opt_int(st, 3);
        r.model = std::string(st.text(4));
        r.backend = std::string(st.text(5));
        r.pipeline_cache = std::string(st.text(6));
        r.vocab_ms = opt_real(st, 7);
        r.map_ms = opt_real(st, 8);
        r.parse_ms = opt_real(st, 9);
        r.device_ms = opt_real(st, 10);
        r.upload_ms = opt_real(st, 11);
        r.pipelines_ms = opt_real(st, 12);
        r.ready_ms = st.real(13);
        r.first_token_ms = opt_real(st, 14);
        r.first_ttft_ms = opt_real(st, 15);
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<RunEventRow> HistoryReader::run_events(int64_t run_id, size_t limit) const {
    std::vector<RunEventRow> out;
    if (!impl_->db.has_column("run_events", "id")) return out;  // before schema 6
    Stmt st(impl_->db,
            "SELECT id, run_id, t_ms, kind, details FROM (SELECT * FROM run_events "
            "WHERE ?1 = 0 OR run_id = ?1 ORDER BY t_ms DESC, id DESC LIMIT ?2) "
            "ORDER BY t_ms, id");
    st.bind(1, run_id).bind(2, static_cast<int64_t>(limit));
    while (st.step()) {
        RunEventRow e;
        e.id = st.int64(0);
        e.run_id = st.int64(1);
        e.t_ms = st.int64(2);
        e.kind = std::string(st.text(3));
        e.details = std::string(st.text(4));
        out.push_back(std::move(e));
    }
    return out;
}

ResponseDetail HistoryReader::detail(int64_t id) const {
    // (name, SQL expression).
    std::vector<std::pair<const char*, std::string>> cols = {
        {"response_id", "r.id"},
        {"started_utc", "r.started_ms"},
        {"finished_utc", "r.finished_ms"},
        {"run_id", "r.run_id"},
        {"run_kind", "u.kind"},
        {"run_name", "u.name"},
        {"request_id", "r.request_id"},
        {"model", kModelLabelSql},
        {"model_name", "m.name"},
        {"model_sha256", "m.sha256"},
        {"model_path", "m.path"},
        {"architecture", "m.architecture"},
        {"file_type", "m.file_type_name"},
        {"tensor_types", "m.tensor_types"},
        {"n_params", "m.n_params"},
        {"app_version", "e.app_version"},
        {"git_commit", "e.git_commit"},
        {"os", "e.os"},
        {"cpu", "e.cpu"},
        {"backend", "e.backend"},
        {"device", "e.vk_device_name"},
        {"device_type", "e.vk_device_type"},
        {"driver", "e.vk_driver_name"},
        {"driver_version", "e.vk_driver_version"},
        {"vulkan_api", "e.vk_api_version"},
        {"settings", "r.settings"},
        {"redacted", "r.redacted"},
        // A row whose text was withheld or removed (redaction, a no-text
        // run, retention) says so instead of showing an empty answer.
        {"prompt", "CASE WHEN r.redacted = 1 THEN '[redacted]' ELSE r.prompt END"},
        {"prompt_tokens", "r.prompt_tokens"},
        {"output", "CASE WHEN r.redacted = 1 THEN '[redacted]' ELSE r.output END"},
        {"output_tokens", "r.output_tokens"},
        {"finish_reason", "r.finish_reason"},
        {"error", "r.error"},
        {"queue_wait_ms", "r.queue_wait_ms"},
    };
    for (const auto& c : std::initializer_list<std::pair<const char*, std::string>>{
             {"prefill_ms", "r.prefill_ms"},
             {"ttft_ms", "r.ttft_ms"},
             {"tpot_ms", "r.tpot_ms"},
             {"e2e_ms", "r.e2e_ms"},
             {"prefill_tps", "r.prefill_tps"},
             {"decode_tps", "r.decode_tps"},
             {"prompt_cached_tokens", "r.prompt_cached_tokens"},
             {"preemptions", "r.preemptions"}})
        cols.push_back(c);
    std::string sql = "SELECT ";
    for (size_t i = 0; i < cols.size(); ++i) {
        // A log opened read-only keeps its schema: later columns read as NULL.
        const std::string& expr = cols[i].second;
        const bool missing = expr.starts_with("r.") &&
                             expr.find_first_of("( ") == std::string::npos &&
                             !impl_->db.has_column("responses", std::string_view(expr).substr(2));
        sql += (i ? ", " : "") + (missing ? std::string("NULL") : expr);
    }
    sql += std::string(kFrom) + " WHERE r.id = ?1";
    Stmt st(impl_->db, sql.c_str());
    st.bind(1, id);
    ResponseDetail out;
    if (!st.step()) return out;
    for (size_t i = 0; i < cols.size(); ++i) {
        const int c = static_cast<int>(i);
        std::optional<std::string> v = opt_text(st, c);
        const std::string name = cols[i].first;
        if (v && (name == "started_utc" || name == "finished_utc")) v = format_utc_ms(st.int64(c));
        out.emplace_back(name, std::move(v));
    }
    return out;
}

}  // namespace wb::runlog
