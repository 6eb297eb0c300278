// `workbench-cli export`: the run log's responses as CSV (RFC 4180) or JSON
// Lines, filtered by run, model, time range, finish reason and a text search
// over prompt and output (the History tab's search box). Rows stream
// from SQLite to the output as they are read, so memory stays flat for any
// number of responses (see app/runlog/exporter.h for the columns).
//
// `workbench-cli log`: run-log maintenance: where the database is, its
// redaction and retention settings, and pruning old responses.

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "runlog/exporter.h"
#include "runlog/history.h"
#include "runlog/integrity.h"
#include "runlog/retention.h"
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
        {"finish-reason", 0, "R",
         "stop, length, timeout, cancelled, rejected, error or interrupted"},
        {"search", 0, "TEXT",
         "prompt or output contains TEXT (ASCII letters in any case; % and _ are literal)"},
        {"output", 'o', "FILE", "write to FILE instead of stdout"},
    },
    0,
    0,
};

const CommandSpec kLogSpec{
    "log",
    "path|config|prune|retention|redact|check|salvage|loads|events [RUN_ID]",
    "Run-log maintenance: location, redaction, retention, pruning, checks, salvage.",
    "  path     print the database path\n"
    "  config   show the settings; change them with --redact and --retention-days\n"
    "  prune    delete responses older than --days N\n"
    "  retention  remove the prompt and output text of responses older than --days N\n"
    "           (rows, token counts, hashes and timings kept; shown as [redacted]),\n"
    "           then VACUUM so the text is gone from the file; --dry-run only counts\n"
    "  redact RUN_ID  the same for every response of one run\n"
    "  check    SQLite's integrity check; for a damaged log, how many responses can\n"
    "           still be read (exit status 1 when the log is not healthy)\n"
    "  salvage  copy every readable response of a damaged log (and its runs, model\n"
    "           versions, environments) into a new log (--to FILE, default\n"
    "           <name>-salvaged-<time>.sqlite beside it); the damaged file is not\n"
    "           changed. --replace then also puts the new log in its place and\n"
    "           keeps the damaged one as <name>.damaged-<time>\n"
    "  loads    the cold start of the last model loads (newest first): phases in ms,\n"
    "           open to ready, pipeline cache, open to the first token\n"
    "  events [RUN_ID]  what happened to a run besides its responses (a server's\n"
    "           start and stop, each canary rollout decision with its figures as\n"
    "           JSON); without RUN_ID the last 200 events of every run\n"
    "With --redact on, new responses keep only the SHA-256 and byte length of\n"
    "their prompt and output. With --retention-days N, responses older than N\n"
    "days are deleted whenever the log is opened.",
    {
        kDbOption,
        {"redact", 0, "on|off", "config: store prompts and outputs as hash + length only"},
        {"retention-days", 0, "N|off", "config: delete responses older than N days on open"},
        {"days", 0, "N",
         "prune, retention: age limit in days (0: every response started before now)"},
        {"dry-run", 0, "", "retention: count what would lose its text, change nothing"},
        {"to", 0, "FILE", "salvage: the new log to write (must not exist)"},
        {"replace", 0, "",
         "salvage: rename the damaged log to <name>.damaged-<time> and move the salvaged "
         "log to its path"},
    },
    1,
    2,
};

// Opens an existing run log strictly; a missing file is an error here
// (export and log must not create an empty database).
runlog::RunLog open_existing(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw std::runtime_error(path + ": no run log here (nothing logged yet, or pass --db)");
    runlog::RunLog log = runlog::RunLog::open(path);
    print_open_notices(log);
    return log;
}

int64_t parse_time(const ParsedArgs& args, const char* name) {
    try {
        return runlog::parse_utc_ms(*args.get(name));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--") + name + ": " + e.what());
    }
}

