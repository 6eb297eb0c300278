#include "runlog/exporter.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "runlog/csv.h"
#include "runlog/integrity.h"
#include "runlog/model_label.h"
#include "runlog/row_scan.h"
#include "runlog/schema.h"
#include "runlog/scratch_copy.h"
#include "runlog/sqlite_db.h"
#include "runlog/time_utc.h"
#include "runlog/utf8.h"

namespace wb::runlog {

namespace {

// How a column's SQLite value is written.
enum class Kind { Int, Real, Text, Json, Time };

struct Column {
    const char* name;
    const char* expr;  // SQL over r (responses), u (runs), m (model_versions), e (environments)
    Kind kind;
};

constexpr Column kColumns[] = {
    {"response_id", "r.id", Kind::Int},
    {"run_id", "r.run_id", Kind::Int},
    {"run_kind", "u.kind", Kind::Text},
    {"run_name", "u.name", Kind::Text},
    {"request_id", "r.request_id", Kind::Text},
    {"started_utc", "r.started_ms", Kind::Time},
    {"finished_utc", "r.finished_ms", Kind::Time},
    {"model_sha256", "m.sha256", Kind::Text},
    {"model_name", "m.name", Kind::Text},
    {"model_label", kModelLabelSql, Kind::Text},
    {"model_path", "m.path", Kind::Text},
    {"model_file_size", "m.file_size", Kind::Int},
    {"model_architecture", "m.architecture", Kind::Text},
    {"model_file_type", "m.file_type_name", Kind::Text},
    {"model_tensor_types", "m.tensor_types", Kind::Json},
    {"model_n_params", "m.n_params", Kind::Int},
    {"model_context_length", "m.context_length", Kind::Int},
    {"model_tokenizer", "m.tokenizer_model", Kind::Text},
    {"app_version", "e.app_version", Kind::Text},
    {"git_commit", "e.git_commit", Kind::Text},
    {"os", "e.os", Kind::Text},
    {"kernel", "e.kernel", Kind::Text},
    {"cpu", "e.cpu", Kind::Text},
    {"backend", "e.backend", Kind::Text},
    {"vk_device_name", "e.vk_device_name", Kind::Text},
    {"vk_device_type", "e.vk_device_type", Kind::Text},
    {"vk_driver_name", "e.vk_driver_name", Kind::Text},
    {"vk_driver_version", "e.vk_driver_version", Kind::Text},
    {"vk_api_version", "e.vk_api_version", Kind::Text},
    {"settings", "r.settings", Kind::Json},
    {"redacted", "r.redacted", Kind::Int},
    {"prompt", "r.prompt", Kind::Text},
    {"prompt_sha256", "r.prompt_sha256", Kind::Text},
    {"prompt_bytes", "r.prompt_bytes", Kind::Int},
    {"prompt_tokens", "r.prompt_tokens", Kind::Int},
    {"output", "r.output", Kind::Text},
    {"output_sha256", "r.output_sha256", Kind::Text},
    {"output_bytes", "r.output_bytes", Kind::Int},
    {"output_tokens", "r.output_tokens", Kind::Int},
    {"finish_reason", "r.finish_reason", Kind::Text},
    {"error", "r.error", Kind::Text},
    {"queue_wait_ms", "r.queue_wait_ms", Kind::Real},
    {"prefill_ms", "r.prefill_ms", Kind::Real},
    {"ttft_ms", "r.ttft_ms", Kind::Real},
    {"tpot_ms", "r.tpot_ms", Kind::Real},
    {"e2e_ms", "r.e2e_ms", Kind::Real},
    {"prefill_tps", "r.prefill_tps", Kind::Real},
    {"decode_tps", "r.decode_tps", Kind::Real},
    {"prompt_cached_tokens", "r.prompt_cached_tokens", Kind::Int},
    {"preemptions", "r.preemptions", Kind::Int},
    // The price a Batch, Load or Compare run was priced at (its settings'
    // "price", cost::to_json), and the row's cost by it when it is per
    // million tokens: (per_m_input x prompt tokens + per_m_output x output
    // tokens) / 1e6. A per-hour price prices a run's busy or wall time,
    // not a row: its rows' cost is empty.
    {"price",
     "CASE WHEN json_type(u.settings, '$.price') = 'object' THEN json_extract(u.settings, "
     "'$.price') END",
     Kind::Json},
    {"cost",
     "CASE WHEN json_extract(u.settings, '$.price.basis') = 'per_m_tokens' THEN "
     "(coalesce(json_extract(u.settings, '$.price.per_m_input'), 0) * coalesce(r.prompt_tokens, "
     "0) + coalesce(json_extract(u.settings, '$.price.per_m_output'), 0) * "
     "coalesce(r.output_tokens, 0)) / 1e6 END",
     Kind::Real},
};
constexpr int kNumColumns = static_cast<int>(std::size(kColumns));

// Shortest text that reads back to the same double (std::to_chars).
std::string_view number_text(const Stmt& st, int col, Kind kind, char (&buf)[64]) {
    std::to_chars_result res{};
    if (kind == Kind::Real)
        res = std::to_chars(buf, buf + sizeof buf, st.real(col));
    else
        res = std::to_chars(buf, buf + sizeof buf, st.int64(col));
    return {buf, static_cast<size_t>(res.ptr - buf)};
}

// A JSON string per RFC 8259 section 7: quote, backslash and control
// characters escaped, UTF-8 passed through, invalid bytes written as U+FFFD
// (so the line always parses). Runs of plain bytes are written in one call.
void write_json_string(std::ostream& out, std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out.put('"');
    size_t run = 0;  // start of the pending plain run
    auto flush = [&](size_t upto) {
        out.write(s.data() + run, static_cast<std::streamsize>(upto - run));
    };
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            ++i;
            continue;
        }
        if (c >= 0x80) {
            if (const size_t n = utf8_sequence_length(s, i)) {
                i += n;
                continue;
            }
        }
        flush(i);
        switch (c) {
            case '"':
                out << "\\\"";
                break;
            case '\\':
                out << "\\\\";
                break;
            case '\n':
                out << "\\n";
                break;
            case '\r':
                out << "\\r";
                break;
            case '\t':
                out << "\\t";
                break;
            default:
                if (c < 0x20) {
                    const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                    out.write(esc, 6);
                } else {
                    out << "\xEF\xBF\xBD";  // U+FFFD for an invalid byte
                }
        }
        run = ++i;
    }
    flush(s.size());
    out.put('"');
}

