// `workbench-cli batch`: runs a prompt set through the continuous-batching
// scheduler at a chosen concurrency, streams one result record per request
// as it finishes, and prints the latency / throughput metrics at the end.

#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "args.h"
#include "batch_common.h"
#include "common_options.h"
#include "core/batch_runner.h"
#include "core/engine_session.h"
#include "core/inbox.h"
#include "core/prompt_file.h"
#include "core/response_log.h"
#include "core/session_run.h"
#include "core/settings_json.h"
#include "cost/price.h"
#include "cost/run_usage.h"
#include "draft_options.h"
#include "runlog/run_log.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "batch",
    "",
    "Run a prompt set through the continuous-batching scheduler.",
    "FILE is JSON Lines, one {\"prompt\": ..., \"max_tokens\": ..., \"id\": ..., \"stop\": ...}\n"
    "object per line, or plain text with one prompt per line (JSONL when the\n"
    "first non-blank line starts with '{'). A line may give \"messages\": [{\"role\":\n"
    "..., \"content\": ...}, ...] instead of \"prompt\", rendered with the model's chat\n"
    "template (plain text for a model without one, as generate --chat does);\n"
    "--system TEXT puts a system message before every prompt. A malformed line\n"
    "is reported with its line number and nothing runs, unless --skip-invalid\n"
    "is given; an unknown key is ignored with a warning naming its line.\n"
    "\n"
    "--concurrency requests run together, the rest wait in the queue; with\n"
    "--max-queue Q at most Q wait at a time and the rest are submitted as slots\n"
    "free up (the GUI's Batch tab runs sets the same way: same ids, same\n"
    "per-request seeds --seed + the prompt's index, stop strings). One result\n"
    "record per request (id, prompt, output, token ids, finish reason, timings)\n"
    "goes to --out (or stdout) as JSONL the moment it finishes, flushed, so an\n"
    "interrupted run keeps every finished record. Ctrl-C or SIGTERM cancels the\n"
    "rest cleanly (their records and rows say \"cancelled\", with the text so far)\n"
    "and exits with status 130 (143 for SIGTERM); a second one at least 0.5 s\n"
    "later kills at once. Each response's run-log row is written when it starts\n"
    "and kept up to date, so even kill -9 leaves rows saying \"interrupted\". A\n"
    "busy or full run log never ends the run: rows are kept and retried, and the\n"
    "exit status is 1 if some could not be logged (or some records not written).\n"
    "It is 1 as well when any request failed (finish reason error, rejected or\n"
    "timeout); the end says how many of how many, by reason.\n"
    "A progress line and the metrics table (count, mean, p50, p90, p95, p99,\n"
    "max of queue wait, TTFT, ITL, TPOT, end-to-end latency; input and output\n"
    "tokens/s and requests/s over the run's wall time, vLLM's input_throughput,\n"
    "output_throughput, request_throughput) go to stderr. TTFT counts from\n"
    "submission, as vLLM's benchmark does. Each\n"
    "response is logged in the run log unless --no-log.\n"
    "\n"
    "--draft ngram|FILE speculates for every request (docs/speculative.md), inside\n"
    "the same batched steps as the others; each record's \"speculative\" says what\n"
    "it did (null without --draft).",
    concat(
        concat(concat(concat(model_options(), batch_context_options()), draft_options()),
               price_options("the engine's busy time (its forward passes)")),
        concat(
            sampling_options(),
            {
                {"prompts", 0, "FILE", "prompt set (JSONL or plain text), required"},
                {"system", 0, "TEXT",
                 "system prompt for every prompt (rendered with the model's chat template)"},
                {"concurrency", 0, "N",
                 "most requests running at once, sharing the KV pool (default: 4)"},
                {"max-queue", 0, "Q", "most requests waiting for a slot at a time (default: all)"},
                {"timeout-ms", 0, "T",
                 "total timeout per request from submission, ms (default: none)"},
                {"queue-timeout-ms", 0, "T", "longest wait for a slot, ms (default: none)"},
                {"n-predict", 'n', "N",
                 "max output tokens per request unless the line sets max_tokens (default: 128)"},
                {"chunk", 0, "N",
                 "prefill chunk: most prompt tokens of one request per step (default: 64)"},
                {"step-tokens", 0, "N",
                 "token budget of one ubatch (default: max(256, concurrency))"},
                {"stop", 0, "TEXT", "stop string (repeatable), added to each line's own"},
                {"ignore-eos", 0, "", "keep generating after end-of-generation tokens"},
                {"out", 'o', "FILE", "write result records here (default: stdout)"},
                {"summary-json", 0, "FILE", "also write the run's metrics as JSON to FILE"},
                {"skip-invalid", 0, "", "run the valid lines even if some are malformed"},
                {"quiet", 'q', "", "no progress line"},
                {"db", 0, "PATH",
                 "run log database (default: ~/.local/share/inference-workbench/runlog.sqlite)"},
                {"no-log", 0, "", "do not write the run log"},
                {"no-text", 0, "",
                 "log the responses without prompt and output text (token counts, hashes and "
                 "timings only)"},
            })),
    0,
    0,
};

