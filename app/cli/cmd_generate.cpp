// `workbench-cli generate`: one prompt, one sequence. Streams the generated
// text to stdout as it is produced (each piece flushed), then prints token
// counts and timings to stderr; --json prints one JSON object instead.
//
// Timings (steady clock, ms):
//   TTFT    start of prefill -> first token sampled (prefill + one sampling)
//   prefill the decode() call over the prompt; tokens/s = prompt tokens / its time
//   decode  first token -> last token; tokens/s = (generated - 1) / its time
//           (each step = one single-token decode() + sampling), TPOT its inverse

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "chat/chat_template.h"
#include "chat_options.h"
#include "common_options.h"
#include "gguf/gguf.h"
#include "model/load.h"
#include "runlog/environment.h"
#include "runlog/response_rows.h"
#include "runlog/run_log.h"
#include "runlog/time_utc.h"
#include "runlog/vk_device.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "generate",
    "",
    "Generate text from a prompt, streaming it to stdout.",
    "The prompt is tokenized with BOS as llama.cpp does. With --chat, the turns given\n"
    "by --system, --user and --assistant (in order; -p TEXT is the last user turn)\n"
    "are rendered by the model's chat template (or --chat-format) and tokenized with\n"
    "special tokens parsed, as llama.cpp's chat does. Generation stops at an\n"
    "end-of-generation token such as <|eot_id|> or <|im_end|> (finish reason\n"
    "\"stop\") or after N tokens or when the context is full (\"length\"). The text\n"
    "goes to stdout, then the prompt and generated token counts, TTFT and\n"
    "prefill/decode tokens/s go to stderr.\n"
    "Ctrl-C or SIGTERM stops after the current token: the response is logged as\n"
    "\"cancelled\" with the text so far (exit status 130, 143 for SIGTERM). Its\n"
    "run-log row is written before generating and updated about once a second,\n"
    "so even kill -9 leaves a row saying \"interrupted\".",
    concat(
        concat(
            concat(
                concat(concat(model_options(),
                              {
                                  {"prompt", 'p', "TEXT", "prompt text (required without --chat)"},
                                  {"chat", 0, "",
                                   "chat: render the turns below with the model's chat template"},
                                  {"n-predict", 'n', "N", "most tokens to generate (default: 128)"},
                                  {"json", 0, "",
                                   "print one JSON object (ids, text, finish reason, timings) "
                                   "instead of streaming"},
                                  {"db", 0, "PATH",
                                   "run log database (default: "
                                   "~/.local/share/inference-workbench/runlog.sqlite)"},
                                  {"no-log", 0, "", "do not write this response to the run log"},
                                  {"profile", 0, "",
                                   "print per-op GPU times (op, calls, GPU ms, share) to stderr "
                                   "(Vulkan)"},
                              }),
                       context_options()),
                sampling_options()),
            chat_turn_options()),
        chat_template_options()),
    0,
    0,
};

using Clock = std::chrono::steady_clock;

// Ctrl-C or SIGTERM: stop after the current token, log the response as
// "cancelled" with the text streamed so far, exit 130 / 143. A second one
// (0.5 s later or more) kills at once.
std::atomic<int> g_stop_signal{0};
std::atomic<int64_t> g_first_signal_ns{0};