// '\\' escapes itself and LIKE's two wildcards, so user text is literal.
std::string like_escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 8);
    for (char c : text) {
        if (c == '%' || c == '_' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

constexpr const char* kFrom =
    " FROM responses r JOIN runs u ON u.id = r.run_id"
    " JOIN model_versions m ON m.id = r.model_version_id"
    " JOIN environments e ON e.id = r.environment_id";

}  // namespace

void bind_all(Stmt& st, const std::vector<SqlValue>& binds) {
    int i = 1;
    for (const SqlValue& v : binds) {
        if (const auto* n = std::get_if<int64_t>(&v))
            st.bind(i++, *n);
        else
            st.bind(i++, std::string_view(std::get<std::string>(v)));
    }
}

const std::vector<std::string>& export_columns() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const Column& c : kColumns) v.emplace_back(c.name);
        return v;
    }();
    return names;
}

FilterSql filter_sql(const ExportFilter& f) {
    if (f.finish_reason && !is_valid_finish_reason(*f.finish_reason))
        throw std::invalid_argument("finish reason \"" + *f.finish_reason +
                                    "\" is not one of stop, length, timeout, cancelled, "
                                    "rejected, error, interrupted");
    FilterSql q;
    std::string& c = q.condition;
    c = "1";
    if (f.run_id) {
        c += " AND r.run_id = ?";
        q.binds.emplace_back(*f.run_id);
    }
    if (f.model) {
        // A SHA prefix is hex, so LIKE wildcards can only come from a name;
        // escape them so "%" does not match every model. The name compares
        // with =, unescaped.
        c += " AND (m.sha256 LIKE lower(?) || '%' ESCAPE '\\' OR m.name = ?)";
        q.binds.emplace_back(like_escaped(*f.model));
        q.binds.emplace_back(*f.model);
    }
    if (f.model_version_id) {
        c += " AND r.model_version_id = ?";
        q.binds.emplace_back(*f.model_version_id);
    }
    if (f.since_ms) {
        c += " AND r.started_ms >= ?";
        q.binds.emplace_back(*f.since_ms);
    }
    if (f.until_ms) {
        c += " AND r.started_ms < ?";
        q.binds.emplace_back(*f.until_ms);
    }
    if (f.finish_reason) {
        c += " AND r.finish_reason = ?";
        q.binds.emplace_back(*f.finish_reason);
    }
    if (f.text && !f.text->empty()) {
        // In SQL, not in C++: rows still stream from one sqlite3_step loop.
        // NULL (redacted) text gives NULL LIKE ..., i.e. no match.
        const std::string pattern = "%" + like_escaped(*f.text) + "%";
        c += " AND (r.prompt LIKE ? ESCAPE '\\' OR r.output LIKE ? ESCAPE '\\')";
        q.binds.emplace_back(pattern);
        q.binds.emplace_back(pattern);
    }
    return q;
}