// After a failed write of the result records (full disk, ulimit -f): the
// part of the record that reached a regular file is cut off at `records_end`
// (the end of the last whole record), and what stdio still holds is
// dropped, so the file ends with whole records and nothing is written later.
void drop_cut_record(FILE* out, off_t records_end) {
    __fpurge(out);
    if (records_end >= 0 && ftruncate(fileno(out), records_end) != 0) {
        // Nothing more to do: the summary says how many records are whole.
    }
}

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};               // SIGINT or SIGTERM, whichever came first
std::atomic<int64_t> g_first_sigint_ns{0};  // CLOCK_MONOTONIC of the first SIGINT

int64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX)
    return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// First SIGINT or SIGTERM: cancel cleanly (SIGTERM is what `kill`, systemd
// and container runtimes send; it used to end the run with no "cancelled"
// records). A later one kills at once (a second Ctrl-C), except within
// 500 ms of the first: `timeout -s INT` and process managers signal both the
// process and its group, so one interrupt arrives twice.
extern "C" void on_sigint(int sig) {
    const int64_t now = monotonic_ns();
    int64_t expected = 0;
    if (g_first_sigint_ns.compare_exchange_strong(expected, now)) {
        g_signal.store(sig);
        g_interrupted.store(true);
    } else if (now - expected >= 500'000'000) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
}

// A finish reason that means the request did not complete: it failed
// (error: refused as invalid, or the model failed; rejected: queue full or
// prompt longer than the context; timeout: over --timeout-ms or
// --queue-timeout-ms). Cancelled requests are the interrupt's own status.
bool is_failure(const std::string& finish_reason) {
    return finish_reason == "error" || finish_reason == "rejected" || finish_reason == "timeout";
}

