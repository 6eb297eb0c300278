// `workbench-cli generate`: one prompt, one sequence. Streams the generated
// text to stdout as it is produced (each piece flushed), then prints token
// counts and timings to stderr; --json prints one JSON object instead.
//
// The request goes through the one request path (app/core: EngineSession
// with one slot, the prompt in one forward pass; with --chat its messages
// are rendered by the chat template the request names) and is logged by the one
// row builder. Timings (ms) are FinishedRequest's (core/finished_request.h):
//   TTFT    submit -> first token sampled (queue wait + prefill)
//   prefill admission -> first token; tokens/s = prompt tokens / its time
//   decode  first token -> last token; tokens/s = (generated - 1) / its time
//           (each step = one single-token forward pass + sampling)

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "chat/chat_template.h"
#include "chat_options.h"
#include "common_options.h"
#include "core/engine_session.h"
#include "core/inbox.h"
#include "core/response_log.h"
#include "core/session_run.h"
#include "core/settings_json.h"
#include "draft_options.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "model/hparams.h"
#include "model/prefill.h"
#include "runlog/run_log.h"
#include "sampling/sampler.h"

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
                                  {"top-logprobs", 0, "N",
                                   "report each token's log-probability under the model's raw "
                                   "logits and the N (0..20) most likely tokens per step: in "
                                   "--json as \"logprobs\", else a table on stderr"},
                                  {"db", 0, "PATH",
                                   "run log database (default: "
                                   "~/.local/share/inference-workbench/runlog.sqlite)"},
                                  {"no-log", 0, "", "do not write this response to the run log"},
                                  {"no-text", 0, "",
                                   "log the response without its prompt and output text "
                                   "(token counts, hashes and timings only)"},
                                  {"profile", 0, "",
                                   "print per-op GPU times (op, calls, GPU ms, share) to stderr "
                                   "(Vulkan)"},
                              }),
                       context_options()),
                sampling_options()),
            chat_turn_options()),
        concat(chat_template_options(), draft_options())),
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