namespace {

int64_t export_from(const Db& db, const ExportFilter& f, ExportFormat format, std::ostream& out,
                    const ExportProgress& progress) {
    const FilterSql where = filter_sql(f);
    int64_t total = -1;
    if (progress) {
        const std::string count_sql =
            std::string("SELECT COUNT(*)") + kFrom + " WHERE " + where.condition;
        Stmt count(db, count_sql.c_str());
        bind_all(count, where.binds);
        total = count.step() ? count.int64(0) : 0;
    }
    std::string sql = "SELECT ";
    for (int i = 0; i < kNumColumns; ++i) {
        if (i) sql += ", ";
        // A log opened read-only keeps its schema: a response column a later
        // version added (prefill_ms in v4, ...) reads as NULL there.
        const std::string_view expr = kColumns[i].expr;
        if (expr.starts_with("r.") && !db.has_column("responses", expr.substr(2)))
            sql += "NULL";
        else
            sql += expr;
    }
    sql += kFrom;
    sql += " WHERE " + where.condition + " ORDER BY r.started_ms, r.id";
    Stmt st(db, sql.c_str());
    bind_all(st, where.binds);

    if (format == ExportFormat::Csv) {
        for (int i = 0; i < kNumColumns; ++i) {
            if (i) out.put(',');
            out << kColumns[i].name;
        }
        out << kCsvRecordEnd;
    }
    char buf[64];
    int64_t rows = 0;
    while (st.step()) {
        if (format == ExportFormat::Csv) {
            for (int i = 0; i < kNumColumns; ++i) {
                if (i) out.put(',');
                if (st.is_null(i)) continue;  // NULL -> empty field
                switch (kColumns[i].kind) {
                    case Kind::Int:
                    case Kind::Real:
                        out << number_text(st, i, kColumns[i].kind, buf);
                        break;
                    case Kind::Time:
                        write_csv_field(out, format_utc_ms(st.int64(i)));
                        break;
                    case Kind::Text:
                    case Kind::Json:
                        write_csv_field(out, st.text(i));
                        break;
                }
            }
            out << kCsvRecordEnd;
        } else {
            out.put('{');
            for (int i = 0; i < kNumColumns; ++i) {
                if (i) out.put(',');
                out.put('"');
                out << kColumns[i].name << "\":";
                if (st.is_null(i)) {
                    out << "null";
                    continue;
                }
                switch (kColumns[i].kind) {
                    case Kind::Int:
                    case Kind::Real:
                        out << number_text(st, i, kColumns[i].kind, buf);
                        break;
                    case Kind::Time:
                        out << '"' << format_utc_ms(st.int64(i)) << '"';
                        break;
                    case Kind::Text:
                        write_json_string(out, st.text(i));
                        break;
                    // Stored by RunLog via nlohmann and CHECKed json_valid: already JSON.
                    case Kind::Json:
                        out << st.text(i);
                        break;
                }
            }
            out << "}\n";
        }
        ++rows;
        if ((rows & 1023) == 0) {
            if ((rows & 4095) == 0 && !out)
                throw std::runtime_error("export: writing the output failed after " +
                                         std::to_string(rows) + " rows");
            if (progress) progress(rows, std::max(total, rows));
        }
    }
    out.flush();
    if (!out)
        throw std::runtime_error("export: writing the output failed after " + std::to_string(rows) +
                                 " rows");
    // The count and the rows are two reads; a response logged in between
    // may make them differ by a few, so report done == total at the end.
    if (progress) progress(rows, rows);
    return rows;
}

}  // namespace

