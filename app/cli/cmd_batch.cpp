// `workbench-cli batch`: runs a prompt set through the continuous-batching
// scheduler at a chosen concurrency, streams one result record per request
// as it finishes, and prints the latency / throughput metrics at the end.

#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

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
#include "prompt_file.h"
#include "runlog/environment.h"
#include "runlog/response_rows.h"
#include "runlog/run_log.h"
#include "runlog/time_utc.h"
#include "runlog/vk_device.h"
#include "scheduler/event_queue.h"
#include "scheduler/scheduler.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "batch",
    "",
    "Run a prompt set through the continuous-batching scheduler.",
    "FILE is JSON Lines, one {\"prompt\": ..., \"max_tokens\": ..., \"id\": ..., \"stop\": ...}\n"
    "object per line, or plain text with one prompt per line (JSONL when the\n"
    "first non-blank line starts with '{'). A malformed line is reported with\n"
    "its line number and nothing runs, unless --skip-invalid is given.\n"
    "\n"
    "All prompts are submitted at once, before any runs; --concurrency requests\n"
    "run together, the rest wait in the queue. A full queue rejects at once, so\n"
    "with --max-queue Q only the first Q prompts are accepted. One result\n"
    "record per request (id, prompt, output, token ids, finish reason, timings)\n"
    "goes to --out (or stdout) as JSONL the moment it finishes, flushed, so an\n"
    "interrupted run keeps every finished record. Ctrl-C or SIGTERM cancels the\n"
    "rest cleanly (their records and rows say \"cancelled\", with the text so far)\n"
    "and exits with status 130 (143 for SIGTERM); a second one at least 0.5 s\n"
    "later kills at once. Each response's run-log row is written when it starts\n"
    "and kept up to date, so even kill -9 leaves rows saying \"interrupted\". A\n"
    "busy or full run log never ends the run: rows are kept and retried, and the\n"
    "exit status is 1 if some could not be logged (or some records not written).\n"
    "A progress line and the metrics table (count, mean, p50, p90, p95, p99,\n"
    "max of queue wait, TTFT, ITL, TPOT, end-to-end latency; tokens/s) go to\n"
    "stderr. TTFT counts from submission, as vLLM's benchmark does. Each\n"
    "response is logged in the run log unless --no-log.",
    concat(
        concat(model_options(), batch_context_options()),
        concat(sampling_options(),
               {
                   {"prompts", 0, "FILE", "prompt set (JSONL or plain text), required"},
                   {"concurrency", 0, "N",
                    "most requests running at once, sharing the KV pool (default: 4)"},
                   {"max-queue", 0, "Q",
                    "requests that may wait; only the first Q prompts run (default: all)"},
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

std::optional<double> opt(double v) {
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

nlohmann::json num_or_null(double v) {
    return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v);
}

nlohmann::json result_record(const scheduler::Event& e, const std::string& prompt) {
    const metrics::RequestMetrics& m = e.metrics;
    return {
        {"id", e.label},
        {"prompt", prompt},
        {"output", e.output},
        {"finish_reason", scheduler::to_string(e.reason)},
        {"message", e.message},
        {"prompt_tokens", e.prompt_tokens.size()},
        {"prompt_tokens_cached", e.prompt_tokens_cached},
        {"prompt_tokens_computed", e.prompt_tokens_processed},
        {"preemptions", e.preemptions},
        {"generated_tokens", e.output_tokens.size()},
        {"prompt_token_ids", e.prompt_tokens},
        {"token_ids", e.output_tokens},
        {"timings",
         {{"queue_wait_ms", num_or_null(m.queue_wait_ms)},
          {"ttft_ms", num_or_null(m.ttft_ms)},
          {"tpot_ms", num_or_null(m.tpot_ms)},
          {"e2e_ms", num_or_null(m.e2e_ms)},
          {"itl_ms", m.itl_ms},
          {"submitted_ms", num_or_null(e.timeline.submitted_ms)},
          {"admitted_ms", num_or_null(e.timeline.admitted_ms)},
          {"finished_ms", num_or_null(e.timeline.finished_ms)}}},
    };
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
    const auto n_predict = static_cast<int32_t>(args.get_int("n-predict", 128, 1, 1000000));
    const auto chunk = static_cast<uint32_t>(args.get_int("chunk", 64, 1, 1 << 16));
    const auto step_tokens = static_cast<uint32_t>(
        args.get_int("step-tokens", std::max<int64_t>(256, concurrency), concurrency, 1 << 20));
    const int64_t timeout_ms = args.get_int("timeout-ms", -1, 0, int64_t{1} << 40);
    const int64_t queue_timeout_ms = args.get_int("queue-timeout-ms", -1, 0, int64_t{1} << 40);
    const sampling::SamplingParams sampling = sampling_from_args(args);
    const std::vector<std::string> extra_stops = args.get_all("stop");

    // 1. The prompt set: every problem is reported before anything runs.
    const PromptFile pf = read_prompt_file(*prompts_path);
    for (const PromptFileError& err : pf.errors) {
        std::fprintf(stderr, "%s:%zu: %s\n", prompts_path->c_str(), err.line, err.problem.c_str());
    }
    if (!pf.errors.empty() && !args.has("skip-invalid")) {
        // A plain-text set whose first prompt happens to start with '{' reads
        // as JSONL; say why, or every line's "not valid JSON" is a puzzle.
        throw std::runtime_error(
            std::to_string(pf.errors.size()) + " malformed line(s) in " + *prompts_path +
            (pf.jsonl ? " (read as JSON Lines: its first non-blank line starts with '{')" : "") +
            "; nothing was run (--skip-invalid runs the valid lines)");
    }
    if (pf.entries.empty()) throw std::runtime_error(*prompts_path + ": no prompts");
    const auto max_queue = static_cast<uint32_t>(
        args.get_int("max-queue", static_cast<int64_t>(pf.entries.size()), 0, 1 << 30));

    // 2. Output and run log, opened before the model so their errors come first.
    FILE* out = stdout;
    std::unique_ptr<FILE, int (*)(FILE*)> out_file(nullptr, &std::fclose);
    if (auto o = args.get("out")) {
        out_file.reset(std::fopen(o->c_str(), "w"));
        if (!out_file) throw std::runtime_error(*o + ": cannot write: " + std::strerror(errno));
        out = out_file.get();
    }
    // The summary is written at the end, but a bad path must fail now, not
    // after a long run.
    std::unique_ptr<FILE, int (*)(FILE*)> summary_file(nullptr, &std::fclose);
    if (auto path = args.get("summary-json")) {
        summary_file.reset(std::fopen(path->c_str(), "w"));
        if (!summary_file)
            throw std::runtime_error(*path + ": cannot write: " + std::strerror(errno));
    }
    const std::string model_path = resolve_model_path(args.get("model"));
    BatchModel bm = load_batch_model(model_path, args, concurrency);
    const uint32_t n_ctx = bm.model->context().n_ctx;

    nlohmann::json settings = sampling_json(sampling);
    settings["n_ctx"] = n_ctx;  // the KV pool, shared by the running requests
    settings["n_parallel"] = concurrency;
    settings["max_tokens"] = n_predict;
    settings["max_queue"] = max_queue;
    settings["prefill_chunk"] = chunk;
    settings["step_tokens"] = step_tokens;
    settings["timeout_ms"] = timeout_ms;
    settings["queue_timeout_ms"] = queue_timeout_ms;
    settings["ignore_eos"] = args.has("ignore-eos");
    settings["kv_type"] = bm.model->context().kv_type == model::KvType::F16 ? "f16" : "f32";
    settings["backend"] = bm.model->backend_name();
    settings["prompt_mode"] = "raw";

    std::optional<runlog::RunLog> log;
    int64_t run_id = 0, model_version = 0, environment = 0;
    if (!args.has("no-log")) {
        log.emplace(runlog::RunLog::open(run_log_path(args)));
        run_id = log->begin_run(runlog::RunKind::Batch, *prompts_path, settings);
        model_version = log->ensure_model_version(model_path);
        const bool cpu = bm.model->backend_name() == "cpu";
        runlog::DeviceInfo dev;
        if (!cpu) dev = runlog::describe_vulkan_device(args.get("device").value_or(""));
        environment =
            log->ensure_environment(runlog::collect_environment(cpu ? "cpu" : "vulkan", dev));
    }

    // 3. Run: submit everything, then drain events on this thread.
    scheduler::EventQueue events;
    scheduler::Scheduler sched(
        *bm.model, bm.vocab, scheduler::SchedulerParams{concurrency, max_queue, chunk, step_tokens},
        events.sink());
    // UTC ms of the scheduler clock's zero, for the run log's timestamps.
    const double utc_offset_ms = static_cast<double>(runlog::now_utc_ms()) - sched.now_ms();

    std::map<std::string, const PromptEntry*> by_label;
    for (size_t i = 0; i < pf.entries.size(); ++i) {
        const PromptEntry& e = pf.entries[i];
        scheduler::Request r;
        r.label = e.id;
        r.prompt = e.prompt;
        r.max_tokens = e.max_tokens.value_or(n_predict);
        r.sampling = sampling;
        r.sampling.seed = sampling.seed + i;  // distinct, reproducible per request
        r.stop = e.stop;
        r.stop.insert(r.stop.end(), extra_stops.begin(), extra_stops.end());
        r.ignore_eos = args.has("ignore-eos");
        r.timeout_ms = timeout_ms;
        r.queue_timeout_ms = queue_timeout_ms;
        by_label[e.id] = &e;
        sched.submit(std::move(r));
    }

    g_interrupted.store(false);
    g_signal.store(0);
    g_first_sigint_ns.store(0);
    std::signal(SIGINT, on_sigint);
    std::signal(SIGTERM, on_sigint);
    // Each response's row is written when it starts, carries the streamed
    // text (about once a second) and gets its final fields at the finish, so
    // a kill -9 leaves "interrupted" rows; a busy or full run log keeps the
    // rows and retries (runlog/response_rows.h) instead of ending the run.
    std::optional<runlog::ResponseRows> rows;
    if (log) rows.emplace(*log);
    std::map<std::string, std::pair<std::string, int64_t>> streamed;  // label -> (text, tokens)
    auto base_record = [&](const PromptEntry& pe) {
        runlog::ResponseRecord rr;
        rr.run_id = run_id;
        rr.model_version_id = model_version;
        rr.environment_id = environment;
        rr.request_id = pe.id;
        rr.settings = settings;
        rr.settings["max_tokens"] = pe.max_tokens.value_or(n_predict);
        rr.settings["seed"] = sampling.seed + static_cast<uint64_t>(&pe - pf.entries.data());
        rr.prompt = pe.prompt;
        return rr;
    };
    // The result records: every write checked; after a failure (a full
    // disk) the run goes on (every response is in the run log) and the end
    // says how many records were written.
    size_t records_written = 0;
    std::string out_error;
    // End of the last whole record in a regular output file (-1: not a
    // regular file), where a record cut by a full disk is truncated away.
    off_t records_end = -1;
    if (struct stat st{}; fstat(fileno(out), &st) == 0 && S_ISREG(st.st_mode))
        records_end = ftello(out);
    const std::string out_name = args.get("out").value_or("standard output");
    sched.start();

    const bool progress = !args.has("quiet");
    const bool tty = isatty(fileno(stderr)) != 0;
    const size_t total = pf.entries.size();
    size_t finished = 0;
    size_t refused = 0;  // error or rejected without ever being queued
    bool interrupted = false;
    auto last_progress = std::chrono::steady_clock::now();
    std::vector<scheduler::Event> batch;
    while (finished < total) {
        if (g_interrupted.load() && !interrupted) {
            interrupted = true;
            if (progress)
                std::fprintf(stderr, "\ninterrupted: cancelling the remaining requests\n");
            sched.stop();  // every unfinished request gets its Finished (cancelled) event
        }
        batch.clear();
        events.wait_pop(batch, std::chrono::milliseconds(100));
        for (const scheduler::Event& e : batch) {
            if (rows && e.type == scheduler::EventType::Started) {
                runlog::ResponseRecord rr = base_record(*by_label.at(e.label));
                rr.started_ms = static_cast<int64_t>(utc_offset_ms + e.time_ms);
                rows->start(e.label, rr);
            } else if (rows && e.type == scheduler::EventType::Token) {
                auto& [text, n] = streamed[e.label];
                text += e.piece;
                rows->text(e.label, text, ++n, e.time_ms);
            }
            if (e.type != scheduler::EventType::Finished) continue;
            streamed.erase(e.label);
            ++finished;
            if ((e.reason == scheduler::FinishReason::Error ||
                 e.reason == scheduler::FinishReason::Rejected) &&
                std::isnan(e.timeline.admitted_ms)) {
                ++refused;
            }
            const PromptEntry& pe = *by_label.at(e.label);
            const std::string line =
                result_record(e, pe.prompt)
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            if (log) {
                runlog::ResponseRecord rr = base_record(pe);
                rr.prompt_tokens = static_cast<int64_t>(e.prompt_tokens.size());
                rr.output = e.output;
                rr.output_tokens = static_cast<int64_t>(e.output_tokens.size());
                rr.finish_reason = scheduler::to_string(e.reason);
                if (e.reason == scheduler::FinishReason::Error ||
                    e.reason == scheduler::FinishReason::Rejected) {
                    rr.error = e.message;
                }
                rr.queue_wait_ms = opt(e.metrics.queue_wait_ms);
                rr.ttft_ms = opt(e.metrics.ttft_ms);
                rr.tpot_ms = opt(e.metrics.tpot_ms);
                rr.e2e_ms = opt(e.metrics.e2e_ms);
                const auto& tl = e.timeline;
                if (!tl.token_ms.empty() && !std::isnan(tl.admitted_ms) &&
                    tl.token_ms.front() > tl.admitted_ms) {
                    rr.prefill_tps = static_cast<double>(e.prompt_tokens.size()) /
                                     ((tl.token_ms.front() - tl.admitted_ms) / 1000.0);
                }
                if (tl.token_ms.size() >= 2 && tl.token_ms.back() > tl.token_ms.front()) {
                    rr.decode_tps = static_cast<double>(tl.token_ms.size() - 1) /
                                    ((tl.token_ms.back() - tl.token_ms.front()) / 1000.0);
                }
                if (!std::isnan(tl.admitted_ms)) {
                    rr.prompt_cached_tokens = e.prompt_tokens_cached;
                    rr.preemptions = e.preemptions;
                }
                rr.started_ms = static_cast<int64_t>(utc_offset_ms + tl.submitted_ms);
                rr.finished_ms = static_cast<int64_t>(utc_offset_ms + tl.finished_ms);
                const size_t before = rows->unlogged();
                rows->finish(e.label, rr);
                if (const std::string err = rows->take_new_error();
                    !err.empty() && rows->unlogged() > before)
                    std::fprintf(stderr,
                                 "\nbatch: %s; kept in memory and retried with the next "
                                 "responses (the run goes on)\n",
                                 err.c_str());
            }
            // Reported after the run log write (committed, or kept for a
            // retry when the log is busy or full): a kill -9 never loses a
            // response that was reported finished and logged.
            if (out_error.empty()) {
                if (std::fprintf(out, "%s\n", line.c_str()) < 0 || std::fflush(out) != 0) {
                    out_error = std::strerror(errno);
                    drop_cut_record(out, records_end);
                    std::fprintf(stderr,
                                 "\nbatch: %s: cannot write result records: %s; the run goes "
                                 "on%s\n",
                                 out_name.c_str(), out_error.c_str(),
                                 log ? " and every response is in the run log" : "");
                } else {
                    ++records_written;
                    if (records_end >= 0) records_end = ftello(out);
                }
            }
        }
        const auto now = std::chrono::steady_clock::now();
        if (progress && now - last_progress >= std::chrono::milliseconds(tty ? 200 : 2000)) {
            last_progress = now;
            const metrics::MetricsSnapshot s = sched.metrics().snapshot(sched.now_ms(), 5000);
            std::fprintf(stderr,
                         "%sbatch: %zu/%zu finished | running %d | queued %d | decode %.1f tok/s | "
                         "TTFT p50 %.1f ms | ITL p50 %.2f ms | prefix cache hit rate %.3f%s",
                         tty ? "\r" : "", finished, total, s.running, s.queued,
                         s.window.decode_tokens_per_s, s.run.ttft_ms.p50, s.run.itl_ms.p50,
                         s.run.prefix_hit_rate, tty ? "   " : "\n");
            std::fflush(stderr);
        }
    }
    sched.stop();
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    size_t unlogged = 0;
    if (rows) {
        unlogged = rows->flush();  // the last try for rows kept while the log was busy or full
        try {
            log->end_run(run_id);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "batch: %s\n", e.what());
        }
    }

    // 4. Summary of the whole run (ends at the last finish).
    const metrics::MetricsSnapshot s =
        sched.metrics().snapshot(sched.metrics().last_sample_ms(), 60000);
    if (progress && tty) std::fputc('\n', stderr);
    std::fprintf(stderr, "\nbatch: %zu requests, concurrency %u, model %s, backend %s\n", total,
                 concurrency, model_path.c_str(), bm.model->backend_name().c_str());
    std::string reasons;
    for (const auto& [reason, count] : s.finish_reasons) {
        reasons += (reasons.empty() ? "" : ", ") + reason + " " + std::to_string(count);
    }
    std::fprintf(stderr, "finish reasons: %s\n", reasons.c_str());
    if (refused > 0) {
        std::fprintf(
            stderr,
            "refused at submission: %zu of %zu (prompt longer than the context, queue full "
            "or invalid; see each record's message); the latency rows cover the "
            "other %zu\n",
            refused, total, total - refused);
    }
    std::fputs(format_metrics_table(s.run).c_str(), stderr);
    if (summary_file) {
        nlohmann::json j = window_json(s.run);
        j["concurrency"] = concurrency;
        j["requests_submitted"] = total;
        j["requests_refused"] = refused;
        j["finish_reasons"] = nlohmann::json::object();
        for (const auto& [reason, count] : s.finish_reasons) j["finish_reasons"][reason] = count;
        if (std::fprintf(summary_file.get(), "%s\n", j.dump(2).c_str()) < 0 ||
            std::fflush(summary_file.get()) != 0) {
            std::fprintf(stderr, "batch: %s: cannot write the summary: %s\n",
                         args.get("summary-json")->c_str(), std::strerror(errno));
            return 1;
        }
    }
    // Nothing is reported done that was not written.
    bool failed = false;
    if (!out_error.empty()) {
        std::fprintf(stderr, "batch: only %zu of %zu result records were written to %s (%s)\n",
                     records_written, total, out_name.c_str(), out_error.c_str());
        failed = true;
    }
    if (unlogged > 0) {
        std::fprintf(stderr,
                     "batch: %zu responses could not be logged: %s; their result records are "
                     "in %s\n",
                     unlogged, rows->last_error().c_str(), out_name.c_str());
        failed = true;
    }
    if (interrupted) return 128 + g_signal.load();  // 130 for SIGINT, 143 for SIGTERM
    return failed ? 1 : 0;
}

}  // namespace wb::cli