extern "C" void on_stop_signal(int sig) {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe (POSIX)
    const int64_t now = int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
    int64_t expected = 0;
    if (g_first_signal_ns.compare_exchange_strong(expected, now)) {
        g_stop_signal.store(sig);
    } else if (now - expected >= 500'000'000) {
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
}

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Generation {
    std::vector<int32_t> prompt_ids;
    std::vector<int32_t> generated_ids;  // without the end-of-generation token
    std::string text;
    std::string finish_reason;  // "stop" | "length" | "cancelled" (SIGINT, SIGTERM)
    double load_ms = 0, ttft_ms = 0, prefill_ms = 0, decode_ms = 0, total_ms = 0;
};

/// Prefill + sampling loop of one sequence (seq 0). `on_text` gets each
/// complete UTF-8 piece as soon as it exists.
void run(model::Model& m, const tokenizer::Vocab& vocab, sampling::Sampler& sampler,
         int64_t n_predict, Generation& g, const std::function<void(const std::string&)>& on_text) {
    const uint32_t n_ctx = m.context().n_ctx;
    if (g.prompt_ids.size() > n_ctx) {
        throw std::runtime_error("prompt has " + std::to_string(g.prompt_ids.size()) +
                                 " tokens, more than the context size " + std::to_string(n_ctx) +
                                 " (raise -c)");
    }
    tokenizer::StreamDetokenizer detok(vocab);
    for (int32_t id : g.prompt_ids) sampler.accept(id);  // penalties see the prompt, as llama.cpp

    const Clock::time_point t_start = Clock::now();
    model::Batch batch;
    for (size_t i = 0; i < g.prompt_ids.size(); ++i) {
        batch.add(g.prompt_ids[i], static_cast<int32_t>(i), 0, i + 1 == g.prompt_ids.size());
    }
    std::vector<float> logits;  // [1, n_vocab] of the last decoded token
    m.decode(batch, logits);
    const Clock::time_point t_prefilled = Clock::now();
    g.prefill_ms = ms_between(t_start, t_prefilled);

    int32_t pos = static_cast<int32_t>(g.prompt_ids.size());
    Clock::time_point t_first{}, t_last{};
    g.finish_reason = "length";
    while (static_cast<int64_t>(g.generated_ids.size()) < n_predict) {
        const int32_t tok = sampler.sample(logits);
        const Clock::time_point now = Clock::now();
        if (g.generated_ids.empty()) {
            t_first = now;
            g.ttft_ms = ms_between(t_start, now);
        }
        t_last = now;
        if (vocab.is_eog(tok)) {
            g.finish_reason = "stop";
            break;
        }
        g.generated_ids.push_back(tok);
        const std::string piece = detok.push(tok);
        g.text += piece;
        if (!piece.empty()) on_text(piece);
        if (static_cast<int64_t>(g.generated_ids.size()) >= n_predict) break;
        if (static_cast<uint32_t>(pos) >= n_ctx) break;  // context full: "length"
        if (g_stop_signal.load() != 0) {
            g.finish_reason = "cancelled";
            break;
        }
        batch.clear();
        batch.add(tok, pos++, 0, true);
        m.decode(batch, logits);
    }
    const std::string rest = detok.flush();
    g.text += rest;
    if (!rest.empty()) on_text(rest);
    g.decode_ms = g.generated_ids.empty() ? 0.0 : ms_between(t_first, t_last);
    g.total_ms = ms_between(t_start, Clock::now());
}

double per_second(double n, double ms) {
    return ms > 0 ? n * 1000.0 / ms : 0.0;
}

/// A float setting as the short decimal the user typed (0.95, not 0.949999988...).
double as_decimal(float v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(v));
    return std::strtod(buf, nullptr);
}

}  // namespace