int64_t export_responses(const RunLog& log, const ExportFilter& filter, ExportFormat format,
                         std::ostream& out, const ExportProgress& progress) {
    return export_from(log.db(), filter, format, out, progress);
}

namespace {

// The sentence for an export from a damaged log: what is wrong, how much
// can still be read, and the way out.
std::string damaged_export_message(const std::string& db_path) {
    const LogInspection insp = inspect_log(db_path);
    std::string m = db_path + ": cannot export: " +
                    (insp.problem.empty() ? std::string("the run log is damaged") : insp.problem);
    m += "; " + std::to_string(insp.readable_responses) +
         " responses can still be read: salvage them into a new log (History: Salvage, or "
         "`workbench-cli log salvage --db " +
         db_path + "`) and export from that one";
    return m;
}

}  // namespace

int64_t export_responses_readonly(const std::string& db_path, const ExportFilter& filter,
                                  ExportFormat format, std::ostream& out,
                                  const ExportProgress& progress) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(db_path, ec))
        throw OpenError(OpenProblem::CannotOpen, db_path + ": no run log here");
    try {
        // NOMUTEX: this connection is used by one thread only.
        const Db db(db_path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
        if (db.query_int("PRAGMA application_id", "read application id") != kApplicationId)
            throw OpenError(
                OpenProblem::Foreign,
                db_path + ": a SQLite database, but not an Inference Workbench run log");
        const int64_t version = db.query_int("PRAGMA user_version", "read schema version");
        if (version > schema_version())
            throw OpenError(OpenProblem::NewerSchema, db_path + ": schema version " +
                                                          std::to_string(version) +
                                                          " is newer than this build supports (" +
                                                          std::to_string(schema_version()) + ")");
        // The quick integrity check first: a damaged log would export some
        // rows and then stop on a raw SQL error.
        {
            Stmt qc(db, "PRAGMA quick_check(1)");
            if (!qc.step() || qc.text(0) != "ok") throw DbError("quick_check", SQLITE_CORRUPT);
        }
        // One read transaction for the count and the rows, so both see the
        // same snapshot of the log while the app keeps writing.
        db.exec("BEGIN", "begin read transaction");
        const int64_t rows = export_from(db, filter, format, out, progress);
        db.exec("COMMIT", "end read transaction");
        return rows;
    } catch (const DbError& e) {
        if (is_damage(e)) {
            if (has_sqlite_header(db_path) || guess_page_size(db_path) != 0)
                throw std::runtime_error(damaged_export_message(db_path));
            throw std::runtime_error(db_path +
                                     ": not a SQLite database, so not a run log: nothing to "
                                     "export (is --db pointing at another file?)");
        }
        throw std::runtime_error(db_path + ": cannot export: the run log could not be read (" +
                                 sqlite3_errstr(e.code()) + ")");
    }
}

}  // namespace wb::runlog
