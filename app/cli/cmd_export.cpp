// `workbench-cli export`: the run log's responses as CSV (RFC 4180) or JSON
// Lines, filtered by run, model, time range, finish reason and a text search
// over prompt and output (the History tab's search box). Rows stream
// from SQLite to the output as they are read, so memory stays flat for any
// number of responses (see app/runlog/exporter.h for the columns).
//
// `workbench-cli log`: run-log maintenance: where the database is, its
// redaction and retention settings, and pruning old responses.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

#include "args.h"
#include "runlog/db_location.h"
#include "runlog/exporter.h"
#include "runlog/run_log.h"
#include "runlog/time_utc.h"

namespace wb::cli {

namespace {

const OptionSpec kDbOption{"db", 0, "PATH",
                           "run log database (default: $XDG_DATA_HOME or ~/.local/share, "
                           "then inference-workbench/runlog.sqlite)"};

const CommandSpec kExportSpec{
    "export",
    "",
    "Export logged responses as CSV or JSON Lines.",
    "One row per response with its run, model version (SHA-256, name, file type),\n"
    "environment, settings (JSON text in CSV, an object in JSONL), prompt and\n"
    "output text, finish reason and every timing (queue wait, TTFT, TPOT,\n"
    "end-to-end in ms; prefill and decode tokens/s). Times are UTC ISO 8601.\n"
    "Filters combine with AND; --since is inclusive, --until exclusive.",
    {
        kDbOption,
        {"format", 'f', "FMT", "csv or jsonl (default: csv)"},
        {"run", 0, "ID", "only this run"},
        {"model", 0, "SHA|NAME", "only this model: a SHA-256 prefix or the general.name"},
        {"since", 0, "TIME", "responses started at or after TIME (2026-11-29 or ISO 8601)"},
        {"until", 0, "TIME", "responses started before TIME"},
        {"finish-reason", 0, "R", "stop, length, timeout, cancelled, rejected or error"},
        {"search", 0, "TEXT",
         "prompt or output contains TEXT (ASCII letters in any case; % and _ are literal)"},
        {"output", 'o', "FILE", "write to FILE instead of stdout"},
    },
    0,
    0,
};

const CommandSpec kLogSpec{
    "log",
    "path|config|prune",
    "Run-log maintenance: location, redaction, retention, pruning.",
    "  path    print the database path\n"
    "  config  show the settings; change them with --redact and --retention-days\n"
    "  prune   delete responses older than --days N\n"
    "With --redact on, new responses keep only the SHA-256 and byte length of\n"
    "their prompt and output. With --retention-days N, responses older than N\n"
    "days are deleted whenever the log is opened.",
    {
        kDbOption,
        {"redact", 0, "on|off", "config: store prompts and outputs as hash + length only"},
        {"retention-days", 0, "N|off", "config: delete responses older than N days on open"},
        {"days", 0, "N", "prune: age limit in days (0 deletes everything)"},
    },
    1,
    1,
};

/// A streambuf over a C FILE* with its own 64 KiB buffer (std::cout is
/// synchronized with stdio, i.e. unbuffered, which is slow for 1M rows).
class FileBuf : public std::streambuf {
  public:
    explicit FileBuf(std::FILE* f) : f_(f) { setp(buf_, buf_ + sizeof buf_); }
    ~FileBuf() override { sync(); }

  protected:
    int_type overflow(int_type c) override {
        if (sync() != 0) return traits_type::eof();
        if (!traits_type::eq_int_type(c, traits_type::eof())) {
            *pptr() = traits_type::to_char_type(c);
            pbump(1);
        }
        return traits_type::not_eof(c);
    }
    int sync() override {
        const size_t n = static_cast<size_t>(pptr() - pbase());
        if (n && std::fwrite(pbase(), 1, n, f_) != n) return -1;
        setp(buf_, buf_ + sizeof buf_);
        return std::fflush(f_) == 0 ? 0 : -1;
    }