int cmd_generate(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const bool chat_mode = args.has("chat");
    std::optional<std::string> prompt = args.get("prompt");
    if (!prompt && !chat_mode)
        throw UsageError("generate: -p PROMPT is required (or --chat with --user)");
    if (!chat_mode && (args.has("user") || args.has("assistant") || args.has("system") ||
                       args.has("chat-format") || args.has("chat-var"))) {
        throw UsageError(
            "generate: --system/--user/--assistant/--chat-format/--chat-var need --chat");
    }
    std::vector<chat::Message> turns;
    if (chat_mode) {
        if (prompt) {
            // -p is the final user turn after any given on the command line.
            for (const auto& [name, value] : args.in_order()) {
                if (name == "system") turns.insert(turns.begin(), chat::Message{"system", value});
                if (name == "user" || name == "assistant") turns.push_back({name, value});
            }
            turns.push_back({"user", *prompt});
        } else {
            turns = chat_turns_from_args(args);
        }
    }
    const int64_t n_predict = args.get_int("n-predict", 128, 0, int64_t{1} << 24);
    const bool json = args.has("json");
    const sampling::SamplingParams sp = sampling_from_args(args);
    const std::string path = resolve_model_path(args.get("model"));
    // Run log, opened strictly before any work: a bad database file is
    // reported (and nothing generated) rather than silently not logged.
    std::optional<runlog::RunLog> log;
    if (!args.has("no-log"))
        log.emplace(runlog::RunLog::open(run_log_path(args)));

    const Clock::time_point t_load = Clock::now();
    const gguf::File f = gguf::File::open(path);
    const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(f);
    const model::HParams hp = model::HParams::from_gguf(f);
    const model::LoadOptions lo = load_options_from_args(args, hp.n_ctx_train);
    std::unique_ptr<model::Model> m = model::load_model(path, lo);
    Generation g;
    g.load_ms = ms_between(t_load, Clock::now());
    if (vocab.n_tokens() != static_cast<int32_t>(hp.n_vocab)) {
        throw std::runtime_error(path + ": tokenizer has " + std::to_string(vocab.n_tokens()) +
                                 " tokens but token_embd has " + std::to_string(hp.n_vocab) +
                                 " rows");
    }
    std::optional<chat::ChatPrompt> chat_prompt;
    if (chat_mode) {
        const chat::TemplateChoice choice =
            chat::choose_template(f, vocab, args.get("chat-format").value_or(""));
        if (!choice.note.empty()) std::fprintf(stderr, "note: %s\n", choice.note.c_str());
        chat_prompt =
            chat::build_prompt(choice.tmpl, vocab, turns, true, chat_vars_from_args(args));
        if (!json) std::fprintf(stderr, "%s\n", describe_chat_prompt(*chat_prompt).c_str());
        prompt = chat_prompt->text;
        g.prompt_ids = chat_prompt->ids;
    } else {
        g.prompt_ids = vocab.tokenize(*prompt, /*add_special=*/true);
    }
    if (g.prompt_ids.empty()) throw UsageError("generate: the prompt gives no tokens");

    sampling::Sampler sampler(sp);
    const int64_t started_utc_ms = runlog::now_utc_ms();
    if (args.has("profile")) {  // per-op device timestamps (the Vulkan backend)
        if (!m->can_profile()) throw UsageError("generate: --profile needs --backend vulkan");
        m->set_profiling(true);
    }
    // The run log: one run with one response, whose row is written before
    // generating and kept up to date (runlog/response_rows.h), so a kill -9
    // leaves an "interrupted" row with the text so far; a busy or full log
    // is retried, then reported.
    nlohmann::json settings = {
        {"temperature", as_decimal(sp.temperature)},
        {"top_k", sp.top_k},
        {"top_p", as_decimal(sp.top_p)},
        {"min_p", as_decimal(sp.min_p)},
        {"repeat_penalty", as_decimal(sp.repeat_penalty)},
        {"repeat_last_n", sp.repeat_last_n},
        {"seed", sp.seed},
        {"n_ctx", m->context().n_ctx},
        {"n_parallel", 1},
        {"max_tokens", n_predict},
        {"kv_type", m->context().kv_type == model::KvType::F16 ? "f16" : "f32"},
        {"backend", m->backend_name()},
        {"prompt_mode", chat_mode ? "chat" : "raw"},
        // How the text became ids, so runs that tokenize differently differ here.
        {"add_bos", vocab.add_bos()},
        {"pre_tokenizer", vocab.pre_family()},
        {"parse_special", chat_mode}};
    if (chat_prompt) {
        settings["chat_template"] = chat_prompt->template_name;
        settings["chat_template_sha256"] = chat_prompt->template_sha256;
    }
    runlog::ResponseRecord r;
    std::optional<runlog::ResponseRows> rows;
    if (log) {
        const bool cpu = m->backend_name() == "cpu";
        runlog::DeviceInfo dev;
        if (!cpu) dev = runlog::describe_vulkan_device(lo.device);  // the loader's choice
        r.run_id = log->begin_run(runlog::RunKind::Generate, "generate", settings);
        r.model_version_id = log->ensure_model_version(path);
        r.environment_id =
            log->ensure_environment(runlog::collect_environment(cpu ? "cpu" : "vulkan", dev));
        r.settings = settings;
        r.prompt = *prompt;
        r.prompt_tokens = static_cast<int64_t>(g.prompt_ids.size());
        r.started_ms = started_utc_ms;
        rows.emplace(*log);
        rows->start("generate", r);
    }
    g_stop_signal.store(0);
    g_first_signal_ns.store(0);
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    std::string streamed;
    try {
        run(*m, vocab, sampler, n_predict, g, [&](const std::string& piece) {
            streamed += piece;
            if (rows)
                rows->text("generate", streamed, static_cast<int64_t>(g.generated_ids.size()),
                           ms_between(t_load, Clock::now()));
            if (json) return;
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        });
    } catch (const std::exception& e) {
        // Logged as an error with what was generated before it, then reported.
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        if (rows) {
            r.output = streamed;
            r.output_tokens = static_cast<int64_t>(g.generated_ids.size());
            r.finish_reason = "error";
            r.error = e.what();
            r.finished_ms = runlog::now_utc_ms();
            rows->finish("generate", r);
            rows->flush();
            try {
                log->end_run(r.run_id);
            } catch (const std::exception&) {  // the error below is the one to report
            }
        }
        throw;
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);

    const double n_prompt = static_cast<double>(g.prompt_ids.size());
    const double n_gen = static_cast<double>(g.generated_ids.size());
    const double prefill_tps = per_second(n_prompt, g.prefill_ms);
    const double decode_tps = per_second(n_gen > 1 ? n_gen - 1 : 0, g.decode_ms);
    std::string not_logged;
    if (log) {
        r.output = g.text;
        r.output_tokens = static_cast<int64_t>(g.generated_ids.size());
        r.finish_reason = g.finish_reason;
        r.queue_wait_ms = 0.0;  // no queue: one request, run at once
        if (n_predict > 0) r.ttft_ms = g.ttft_ms;
        if (n_gen > 1) r.tpot_ms = g.decode_ms / (n_gen - 1);
        r.e2e_ms = g.total_ms;
        r.prefill_tps = prefill_tps;
        if (n_gen > 1) r.decode_tps = decode_tps;
        r.started_ms = started_utc_ms;
        r.finished_ms = runlog::now_utc_ms();
        if (g.finish_reason == "cancelled")
            r.error = std::string("cancelled by ") +
                      (g_stop_signal.load() == SIGTERM ? "SIGTERM" : "Ctrl-C (SIGINT)");
        rows->finish("generate", r);
        // Not logged after every retry: said after the output, exit status 1.
        if (rows->flush() > 0)
            not_logged = rows->last_error();
        else
            log->end_run(r.run_id);
    }
    if (json) {
        nlohmann::json j;
        j["model"] = path;
        j["backend"] = m->backend_name();
        j["prompt"] = *prompt;
        j["prompt_token_ids"] = g.prompt_ids;
        if (chat_prompt) {
            nlohmann::json msgs = nlohmann::json::array();
            for (const chat::Message& t : turns)
                msgs.push_back({{"role", t.role}, {"content", t.content}});
            j["chat"] = {{"messages", msgs},
                         {"template", chat_prompt->template_name},
                         {"template_sha256", chat_prompt->template_sha256},
                         {"add_bos", chat_prompt->add_bos},
                         {"pre_tokenizer", chat_prompt->pre_tokenizer},
                         {"parse_special", chat_prompt->parse_special}};
        }
        j["generated_token_ids"] = g.generated_ids;
        j["text"] = g.text;
        j["finish_reason"] = g.finish_reason;
        j["n_ctx"] = m->context().n_ctx;
        j["kv_type"] = m->context().kv_type == model::KvType::F16 ? "f16" : "f32";
        j["sampling"] = {{"temperature", as_decimal(sp.temperature)},
                         {"top_k", sp.top_k},
                         {"top_p", as_decimal(sp.top_p)},
                         {"min_p", as_decimal(sp.min_p)},
                         {"repeat_penalty", as_decimal(sp.repeat_penalty)},
                         {"repeat_last_n", sp.repeat_last_n},
                         {"seed", sp.seed}};
        j["timings"] = {{"load_ms", g.load_ms},
                        {"ttft_ms", g.ttft_ms},
                        {"prefill_ms", g.prefill_ms},
                        {"prefill_tokens_per_s", prefill_tps},
                        {"decode_ms", g.decode_ms},
                        // One generated token means no decode step: no rate, no TPOT.
                        {"decode_tokens_per_s",
                         n_gen > 1 ? nlohmann::json(decode_tps) : nlohmann::json(nullptr)},
                        {"tpot_ms", n_gen > 1 ? nlohmann::json(g.decode_ms / (n_gen - 1))
                                              : nlohmann::json(nullptr)},
                        {"total_ms", g.total_ms}};
        // The detokenizer only emits valid UTF-8, but the prompt is user input.
        const std::string out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        std::printf("%s\n", out.c_str());
    } else {
        std::printf("\n");
        std::fflush(stdout);
        // The first token comes from prefill; with only that one there was no
        // decode step, so there is no decode rate or TPOT to show.
        char decode_line[128];
        if (n_gen > 1) {
            std::snprintf(decode_line, sizeof decode_line, "%.1f tokens/s (%.2f ms, TPOT %.3f ms)",
                          decode_tps, g.decode_ms, g.decode_ms / (n_gen - 1));
        } else {
            std::snprintf(decode_line, sizeof decode_line,
                          "- (no decode step: the only token came from prefill)");
        }
        std::fprintf(stderr,
                     "\nprompt tokens:    %zu\n"
                     "generated tokens: %zu (finish: %s)\n"
                     "TTFT:             %.2f ms\n"
                     "prefill:          %.1f tokens/s (%.2f ms)\n"
                     "decode:           %s\n"
                     "backend:          %s, seed %llu\n",
                     g.prompt_ids.size(), g.generated_ids.size(), g.finish_reason.c_str(),
                     g.ttft_ms, prefill_tps, g.prefill_ms, decode_line, m->backend_name().c_str(),
                     static_cast<unsigned long long>(sp.seed));
    }
    if (args.has("profile")) {
        const vk::Profile& prof = m->profile();
        std::fprintf(
            stderr, "\nper-op GPU time over the whole generation (prefill + decode):\n%s",
            prof.empty() ? "(the device has no compute timestamps)\n" : prof.table().c_str());
    }
    if (!not_logged.empty()) {
        std::fprintf(stderr, "generate: the response was generated but not logged: %s\n",
                     not_logged.c_str());
        return 1;
    }
    // Stopped by a signal: 128 + its number, as the shell reports it.
    return g.finish_reason == "cancelled" ? 128 + g_stop_signal.load() : 0;
}

}  // namespace wb::cli
