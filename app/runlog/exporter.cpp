#include "runlog/exporter.h"

#include <charconv>
#include <stdexcept>
#include <string_view>

#include "runlog/csv.h"
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
    {"ttft_ms", "r.ttft_ms", Kind::Real},
    {"tpot_ms", "r.tpot_ms", Kind::Real},
    {"e2e_ms", "r.e2e_ms", Kind::Real},
    {"prefill_tps", "r.prefill_tps", Kind::Real},
    {"decode_tps", "r.decode_tps", Kind::Real},
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

std::string build_query(const ExportFilter& f) {
    std::string sql = "SELECT ";
    for (int i = 0; i < kNumColumns; ++i) {
        if (i) sql += ", ";
        sql += kColumns[i].expr;
    }
    sql +=
        " FROM responses r JOIN runs u ON u.id = r.run_id"
        " JOIN model_versions m ON m.id = r.model_version_id"
        " JOIN environments e ON e.id = r.environment_id WHERE 1";
    if (f.run_id) sql += " AND r.run_id = ?1";
    if (f.model) sql += " AND (m.sha256 LIKE lower(?2) || '%' ESCAPE '\\' OR m.name = ?2)";
    if (f.since_ms) sql += " AND r.started_ms >= ?3";
    if (f.until_ms) sql += " AND r.started_ms < ?4";
    if (f.finish_reason) sql += " AND r.finish_reason = ?5";
    sql += " ORDER BY r.started_ms, r.id";
    return sql;
}

}  // namespace

const std::vector<std::string>& export_columns() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const Column& c : kColumns) v.emplace_back(c.name);
        return v;
    }();
    return names;
}

int64_t export_responses(const RunLog& log, const ExportFilter& f, ExportFormat format,
                         std::ostream& out) {
    if (f.finish_reason && !is_valid_finish_reason(*f.finish_reason))
        throw std::invalid_argument("--finish-reason \"" + *f.finish_reason +
                                    "\" is not one of stop, length, timeout, cancelled, "
                                    "rejected, error");
    const std::string sql = build_query(f);
    Stmt st(log.db(), sql.c_str());
    if (f.run_id) st.bind(1, *f.run_id);
    if (f.model) {
        // A SHA prefix is hex, so LIKE wildcards can only come from a name;
        // escape them so "%" does not match every model.
        std::string pattern;
        for (char c : *f.model) {
            if (c == '%' || c == '_' || c == '\\') pattern += '\\';
            pattern += c;
        }
        st.bind(2, std::string_view(pattern));
    }
    if (f.since_ms) st.bind(3, *f.since_ms);
    if (f.until_ms) st.bind(4, *f.until_ms);
    if (f.finish_reason) st.bind(5, std::string_view(*f.finish_reason));

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
        if ((rows & 4095) == 0 && !out)
            throw std::runtime_error("export: writing the output failed after " +
                                     std::to_string(rows) + " rows");
    }
    out.flush();
    if (!out)
        throw std::runtime_error("export: writing the output failed after " + std::to_string(rows) +
                                 " rows");
    return rows;
}

}  // namespace wb::runlog
