// `workbench-cli diff RUN_A RUN_B`: environment drift between two runs of
// the run log (runlog/run_diff.h): the tags that differ, those that change
// outputs first, then the prompts both runs answered. Exit status 0 when
// the runs were compared (whatever differs), 2 for bad input (a run id that
// is not a number or not in the log, a file that is not a readable run log).

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "runlog/run_diff.h"
#include "runlog/run_log.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "diff",
    "RUN_A RUN_B",
    "Show what differs between two runs of the run log: environment drift.",
    "Every tag that differs between the runs' responses: model file (SHA-256, file\n"
    "type, architecture, parameters), tokenizer and chat template, sampling\n"
    "settings, run settings, app version and commit, backend, device, driver and\n"
    "OS. Rows marked * change what the model writes and come first. A run whose\n"
    "responses disagree among themselves shows \"mixed:\" with the values.\n"
    "Then the prompts both runs answered (matched by the prompt's SHA-256): the\n"
    "share of identical outputs, where differing outputs first part (character\n"
    "offset and an excerpt of each), and TTFT and end-to-end latency, p50 and\n"
    "mean, B minus A in ms. Exit status 0 when the runs were compared, 2 for bad\n"
    "input. Run ids: `workbench-cli export` shows them (run_id).",
    {
        {"db", 0, "PATH",
         "run log database (default: $XDG_DATA_HOME or ~/.local/share, then "
         "inference-workbench/runlog.sqlite)"},
        {"json", 0, "", "print the comparison as one JSON object"},
    },
    2,
    2,
};

int64_t run_id_arg(const std::string& s, const char* which) {
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != s.size() || s.empty() || v < 1)
        throw UsageError(std::string(which) + ": '" + s + "' is not a run id (a positive number)");
    return v;
}

// At most `n` code points of `s`, "..." when cut.
std::string clip(const std::string& s, size_t n) {
    size_t i = 0, cp = 0;
    while (i < s.size() && cp < n) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        i += c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        ++cp;
    }
    if (i >= s.size()) return s;
    return s.substr(0, i) + "...";
}

size_t width(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

void pad(const std::string& s, size_t w) {
    std::fputs(s.c_str(), stdout);
    for (size_t i = width(s); i < w; ++i) std::fputc(' ', stdout);
}

std::string ms(const std::optional<double>& v, bool sign = false) {
    if (!v) return "-";
    char buf[48];
    std::snprintf(buf, sizeof buf, sign ? "%+.1f" : "%.1f", *v);
    return buf;
}

void print_latency(const char* name, const runlog::LatencyDelta& d) {
    std::printf(
        "  %-4s p50  A %8s  B %8s  B-A %9s ms   mean  A %8s  B %8s  B-A %9s ms  (%zu pairs)\n",
        name, ms(d.a_p50).c_str(), ms(d.b_p50).c_str(), ms(d.p50_delta(), true).c_str(),
        ms(d.a_mean).c_str(), ms(d.b_mean).c_str(), ms(d.mean_delta(), true).c_str(), d.pairs);
}

void print_table(const runlog::RunDiff& d) {
    std::printf("A: run %" PRId64 " (%s, %s)\nB: run %" PRId64 " (%s, %s)\n\n", d.a.id,
                d.a.kind.c_str(), d.a.name.c_str(), d.b.id, d.b.kind.c_str(), d.b.name.c_str());
    if (d.fields.empty()) {
        std::printf("No differences in model, tokenizer, sampling, settings or environment.\n");
    } else {
        std::vector<std::vector<std::string>> rows;
        rows.push_back({"", "field", "A", "B"});
        for (const runlog::FieldDiff& f : d.fields)
            rows.push_back({f.changes_outputs ? "*" : "", f.group + ": " + f.label,
                            clip(f.a.text().empty() ? "(no responses)" : f.a.text(), 64),
                            clip(f.b.text().empty() ? "(no responses)" : f.b.text(), 64)});
        std::vector<size_t> w(4, 0);
        for (const auto& r : rows)
            for (size_t c = 0; c < 4; ++c) w[c] = std::max(w[c], width(r[c]));
        for (const auto& r : rows) {
            for (size_t c = 0; c < 3; ++c) {
                pad(r[c], w[c]);
                std::fputs("  ", stdout);
            }
            std::printf("%s\n", r[3].c_str());
        }
        std::printf("(* changes outputs)\n");
    }
    const runlog::PromptComparison& p = d.prompts;
    std::printf("\nPrompts both answered: %zu (responses: A %zu, B %zu)\n", p.matched,
                p.a_responses, p.b_responses);
    if (p.matched > 0) {
        std::printf("Identical outputs: %zu of %zu (%.1f%%)\n", p.identical, p.matched,
                    100.0 * *p.identical_share());
        for (const runlog::Divergence& v : p.divergences) {
            std::printf("  prompt \"%s\" (responses %" PRId64 " / %" PRId64 "): ",
                        clip(v.prompt_excerpt, 40).c_str(), v.a_response, v.b_response);
            if (v.offset)
                std::printf("first differs at character %zu: A \"%s\" B \"%s\"\n", *v.offset,
                            v.a_excerpt.c_str(), v.b_excerpt.c_str());
            else
                std::printf("outputs differ (text redacted)\n");
        }
        print_latency("TTFT", p.ttft);
        print_latency("e2e", p.e2e);
    }
    for (const std::string& w : d.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

}  // namespace

int cmd_diff(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const int64_t a = run_id_arg(args.positional.at(0), "RUN_A");
    const int64_t b = run_id_arg(args.positional.at(1), "RUN_B");
    const std::string path = run_log_path(args);
    runlog::RunDiff d;
    try {
        d = runlog::diff_runs_at(path, a, b);
    } catch (const runlog::RunNotFound& e) {
        throw UsageError(e.what());
    } catch (const runlog::OpenError& e) {
        // No log, not a log, a damaged one: the input is wrong, not the tool.
        throw UsageError(e.what());
    }
    if (args.has("json")) {
        std::printf("%s\n", runlog::to_json(d)
                                .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                                .c_str());
        for (const std::string& w : d.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    } else {
        print_table(d);
    }
    return 0;
}

}  // namespace wb::cli