  private:
    std::FILE* f_;
    char buf_[1 << 16];
};

std::string db_path(const ParsedArgs& args) {
    return args.get("db").value_or(runlog::default_db_path());
}

// Opens an existing run log strictly; a missing file is an error here
// (export and log must not create an empty database).
runlog::RunLog open_existing(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw std::runtime_error(path + ": no run log here (nothing logged yet, or pass --db)");
    return runlog::RunLog::open(path);
}

int64_t parse_time(const ParsedArgs& args, const char* name) {
    try {
        return runlog::parse_utc_ms(*args.get(name));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--") + name + ": " + e.what());
    }
}

}  // namespace

int cmd_export(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kExportSpec, argv);
    if (args.help) {
        std::fputs(help_text(kExportSpec).c_str(), stdout);
        return 0;
    }
    const std::string fmt = args.get("format").value_or("csv");
    if (fmt != "csv" && fmt != "jsonl")
        throw UsageError("--format: '" + fmt + "' is not csv or jsonl");
    runlog::ExportFilter filter;
    if (args.get("run")) filter.run_id = args.get_int("run", 0, 1, INT64_MAX);
    filter.model = args.get("model");
    if (args.get("since")) filter.since_ms = parse_time(args, "since");
    if (args.get("until")) filter.until_ms = parse_time(args, "until");
    filter.finish_reason = args.get("finish-reason");
    filter.text = args.get("search");
    if (filter.finish_reason && !runlog::is_valid_finish_reason(*filter.finish_reason))
        throw UsageError("--finish-reason: '" + *filter.finish_reason +
                         "' is not stop, length, timeout, cancelled, rejected or error");

    runlog::RunLog log = open_existing(db_path(args));
    const runlog::ExportFormat format =
        fmt == "csv" ? runlog::ExportFormat::Csv : runlog::ExportFormat::Jsonl;
    int64_t rows = 0;
    if (const auto file = args.get("output"); file && *file != "-") {
        std::ofstream out(*file, std::ios::binary | std::ios::trunc);
        if (!out) throw std::runtime_error(*file + ": cannot write");
        rows = runlog::export_responses(log, filter, format, out);
        out.close();
        if (!out) throw std::runtime_error(*file + ": write failed");
        std::fprintf(stderr, "exported %lld responses to %s\n", static_cast<long long>(rows),
                     file->c_str());
    } else {
        std::fflush(stdout);
        FileBuf buf(stdout);
        std::ostream out(&buf);
        rows = runlog::export_responses(log, filter, format, out);
    }
    return 0;
}

int cmd_log(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kLogSpec, argv);
    if (args.help) {
        std::fputs(help_text(kLogSpec).c_str(), stdout);
        return 0;
    }
    const std::string& sub = args.positional.at(0);
    const std::string path = db_path(args);
    if (sub == "path") {
        std::printf("%s\n", path.c_str());
        return 0;
    }
    if (sub == "prune") {
        if (!args.get("days")) throw UsageError("log prune: --days N is required");
        const int64_t days = args.get_int("days", 0, 0, 100000);
        runlog::RunLog log = open_existing(path);
        const int64_t n = log.prune_older_than_days(static_cast<int>(days), runlog::now_utc_ms());
        std::printf("deleted %lld responses older than %lld days from %s\n",
                    static_cast<long long>(n), static_cast<long long>(days), path.c_str());
        return 0;
    }
    if (sub == "config") {
        runlog::RunLog log = runlog::RunLog::open(path);
        if (const auto r = args.get("redact")) {
            if (*r != "on" && *r != "off")
                throw UsageError("--redact: '" + *r + "' is not on or off");
            log.set_redact_text(*r == "on");
        }
        if (const auto d = args.get("retention-days")) {
            if (*d == "off")
                log.set_retention_days(std::nullopt);
            else
                log.set_retention_days(
                    static_cast<int>(args.get_int("retention-days", 0, 1, 100000)));
        }
        const std::optional<int> keep = log.retention_days();
        std::printf("database:       %s\nredact text:    %s\nretention days: %s\n", path.c_str(),
                    log.redact_text() ? "on" : "off",
                    keep ? std::to_string(*keep).c_str() : "off (keep everything)");
        return 0;
    }
    throw UsageError("log: unknown subcommand '" + sub + "' (path, config or prune)");
}

}  // namespace wb::cli