nlohmann::json num_or_null(double v) {
    return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

nlohmann::json num_or_null(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

/// What the loaded model holds, in bytes, by purpose (Model::memory_report,
/// the engine's own accounting), with the context it was sized for: the
/// figures `plan --json` predicts for the same -c, --parallel and --kv-type.
nlohmann::json memory_json(const core::EngineSession& session) {
    const model::Model& m = session.model();
    const model::MemoryReport r = m.memory_report();
    return {{"backend", session.facts().backend},
            {"n_ctx", m.context().n_ctx},
            {"n_parallel", m.context().n_seq_max},
            {"kv_type", model::kv_type_name(m.context().kv_type)},
            {"on_device", r.on_device},
            {"weights", r.weights},
            {"kv_cache", r.kv_cache},
            {"activations", r.activations},
            {"staging", r.staging},
            {"total", r.total()}};
}

nlohmann::json result_record(const core::FinishedRequest& f) {
    return {
        {"id", f.label},
        {"prompt", f.prompt},
        {"output", f.output},
        {"finish_reason", f.finish_reason},
        {"message", f.message},
        {"seed", f.seed},
        {"prompt_tokens", f.prompt_tokens.size()},
        {"prompt_tokens_cached", f.prompt_tokens_cached},
        {"prompt_tokens_computed", f.prompt_tokens_computed},
        {"preemptions", f.preemptions},
        {"past_n_ctx_train", f.past_n_ctx_train},
        {"generated_tokens", f.output_tokens.size()},
        {"prompt_token_ids", f.prompt_tokens},
        {"token_ids", f.output_tokens},
        {"timings",
         {{"queue_wait_ms", num_or_null(f.queue_wait_ms())},
          {"prefill_ms", num_or_null(f.prefill_ms())},
          {"ttft_ms", num_or_null(f.ttft_ms())},
          {"tpot_ms", num_or_null(f.tpot_ms())},
          {"e2e_ms", num_or_null(f.e2e_ms())},
          {"itl_ms", f.times.itl_ms},
          {"submitted_ms", num_or_null(f.times.submitted_ms)},
          {"admitted_ms",
           num_or_null(f.admitted() ? std::optional<double>(f.times.admitted_ms) : std::nullopt)},
          {"finished_ms", num_or_null(f.times.finished_ms)}}},
        {"speculative", core::speculative_stats_json(f.speculative)},
    };
}

using FilePtr = std::unique_ptr<FILE, int (*)(FILE*)>;

// 1. The prompt set: every problem is reported before anything runs.
core::PromptFile read_prompt_set(const ParsedArgs& args, const std::string& path) {
    core::PromptFile pf = core::read_prompt_file(path);
    for (const core::PromptFileError& w : pf.warnings) {
        std::fprintf(stderr, "%s:%zu: %s\n", path.c_str(), w.line, w.problem.c_str());
    }
    for (const core::PromptFileError& err : pf.errors) {
        std::fprintf(stderr, "%s:%zu: %s\n", path.c_str(), err.line, err.problem.c_str());
    }
    if (!pf.errors.empty() && !args.has("skip-invalid")) {
        // A plain-text set whose first prompt happens to start with '{' reads
        // as JSONL; say why, or every line's "not valid JSON" is a puzzle.
        throw std::runtime_error(
            std::to_string(pf.errors.size()) + " malformed line(s) in " + path +
            (pf.jsonl ? " (read as JSON Lines: its first non-blank line starts with '{')" : "") +
            "; nothing was run (--skip-invalid runs the valid lines)");
    }
    if (pf.entries.empty()) throw std::runtime_error(path + ": no prompts");
    return pf;
}

// 2. Where the records and the summary go, opened before the model so their
// errors come first (the summary is written at the end, but a bad path must
// fail now, not after a long run).
struct Outputs {
    FILE* out = stdout;
    FilePtr out_file{nullptr, &std::fclose};
    FilePtr summary_file{nullptr, &std::fclose};
    std::string out_name = "standard output";
};

Outputs open_outputs(const ParsedArgs& args) {
    Outputs o;
    if (auto path = args.get("out")) {
        o.out_file.reset(std::fopen(path->c_str(), "w"));
        if (!o.out_file)
            throw std::runtime_error(*path + ": cannot write: " + std::strerror(errno));
        o.out = o.out_file.get();
        o.out_name = *path;
    }
    if (auto path = args.get("summary-json")) {
        o.summary_file.reset(std::fopen(path->c_str(), "w"));
        if (!o.summary_file)
            throw std::runtime_error(*path + ": cannot write: " + std::strerror(errno));
    }
    return o;
}

// What the run's requests share: limits, sampling (seed per prompt: the
// base + its index), stops, timeouts, the draft, the system prompt.
core::BatchOptions batch_options(const ParsedArgs& args, uint32_t concurrency,
                                 const scheduler::SpeculativeParams& spec) {
    const sampling::SamplingParams sampling = sampling_from_args(args);
    core::BatchOptions bo;
    bo.base.max_tokens = static_cast<int32_t>(args.get_int("n-predict", 128, 1, 1000000));
    bo.base.sampling = sampling;
    bo.base.seed = {core::SeedPolicy::BasePlusIndex, sampling.seed, 0};
    bo.base.stop = args.get_all("stop");
    bo.base.ignore_eos = args.has("ignore-eos");
    bo.base.timeout_ms = args.get_int("timeout-ms", -1, 0, int64_t{1} << 40);
    bo.base.queue_timeout_ms = args.get_int("queue-timeout-ms", -1, 0, int64_t{1} << 40);
    bo.base.speculative = spec;
    bo.concurrency = concurrency;
    bo.system_prompt = args.get("system").value_or("");
    return bo;
}

// What the run did, counted as its requests finished.
struct Tally {
    size_t finished = 0;
    size_t refused = 0;                      // error or rejected without ever being queued
    std::map<std::string, size_t> failures;  // finish reason -> requests (is_failure)
    bool interrupted = false;
    size_t records_written = 0;
    std::string out_error;  // why result records stopped being written; "" = all were
};

// 3. Runs the set: the runner submits, events come back through the inbox
// and are handled on this thread (printing, run-log writes never stall the
// engine). The session writes each response's row when it starts, with the
// streamed text (about once a second) and the final fields at the finish
// (core::ResponseLogger), before its Finished event gets here: a kill -9
// leaves "interrupted" rows; a busy or full run log keeps the rows and
// retries instead of ending the run. Each result record is written after
// that (a kill -9 never loses a response that was reported finished and
// logged); after a failed write (a full disk) the run goes on and the
// tally says how many records were written.
Tally run_set(core::EngineSession& session, const core::PromptFile& pf,
              const core::BatchOptions& bo, Outputs& outs, core::ResponseLogger* logger,
              bool progress) {
    core::Inbox<core::BatchEvent> inbox;
    core::BatchRunner runner(session, pf.entries, bo,
                             [&inbox](const core::BatchEvent& e) { inbox.push(e); });
    g_interrupted.store(false);
    g_signal.store(0);
    g_first_sigint_ns.store(0);
    std::signal(SIGINT, on_sigint);
    std::signal(SIGTERM, on_sigint);
    // End of the last whole record in a regular output file (-1: not a
    // regular file), where a record cut by a full disk is truncated away.
    off_t records_end = -1;
    if (struct stat st{}; fstat(fileno(outs.out), &st) == 0 && S_ISREG(st.st_mode))
        records_end = ftello(outs.out);
    runner.start();

    const bool tty = isatty(fileno(stderr)) != 0;
    const size_t total = pf.entries.size();
    Tally t;
    auto last_progress = std::chrono::steady_clock::now();
    size_t unlogged_seen = 0;  // rows kept for retry when the last warning was given
    std::vector<core::BatchEvent> batch;
    while (t.finished < total) {
        if (g_interrupted.load() && !t.interrupted) {
            t.interrupted = true;
            if (progress)
                std::fprintf(stderr, "\ninterrupted: cancelling the remaining requests\n");
            // Every unfinished entry gets its Finished (cancelled) event,
            // submitted or not, so every prompt has a record and a row.
            runner.cancel();
        }
        batch.clear();
        inbox.wait_pop(batch, std::chrono::milliseconds(100));
        for (const core::BatchEvent& e : batch) {
            if (e.type != core::BatchEvent::Type::Finished) continue;
            ++t.finished;
            const core::FinishedRequest& f = *e.result;
            if (f.refused) ++t.refused;
            if (is_failure(f.finish_reason)) ++t.failures[f.finish_reason];
            if (f.past_n_ctx_train)
                std::fprintf(stderr, "%swarning: line %zu: %s\n", progress && tty ? "\n" : "",
                             pf.entries[e.index].line,
                             core::past_n_ctx_train_warning(
                                 f.prompt_tokens.size() + f.output_tokens.size(), f.n_ctx_train)
                                 .c_str());
            const std::string line =
                result_record(f).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            if (logger) {
                if (const std::string err = logger->take_new_error();
                    !err.empty() && logger->unlogged() > unlogged_seen)
                    std::fprintf(stderr,
                                 "\nbatch: %s; kept in memory and retried with the next "
                                 "responses (the run goes on)\n",
                                 err.c_str());
                unlogged_seen = logger->unlogged();
            }
            if (t.out_error.empty()) {
                if (std::fprintf(outs.out, "%s\n", line.c_str()) < 0 ||
                    std::fflush(outs.out) != 0) {
                    t.out_error = std::strerror(errno);
                    drop_cut_record(outs.out, records_end);
                    std::fprintf(stderr,
                                 "\nbatch: %s: cannot write result records: %s; the run goes "
                                 "on%s\n",
                                 outs.out_name.c_str(), t.out_error.c_str(),
                                 logger ? " and every response is in the run log" : "");
                } else {
                    ++t.records_written;
                    if (records_end >= 0) records_end = ftello(outs.out);
                }
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (progress && now - last_progress >= std::chrono::milliseconds(tty ? 200 : 2000)) {
            last_progress = now;
            const metrics::MetricsSnapshot s = session.metrics().snapshot(session.now_ms(), 5000);
            std::fprintf(
                stderr,
                "%sbatch: %zu/%zu finished | running %d | queued %d | output %.1f tok/s (5 s) | "
                "TTFT p50 %.1f ms | ITL p50 %.2f ms | prefix cache hit rate %.3f%s",
                tty ? "\r" : "", t.finished, total, s.running, s.queued,
                s.window.output_tokens_per_s, s.run.ttft_ms.p50, s.run.itl_ms.p50,
                s.run.prefix_hit_rate, tty ? "   " : "\n");
            std::fflush(stderr);
        }
    }
    session.shutdown();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (progress && tty) std::fputc('\n', stderr);
    return t;
}

// 4. The summary of the whole run on stderr (it ends at the last finish),
// with its cost when priced (cost::run_usage, the session's busy time: it
// serves this run alone). Returns the cost figures.
std::optional<cost::Figures> print_run_summary(const metrics::MetricsSnapshot& s,
                                               const core::EngineSession& session,
                                               const std::string& model_path, uint32_t concurrency,
                                               size_t total, const Tally& t,
                                               const std::optional<cost::Price>& price) {
    std::fprintf(stderr, "\nbatch: %zu requests, concurrency %u, model %s, backend %s\n", total,
                 concurrency, model_path.c_str(), session.model().backend_name().c_str());
    std::string reasons;
    for (const auto& [reason, count] : s.finish_reasons) {
        reasons += (reasons.empty() ? "" : ", ") + reason + " " + std::to_string(count);
    }
    std::fprintf(stderr, "finish reasons: %s\n", reasons.c_str());
    if (t.refused > 0) {
        std::fprintf(
            stderr,
            "refused at submission: %zu of %zu (prompt longer than the context, queue full "
            "or invalid; see each record's message); the latency rows cover the "
            "other %zu\n",
            t.refused, total, total - t.refused);
    }
    std::fputs(format_metrics_table(s.run).c_str(), stderr);
    if (!price) return std::nullopt;
    const cost::Figures f =
        cost::figures(*price, cost::run_usage(s.run, session.stats().busy_ms / 1000.0));
    std::fprintf(stderr,
                 "cost: %.6g %s a request, %.4g per 1k requests, %.4g per M output "
                 "tokens (%s)\n",
                 f.per_request, price->currency.c_str(), f.per_1k_requests, f.per_m_output_tokens,
                 f.formula.c_str());
    return f;
}

// --summary-json: the run's figures as one object. Returns false (said on
// stderr) when it cannot be written.
bool write_summary_json(FILE* file, const std::string& name, const metrics::MetricsSnapshot& s,
                        const core::EngineSession& session, uint32_t concurrency, size_t total,
                        const Tally& t, const std::optional<cost::Price>& price,
                        const std::optional<cost::Figures>& cost_figures) {
    nlohmann::json j = window_json(s.run);
    j["concurrency"] = concurrency;
    j["requests_submitted"] = total;
    j["requests_refused"] = t.refused;
    j["finish_reasons"] = nlohmann::json::object();
    for (const auto& [reason, count] : s.finish_reasons) j["finish_reasons"][reason] = count;
    j["memory"] = memory_json(session);
    j["price"] = price ? cost::to_json(*price) : nlohmann::json(nullptr);
    j["cost"] = cost_figures ? cost::to_json(*cost_figures) : nlohmann::json(nullptr);
    if (std::fprintf(file, "%s\n", j.dump(2).c_str()) < 0 || std::fflush(file) != 0) {
        std::fprintf(stderr, "batch: %s: cannot write the summary: %s\n", name.c_str(),
                     std::strerror(errno));
        return false;
    }
    return true;
}

// Nothing is reported done that was not written: false (said on stderr)
// when records or rows are missing or requests did not complete (even when
// every one was refused).
bool run_succeeded(const Tally& t, size_t total, const std::string& out_name, size_t unlogged,
                   const core::ResponseLogger* logger) {
    bool ok = true;
    if (!t.out_error.empty()) {
        std::fprintf(stderr, "batch: only %zu of %zu result records were written to %s (%s)\n",
                     t.records_written, total, out_name.c_str(), t.out_error.c_str());
        ok = false;
    }
    if (unlogged > 0) {
        std::fprintf(stderr,
                     "batch: %zu responses could not be logged: %s; their result records are "
                     "in %s\n",
                     unlogged, logger->last_error().c_str(), out_name.c_str());
        ok = false;
    }
    size_t n_failed = 0;
    std::string failed_reasons;
    for (const auto& [reason, count] : t.failures) {
        n_failed += count;
        failed_reasons +=
            (failed_reasons.empty() ? "" : ", ") + reason + " " + std::to_string(count);
    }
    if (n_failed > 0) {
        std::fprintf(stderr,
                     "batch: %zu of %zu requests failed (%s), %zu completed; each failed "
                     "record's message says why\n",
                     n_failed, total, failed_reasons.c_str(), total - n_failed);
        ok = false;
    }
    return ok;
}

}  // namespace

int cmd_batch(const std::vector<std::string>& argv) {
    ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const std::optional<std::string> prompts_path = args.get("prompts");
    if (!prompts_path) throw UsageError("batch: --prompts FILE is required");
    const auto concurrency = static_cast<uint32_t>(args.get_int("concurrency", 4, 1, 4096));
    const auto chunk = static_cast<uint32_t>(args.get_int("chunk", 64, 1, 1 << 16));
    const auto step_tokens = static_cast<uint32_t>(
        args.get_int("step-tokens", std::max<int64_t>(256, concurrency), concurrency, 1 << 20));
    std::string draft_path;
    const scheduler::SpeculativeParams spec = draft_from_args(args, &draft_path);
    core::BatchOptions bo = batch_options(args, concurrency, spec);

    const core::PromptFile pf = read_prompt_set(args, *prompts_path);
    const auto max_queue = static_cast<uint32_t>(
        args.get_int("max-queue", static_cast<int64_t>(pf.entries.size()), 0, 1 << 30));
    bo.max_queue = std::max<uint32_t>(max_queue, 1);
    Outputs outs = open_outputs(args);
    const std::optional<cost::Price> price = price_from_args(args, "batch");
    std::shared_ptr<runlog::RunLog> log;
    if (!args.has("no-log")) log = open_run_log(args);

    const std::string model_path = resolve_model_path(args.get("model"));
    core::SessionOptions so = batch_session_options(model_path, args, concurrency);
    so.prefill_chunk = chunk;
    so.step_tokens = step_tokens;
    so.limits.max_queue = std::max<uint32_t>(max_queue, 1);
    so.draft_model = draft_path;
    std::unique_ptr<core::EngineSession> session = core::EngineSession::open(model_path, so);
    print_warnings(session->vocab().load_warnings());
    warn_context_past_n_ctx_train(session->facts().n_ctx, session->facts().n_parallel,
                                  session->model().hparams().n_ctx_train);

    if (log && !draft_path.empty())
        // The draft's version in each response row, beside the target's.
        bo.base.log_settings["draft_model_version_id"] = log->ensure_model_version(draft_path);
    // The one rule for a model without a chat template (or an unusable
    // one), said once when any prompt is rendered as a conversation.
    const bool any_messages =
        !bo.system_prompt.empty() ||
        std::any_of(pf.entries.begin(), pf.entries.end(),
                    [](const core::PromptEntry& e) { return !e.messages.empty(); });
    if (any_messages) {
        if (const std::string note = session->chat_template(bo.base.chat_template)->note;
            !note.empty())
            std::fprintf(stderr, "note: %s\n", note.c_str());
    }

    // The run's settings: the scheduling knobs, and the base seed. Each
    // response's own settings (settings_json) come with its row.
    nlohmann::json run_settings =
        core::settings_json(bo.base, bo.base.sampling.seed, session->facts());
    run_settings["concurrency"] = concurrency;
    run_settings["max_queue"] = max_queue;
    if (!bo.system_prompt.empty()) run_settings["system_prompt"] = bo.system_prompt;
    // The price, so the run log's exports can price each row (runlog/exporter.h).
    if (price) run_settings["price"] = cost::to_json(*price);
    std::shared_ptr<core::ResponseLogger> logger;
    if (log) {
        logger = std::make_shared<core::ResponseLogger>(log);
        const core::SessionRun run = core::begin_session_run(
            logger, *session, "batch", *prompts_path, run_settings, args.has("no-text"));
        bo.base.run_id = run.run_id;
        if (!run.load_warning.empty())
            std::fprintf(stderr, "warning: the model's cold start is not logged: %s\n",
                         run.load_warning.c_str());
    }

    const Tally t = run_set(*session, pf, bo, outs, logger.get(), !args.has("quiet"));
    size_t unlogged = 0;
    if (logger) {
        unlogged = logger->flush();  // the last try for rows kept while the log was busy or full
        try {
            logger->end_run(bo.base.run_id);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "batch: %s\n", e.what());
        }
    }

    const size_t total = pf.entries.size();
    const metrics::MetricsSnapshot s =
        session->metrics().snapshot(session->metrics().last_sample_ms(), 60000);
    const std::optional<cost::Figures> cost_figures =
        print_run_summary(s, *session, model_path, concurrency, total, t, price);
    if (outs.summary_file &&
        !write_summary_json(outs.summary_file.get(), *args.get("summary-json"), s, *session,
                            concurrency, total, t, price, cost_figures))
        return 1;
    const bool ok = run_succeeded(t, total, outs.out_name, unlogged, logger.get());
    if (t.interrupted) return 128 + g_signal.load();  // 130 for SIGINT, 143 for SIGTERM
    return ok ? 0 : 1;
}

}  // namespace wb::cli