nlohmann::json num_or_null(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// --json's "logprobs": [n_out] {id, text, logprob, top: [{id, text, logprob}]}
// (text: the token's piece, special tokens spelled out; a -inf logprob is null).
nlohmann::json logprobs_json(const std::vector<core::TokenLogprobs>& steps,
                             const tokenizer::Vocab& vocab) {
    nlohmann::json out = nlohmann::json::array();
    for (const core::TokenLogprobs& s : steps) {
        nlohmann::json top = nlohmann::json::array();
        for (const core::TokenLogprob& t : s.top)
            top.push_back({{"id", t.token},
                           {"text", vocab.token_to_piece(t.token, /*special=*/true)},
                           {"logprob", core::as_decimal(t.logprob)}});
        out.push_back({{"id", s.token},
                       {"text", vocab.token_to_piece(s.token, /*special=*/true)},
                       {"logprob", core::as_decimal(s.logprob)},
                       {"top", std::move(top)}});
    }
    return out;
}

// The plain output's table (stderr): one line per token, its log-probability,
// then the step's top tokens as id:logprob.
void print_logprobs_table(const std::vector<core::TokenLogprobs>& steps,
                          const tokenizer::Vocab& vocab) {
    std::fprintf(stderr, "\n%5s %7s %10s  %-16s %s\n", "#", "id", "logprob", "piece", "top");
    for (size_t i = 0; i < steps.size(); ++i) {
        const core::TokenLogprobs& s = steps[i];
        std::string top;
        for (const core::TokenLogprob& t : s.top) {
            char cell[48];
            std::snprintf(cell, sizeof cell, "%s%d:%.4f", top.empty() ? "" : " ", t.token,
                          static_cast<double>(t.logprob));
            top += cell;
        }
        const nlohmann::json piece = vocab.token_to_piece(s.token, /*special=*/true);
        std::fprintf(stderr, "%5zu %7d %10.4f  %-16s %s\n", i, s.token,
                     static_cast<double>(s.logprob),
                     piece.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str(),
                     top.c_str());
    }
}

// The command line's request: the prompt or chat turns, limits, sampling,
// the draft, the model file.
struct GenerateArgs {
    bool chat_mode = false;
    std::optional<std::string> prompt;  ///< -p; with --chat, the rendered prompt once prepared
    std::vector<chat::Message> turns;   ///< --chat's turns, in order
    int64_t n_predict = 128;
    bool json = false;
    int32_t top_logprobs = -1;  ///< -1: not asked
    sampling::SamplingParams sp;
    std::string draft_path;
    scheduler::SpeculativeParams spec;
    std::string path;  ///< the model file
};

GenerateArgs parse_generate_args(const ParsedArgs& args) {
    GenerateArgs g;
    g.chat_mode = args.has("chat");
    g.prompt = args.get("prompt");
    if (!g.prompt && !g.chat_mode)
        throw UsageError("generate: -p PROMPT is required (or --chat with --user)");
    if (!g.chat_mode && (args.has("user") || args.has("assistant") || args.has("system") ||
                         args.has("chat-format") || args.has("chat-var"))) {
        throw UsageError(
            "generate: --system/--user/--assistant/--chat-format/--chat-var need --chat");
    }
    if (g.chat_mode) {
        if (g.prompt) {
            // -p is the final user turn after any given on the command line.
            for (const auto& [name, value] : args.in_order()) {
                if (name == "system")
                    g.turns.insert(g.turns.begin(), chat::Message{"system", value});
                if (name == "user" || name == "assistant") g.turns.push_back({name, value});
            }
            g.turns.push_back({"user", *g.prompt});
        } else {
            g.turns = chat_turns_from_args(args);
        }
    }
    g.n_predict = args.get_int("n-predict", 128, 0, int64_t{1} << 24);
    g.json = args.has("json");
    g.top_logprobs =
        args.has("top-logprobs")
            ? static_cast<int32_t>(args.get_int("top-logprobs", 0, 0, core::kMaxTopLogprobs))
            : -1;
    g.sp = sampling_from_args(args);
    g.spec = draft_from_args(args, &g.draft_path);
    g.path = resolve_model_path(args.get("model"));
    return g;
}

// One sequence's session on the model, with the prompt in ubatches of up to
// 512 tokens (one 4000-token forward pass ran for minutes), then one token
// per pass: for prompts up to 512 tokens, the ubatches llama.cpp's golden
// runs used.
std::unique_ptr<core::EngineSession> open_session(const ParsedArgs& args, const GenerateArgs& g) {
    model::LoadOptions lo;
    {
        const gguf::File f = gguf::File::open(g.path);
        lo = load_options_from_args(args, model::HParams::from_gguf(f).n_ctx_train);
    }
    lo.context.n_seq_max = 1;
    core::SessionOptions so;
    so.load = lo;
    so.prefill_chunk = std::min(lo.context.n_ctx, model::kDefaultUbatch);
    so.step_tokens = so.prefill_chunk;
    so.limits.max_queue = 1;
    so.draft_model = g.draft_path;
    return core::EngineSession::open(g.path, so);
}

// The request the command line asks for. An unknown --chat-format fails
// here, before a run.
core::GenerationRequest make_request(const ParsedArgs& args, const GenerateArgs& g,
                                     core::EngineSession& session) {
    core::GenerationRequest req;
    if (g.chat_mode) {
        req.messages = g.turns;
        req.chat_vars = chat_vars_from_args(args);
        req.chat_template = args.get("chat-format").value_or("model");
        session.chat_template(req.chat_template);
    } else {
        req.prompt = *g.prompt;
    }
    req.max_tokens = static_cast<int32_t>(std::max<int64_t>(g.n_predict, 1));
    req.sampling = g.sp;
    req.seed = {core::SeedPolicy::Fixed, g.sp.seed, 0};
    req.top_logprobs = g.top_logprobs;
    req.client_id = "cli";
    req.label = "generate";
    req.speculative = g.spec;
    return req;
}

// -n 0: the prompt's ids only (e.g. to check a chat rendering's tokens), no
// request, nothing logged.
void print_prompt_only(const GenerateArgs& g, const core::PreparedRequest& prepared) {
    if (!prepared.ok()) throw std::runtime_error(prepared.problem());
    const std::vector<int32_t>& ids = prepared.prompt_tokens();
    if (g.json) {
        nlohmann::json j;
        j["model"] = g.path;
        j["prompt"] = *g.prompt;
        j["prompt_token_ids"] = ids;
        j["generated_token_ids"] = nlohmann::json::array();
        j["text"] = "";
        j["finish_reason"] = "length";
        std::printf("%s\n",
                    j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::fprintf(stderr, "prompt tokens:    %zu (nothing generated: -n 0)\n", ids.size());
    }
}

// Submits `prepared` and streams its pieces to stdout (unless --json) until
// it finishes; Ctrl-C / SIGTERM cancel it. The session writes the run-log
// row when the request starts and updates its text about once a second
// (core::ResponseLogger), so a kill -9 leaves an "interrupted" row with the
// text so far. Returns the finished request; *stop_signal: the signal that
// stopped it, 0 for none.
std::shared_ptr<const core::FinishedRequest> stream(core::EngineSession& session,
                                                    const core::PreparedRequest& prepared,
                                                    bool json, int* stop_signal) {
    core::Inbox<core::RequestEvent> inbox;
    g_stop_signal.store(0);
    g_first_signal_ns.store(0);
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    const core::RequestHandle handle =
        session.submit(prepared, [&inbox](const core::RequestEvent& e) {
            if (e.type != core::RequestEvent::Type::Queued) inbox.push(e);
        });
    std::shared_ptr<const core::FinishedRequest> fin;
    bool cancelling = false;
    std::vector<core::RequestEvent> events;
    while (!fin) {
        if (g_stop_signal.load() != 0 && !cancelling) {
            const int sig = g_stop_signal.load();
            handle.cancel(std::string("cancelled by ") +
                          (sig == SIGTERM ? "SIGTERM" : "Ctrl-C (SIGINT)"));
            cancelling = true;
        }
        events.clear();
        inbox.wait_pop(events, std::chrono::milliseconds(100));
        for (const core::RequestEvent& e : events) {
            if (!e.piece.empty() && !json) {
                std::fwrite(e.piece.data(), 1, e.piece.size(), stdout);
                std::fflush(stdout);
            }
            if (e.type == core::RequestEvent::Type::Finished) fin = e.result;
        }
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    *stop_signal = g_stop_signal.load();
    return fin;
}

// --json: one object with the ids, text, settings and timings.
void print_json(const GenerateArgs& g, const core::FinishedRequest& r, core::EngineSession& session,
                double load_ms) {
    const sampling::SamplingParams& sp = g.sp;
    nlohmann::json j;
    j["model"] = g.path;
    j["backend"] = session.model().backend_name();
    j["prompt"] = *g.prompt;
    j["prompt_token_ids"] = r.prompt_tokens;
    if (g.chat_mode) {
        nlohmann::json msgs = nlohmann::json::array();
        for (const chat::Message& t : g.turns)
            msgs.push_back({{"role", t.role}, {"content", t.content}});
        j["chat"] = core::prompt_format_json(core::PromptMode::Chat, r.prompt_facts);
        j["chat"]["messages"] = msgs;
    }
    j["generated_token_ids"] = r.output_tokens;
    j["text"] = r.output;
    if (g.top_logprobs >= 0) j["logprobs"] = logprobs_json(r.logprobs, session.vocab());
    j["finish_reason"] = r.finish_reason;
    j["n_ctx"] = session.facts().n_ctx;
    j["kv_type"] = session.facts().kv_type;
    j["sampling"] = {{"temperature", core::as_decimal(sp.temperature)},
                     {"top_k", sp.top_k},
                     {"top_p", core::as_decimal(sp.top_p)},
                     {"min_p", core::as_decimal(sp.min_p)},
                     {"repeat_penalty", core::as_decimal(sp.repeat_penalty)},
                     {"repeat_last_n", sp.repeat_last_n},
                     {"seed", r.seed}};
    if (!r.speculative.drafter.empty())
        j["speculative"] = core::speculative_stats_json(r.speculative);
    // One generated token means no decode step: no rate, no TPOT.
    j["timings"] = {{"load_ms", load_ms},
                    {"queue_wait_ms", num_or_null(r.queue_wait_ms())},
                    {"ttft_ms", r.ttft_ms().value_or(0.0)},
                    {"prefill_ms", r.prefill_ms().value_or(0.0)},
                    {"prefill_tokens_per_s", num_or_null(r.prefill_tps())},
                    {"decode_ms", r.decode_ms().value_or(0.0)},
                    {"decode_tokens_per_s", num_or_null(r.decode_tps())},
                    {"tpot_ms", num_or_null(r.tpot_ms())},
                    {"total_ms", num_or_null(r.e2e_ms())}};
    // The detokenizer only emits valid UTF-8, but the prompt is user input.
    const std::string out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", out.c_str());
}

// The plain output's figures after the streamed text (stderr).
void print_summary(const GenerateArgs& g, const core::FinishedRequest& r,
                   core::EngineSession& session) {
    std::printf("\n");
    std::fflush(stdout);
    const std::optional<double> decode_tps = r.decode_tps();
    // The first token comes from prefill; with only that one there was no
    // decode step, so there is no decode rate or TPOT to show.
    char decode_line[128];
    if (r.output_tokens.size() > 1 && decode_tps) {
        std::snprintf(decode_line, sizeof decode_line, "%.1f tokens/s (%.2f ms, TPOT %.3f ms)",
                      *decode_tps, r.decode_ms().value_or(0.0), r.tpot_ms().value_or(0.0));
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
                 r.prompt_tokens.size(), r.output_tokens.size(), r.finish_reason.c_str(),
                 r.ttft_ms().value_or(0.0), r.prefill_tps().value_or(0.0),
                 r.prefill_ms().value_or(0.0), decode_line, session.model().backend_name().c_str(),
                 static_cast<unsigned long long>(r.seed));
    std::fputs(describe_speculation(r.speculative, r.output_tokens.size()).c_str(), stderr);
    if (g.top_logprobs >= 0) print_logprobs_table(r.logprobs, session.vocab());
}

}  // namespace

int cmd_generate(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    GenerateArgs g = parse_generate_args(args);
    // Run log, opened strictly before any work: a bad database file is
    // reported (and nothing generated) rather than silently not logged.
    std::shared_ptr<runlog::RunLog> log;
    if (!args.has("no-log")) log = open_run_log(args);

    const Clock::time_point t_load = Clock::now();
    std::unique_ptr<core::EngineSession> session = open_session(args, g);
    print_warnings(session->vocab().load_warnings());
    const uint32_t n_ctx_train = session->model().hparams().n_ctx_train;
    warn_context_past_n_ctx_train(session->facts().n_ctx, session->facts().n_parallel, n_ctx_train);
    const double load_ms = ms_between(t_load, Clock::now());
    model::Model& m = session->model();
    if (args.has("profile")) {  // per-op device timestamps (the Vulkan backend)
        if (!m.can_profile()) throw UsageError("generate: --profile needs --backend vulkan");
        m.set_profiling(true);
    }

    core::GenerationRequest req = make_request(args, g, *session);
    if (log && !g.draft_path.empty()) {
        // The draft's version in the run log, beside the target's.
        req.log_settings["draft_model_version_id"] = log->ensure_model_version(g.draft_path);
    }
    // What the session will run, rendered once: shown before it runs (and
    // in --json), then submitted as it is.
    core::PreparedRequest prepared = session->prepare(req);
    if (g.chat_mode) {
        if (!prepared.template_note().empty())
            std::fprintf(stderr, "note: %s\n", prepared.template_note().c_str());
        if (!prepared.ok()) throw std::runtime_error(prepared.problem());
        if (!g.json) {
            const std::string facts =
                describe_chat_prompt(prepared.prompt_facts(), prepared.prompt_tokens().size());
            std::fprintf(stderr, "%s\n", facts.c_str());
        }
        g.prompt = prepared.prompt();
    }
    // A prompt longer than the training context is said before it runs;
    // one that passes it while generating, after (one warning either way).
    const bool warned_past = prepared.ok() && prepared.prompt_past_n_ctx_train();
    if (warned_past)
        std::fprintf(
            stderr, "warning: the prompt's %s\n",
            core::past_n_ctx_train_warning(prepared.prompt_tokens().size(), n_ctx_train).c_str());
    if (g.n_predict == 0) {
        print_prompt_only(g, prepared);
        return 0;
    }
    std::shared_ptr<core::ResponseLogger> logger;
    if (log) {
        // The run's settings are the response's (one request); the session
        // writes its row as it runs.
        logger = std::make_shared<core::ResponseLogger>(log);
        const core::SessionRun run = core::begin_session_run(
            logger, *session, "generate", "generate",
            core::settings_json(req, g.sp.seed, session->facts()), args.has("no-text"));
        req.run_id = run.run_id;
        prepared.set_run_id(run.run_id);
        if (!run.load_warning.empty())
            std::fprintf(stderr, "warning: the model's cold start is not logged: %s\n",
                         run.load_warning.c_str());
    }

    int stop_signal = 0;
    const std::shared_ptr<const core::FinishedRequest> fin =
        stream(*session, prepared, g.json, &stop_signal);
    const core::FinishedRequest& r = *fin;  // logged by the session before it got here
    std::string not_logged;
    if (logger) {
        // Not logged after every retry: said after the output, exit status 1.
        if (logger->flush() > 0) {
            not_logged = logger->last_error();
        } else {
            try {
                logger->end_run(req.run_id);
            } catch (const std::exception& e) {
                not_logged = e.what();
            }
        }
    }
    if (!r.completed() && r.finish_reason != "cancelled") {
        // Refused (e.g. a prompt longer than -c) or failed: logged, then reported.
        throw std::runtime_error(r.message + (r.refused ? " (raise -c)" : ""));
    }
    if (g.json) {
        print_json(g, r, *session, load_ms);
    } else {
        print_summary(g, r, *session);
    }
    // The output went past the training context (the prompt had not):
    // said after the figures, which show where it ended.
    if (r.past_n_ctx_train && !warned_past)
        std::fprintf(stderr, "warning: %s\n",
                     core::past_n_ctx_train_warning(r.prompt_tokens.size() + r.output_tokens.size(),
                                                    r.n_ctx_train)
                         .c_str());
    if (args.has("profile")) {
        const model::Profile& prof = m.profile();
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
    return r.finish_reason == "cancelled" && stop_signal != 0 ? 128 + stop_signal : 0;
}

}  // namespace wb::cli