std::string mib(int64_t bytes) {
    char b[48];
    std::snprintf(b, sizeof b, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return b;
}

// What a purge did, in the user's words; the -wal note when another program
// kept the old pages there.
void print_purge(const runlog::PurgeResult& r, const std::string& path, const std::string& what) {
    std::printf("removed the text of %lld responses %s from %s\n",
                static_cast<long long>(r.responses), what.c_str(), path.c_str());
    std::printf("file size: %s before, %s after (database and -wal, after VACUUM)\n",
                mib(r.bytes_before).c_str(), mib(r.bytes_after).c_str());
    if (!r.wal_emptied)
        std::printf(
            "note: another program is reading the log, so its -wal file still holds old pages; "
            "they are gone once it closes the log\n");
}

// log retention --days N [--dry-run]
int log_retention(const ParsedArgs& args, const std::string& path) {
    if (!args.get("days")) throw UsageError("log retention: --days N is required");
    const int64_t days = args.get_int("days", 0, 0, 100000);
    const int64_t cutoff = runlog::now_utc_ms() - days * 86400000;
    const std::string what = "older than " + std::to_string(days) + " days";
    if (args.has("dry-run")) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            throw std::runtime_error(path + ": no run log here (nothing logged yet, or pass --db)");
        // Read-only: a dry run changes nothing, not even the schema.
        const runlog::RunLog log = runlog::RunLog::open_readonly(path);
        const int64_t n = runlog::count_text_older_than(log, cutoff);
        std::printf(
            "dry run: %lld responses %s would lose their text in %s (%s now); nothing "
            "was changed\n",
            static_cast<long long>(n), what.c_str(), path.c_str(),
            mib(runlog::log_file_bytes(path)).c_str());
        return 0;
    }
    runlog::RunLog log = open_existing(path);
    print_purge(runlog::purge_text_older_than(log, cutoff), path, what);
    return 0;
}

// log events [RUN_ID]: one line per event, oldest first.
int log_events(const ParsedArgs& args, const std::string& path) {
    int64_t run_id = 0;
    if (args.positional.size() > 2) throw UsageError("log events: at most one RUN_ID");
    if (args.positional.size() == 2) {
        try {
            size_t used = 0;
            run_id = std::stoll(args.positional[1], &used);
            if (used != args.positional[1].size() || run_id < 1) throw std::invalid_argument("");
        } catch (const std::exception&) {
            throw UsageError("log events: RUN_ID '" + args.positional[1] +
                             "' is not a run id (a positive integer)");
        }
    }
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw std::runtime_error(path + ": no run log here (nothing logged yet, or pass --db)");
    const runlog::HistoryReader reader = runlog::HistoryReader::open(path);
    const std::vector<runlog::RunEventRow> events = reader.run_events(run_id);
    if (events.empty()) {
        std::printf("%s: no run events%s (serve logs its start, stop and canary decisions)\n",
                    path.c_str(), run_id > 0 ? (" for run " + std::to_string(run_id)).c_str() : "");
        return 0;
    }
    std::printf("%-24s %6s %-12s %s\n", "time (UTC)", "run", "kind", "details");
    for (const runlog::RunEventRow& e : events)
        std::printf("%-24s %6lld %-12s %s\n", runlog::format_utc_ms(e.t_ms).c_str(),
                    static_cast<long long>(e.run_id), e.kind.c_str(), e.details.c_str());
    return 0;
}

// log redact RUN_ID
int log_redact(const ParsedArgs& args, const std::string& path) {
    if (args.positional.size() != 2) throw UsageError("log redact: RUN_ID is required");
    int64_t run_id = 0;
    try {
        size_t used = 0;
        run_id = std::stoll(args.positional[1], &used);
        if (used != args.positional[1].size() || run_id < 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
        throw UsageError("log redact: RUN_ID '" + args.positional[1] +
                         "' is not a run id (a positive integer; see `workbench-cli export`)");
    }
    runlog::RunLog log = open_existing(path);
    print_purge(runlog::redact_run(log, run_id), path, "of run " + std::to_string(run_id));
    return 0;
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
                         "' is not stop, length, timeout, cancelled, rejected, error or "
                         "interrupted");

    const std::string path = run_log_path(args);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw std::runtime_error(path + ": no run log here (nothing logged yet, or pass --db)");
    const runlog::ExportFormat format =
        fmt == "csv" ? runlog::ExportFormat::Csv : runlog::ExportFormat::Jsonl;
    // Read-only, after SQLite's quick integrity check (a damaged log is a
    // sentence saying how to salvage it); the output's every write checked.
    const auto file = args.get("output");
    const bool to_file = file && *file != "-";
    const int64_t rows =
        runlog::export_responses_to_file(path, filter, format, to_file ? *file : "-");
    if (to_file)
        std::fprintf(stderr, "exported %lld responses to %s\n", static_cast<long long>(rows),
                     file->c_str());
    return 0;
}

int cmd_log(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kLogSpec, argv);
    if (args.help) {
        std::fputs(help_text(kLogSpec).c_str(), stdout);
        return 0;
    }
    const std::string& sub = args.positional.at(0);
    const std::string path = run_log_path(args);
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
    if (sub != "redact" && sub != "events" && args.positional.size() > 1)
        throw UsageError("log " + sub + ": unexpected argument '" + args.positional[1] + "'");
    if (sub == "retention") return log_retention(args, path);
    if (sub == "redact") return log_redact(args, path);
    if (sub == "config") {
        runlog::RunLog log = runlog::RunLog::open(path);
        print_open_notices(log);
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
    if (sub == "check") {
        const runlog::LogInspection insp = runlog::inspect_log(path);
        if (insp.state == runlog::LogState::Missing) {
            std::printf("%s: no run log here yet (one is created when a response is logged)\n",
                        path.c_str());
            return 0;
        }
        if (insp.state == runlog::LogState::Healthy) {
            std::printf("%s: healthy (SQLite's integrity check passes), %lld responses\n",
                        path.c_str(), static_cast<long long>(insp.readable_responses));
            return 0;
        }
        std::printf("%s\n", insp.message().c_str());
        if (insp.state == runlog::LogState::Damaged)
            std::printf(
                "Nothing was changed. `workbench-cli log salvage --db %s` copies the readable "
                "responses into a new log.\n",
                path.c_str());
        return 1;
    }
    if (sub == "salvage") {
        const std::string to = args.get("to").value_or(runlog::salvage_path_for(path));
        const runlog::SalvageReport rep = runlog::salvage_log(path, to);
        std::printf("%s\n", rep.summary().c_str());
        if (!args.has("replace")) {
            std::printf(
                "Use it with --db %s (or run `log salvage --replace` to put it in place "
                "of the damaged log).\n",
                to.c_str());
            return 0;
        }
        // The user's yes (--replace): the damaged file (with its -wal/-shm)
        // is kept under a new name, never deleted, and never overwritten.
        const std::string kept = path + ".damaged-" + runlog::compact_utc_now();
        std::error_code ec;
        if (std::filesystem::exists(kept, ec))
            throw std::runtime_error(kept + ": already exists; nothing was moved");
        std::filesystem::rename(path, kept);
        for (const char* suffix : {"-wal", "-shm"})
            if (std::filesystem::exists(path + suffix, ec))
                std::filesystem::rename(path + suffix, kept + suffix, ec);
        std::filesystem::rename(to, path);
        std::printf("The damaged log is now %s; the salvaged log is at %s.\n", kept.c_str(),
                    path.c_str());
        return 0;
    }
    if (sub == "loads") {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            throw std::runtime_error(path + ": no run log here (nothing logged yet, or pass --db)");
        const runlog::HistoryReader reader = runlog::HistoryReader::open(path);
        const std::vector<runlog::ModelLoadRow> loads = reader.model_loads(20);
        if (loads.empty()) {
            // Logs written before schema 4 have none: say how one is made.
            std::printf(
                "%s: no model loads logged yet (generate, batch and the app log each model "
                "they open)\n",
                path.c_str());
            return 0;
        }
        auto ms = [](const std::optional<double>& v) {
            char b[32];
            if (!v) return std::string("-");
            std::snprintf(b, sizeof b, "%.1f", *v);
            return std::string(b);
        };
        std::printf("%-24s %-9s %-7s %-5s %7s %7s %7s %7s %8s %8s %9s  %s\n", "opened (UTC)",
                    "surface", "backend", "cache", "vocab", "map", "parse", "device", "upload",
                    "ready", "1st token", "model");
        for (const runlog::ModelLoadRow& l : loads)
            std::printf("%-24s %-9s %-7s %-5s %7s %7s %7s %7s %8s %8s %9s  %s\n",
                        runlog::format_utc_ms(l.opened_ms).c_str(), l.surface.c_str(),
                        l.backend.c_str(), l.pipeline_cache.c_str(), ms(l.vocab_ms).c_str(),
                        ms(l.map_ms).c_str(), ms(l.parse_ms).c_str(), ms(l.device_ms).c_str(),
                        ms(l.upload_ms).c_str(), ms(l.ready_ms).c_str(),
                        ms(l.first_token_ms).c_str(), l.model.c_str());
        return 0;
    }
    if (sub == "events") return log_events(args, path);
    throw UsageError("log: unknown subcommand '" + sub +
                     "' (path, config, prune, retention, redact, check, salvage, loads or "
                     "events)");
}

}  // namespace wb::cli
