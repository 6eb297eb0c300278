// `workbench-cli bench --concurrency 1,4,8,16,32`: serving throughput and
// latency of the continuous-batching scheduler at several concurrency
// levels (the shape of vLLM's benchmark_serving with a burst of requests).
//
// For each level N the same kind of load runs: R requests (default 4N,
// at least 8), each a distinct prompt of -p tokens generating exactly -n
// tokens (greedy, EOS ignored), all submitted at once to one EngineSession
// whose admission limit lets N run at a time (the slots are the largest
// level's, loaded once; the limit changes between levels, no reload). Reported per level, over
// the wall time from submission to the last finish: input tokens/s, output tokens/s and
// requests/s (vLLM's input_throughput, output_throughput, request_throughput; docs/metrics.md);
// p50/p95/p99 of queue wait, p50/p99 of TTFT (from submission) and ITL, and the speed-up of
// output tokens/s over the first level.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "args.h"
#include "batch_common.h"
#include "bench_stats.h"
#include "common_options.h"
#include "core/engine_session.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "bench",
    "",
    "Measure serving throughput and latency at several concurrency levels.",
    "With --concurrency LIST, runs for each level N a burst of --requests\n"
    "requests (default 4N, at least 8): distinct prompts of -p tokens, each\n"
    "generating exactly -n tokens (greedy, EOS ignored), all submitted at once\n"
    "to the continuous-batching scheduler with N slots. Prints per level, over\n"
    "the wall time from submission to the last finish, input tokens/s (prompt\n"
    "tokens computed), output tokens/s and requests/s (vLLM's input_throughput,\n"
    "output_throughput, request_throughput), p50/p95/p99 of queue wait,\n"
    "p50/p99 of TTFT (from submission, as vLLM) and of inter-token latency, and\n"
    "the speed-up of output tokens/s over the first level. Percentiles: numpy\n"
    "'linear'. --json: the same per level, every field of docs/metrics.md.",
    concat(concat(model_options(), batch_context_options()),
           {
               {"concurrency", 0, "LIST", "comma-separated levels, e.g. 1,4,8,16,32"},
               {"n-prompt", 'p', "N", "prompt tokens per request (default: 32)"},
               {"n-gen", 'n', "N", "output tokens per request (default: 64)"},
               {"requests", 0, "R", "requests per level (default: max(8, 4 * level))"},
               {"chunk", 0, "N", "prefill chunk per request and step (default: 64)"},
               {"step-tokens", 0, "N", "token budget of one ubatch (default: max(256, level))"},
               {"json", 0, "", "print one JSON object instead of the table"},
           }),
    0,
    0,
};

std::vector<uint32_t> parse_levels(const std::string& text) {
    std::vector<uint32_t> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        size_t used = 0;
        long v = 0;
        try {
            v = std::stol(item, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != item.size() || item.empty() || v < 1 || v > 4096) {
            throw UsageError("--concurrency: '" + item + "' is not an integer in [1, 4096]");
        }
        out.push_back(static_cast<uint32_t>(v));
    }
    if (out.empty()) throw UsageError("--concurrency: empty list");
    return out;
}

/// `n` prompt tokens: BOS then text tokens taken from a story at offset
/// `k`, so no two requests share a prompt.
std::vector<int32_t> make_prompt(const tokenizer::Vocab& vocab, size_t n, size_t k) {
    static const char* kText =
        "Once upon a time there was a little girl named Lily. She liked to play in the park "
        "with her dog. One day she found a big red ball under a tree. She ran home to show her "
        "mom. Her mom smiled and said they could play together after lunch. ";
    std::string text;
    while (true) {
        text += kText;
        std::vector<int32_t> ids = vocab.tokenize(text, false);
        if (ids.size() >= n + k + 1) {
            std::vector<int32_t> p;
            if (vocab.bos() >= 0) p.push_back(vocab.bos());
            for (size_t i = k; p.size() < n; ++i) p.push_back(ids[i]);
            return p;
        }
    }
}

struct LevelResult {
    uint32_t concurrency = 0;
    size_t requests = 0;
    metrics::WindowStats run;
    std::vector<std::pair<std::string, uint64_t>> reasons;
};

}  // namespace

int cmd_bench_concurrency(const std::vector<std::string>& argv) {
    ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const std::optional<std::string> list = args.get("concurrency");
    if (!list) throw UsageError("bench: --concurrency LIST is required for this mode");
    const std::vector<uint32_t> levels = parse_levels(*list);
    const auto n_prompt = static_cast<size_t>(args.get_int("n-prompt", 32, 1, 1 << 16));
    const auto n_gen = static_cast<int32_t>(args.get_int("n-gen", 64, 1, 1 << 16));
    const auto chunk = static_cast<uint32_t>(args.get_int("chunk", 64, 1, 1 << 16));
    const uint32_t max_level = *std::max_element(levels.begin(), levels.end());
    // Checked before any level runs, so a bad value never costs a finished level.
    if (auto st = args.get("step-tokens")) {
        const int64_t v = args.get_int("step-tokens", 0, 1, 1 << 20);
        if (v < max_level) {
            throw UsageError("--step-tokens " + *st + " is smaller than the largest level " +
                             std::to_string(max_level) +
                             ": one ubatch must hold one decode token of every slot");
        }
    }
    // By default the pool holds every running request's prompt and output
    // (8 spare cells each), so no level waits for blocks or preempts.
    const auto per_request = static_cast<uint32_t>(n_prompt + static_cast<size_t>(n_gen) + 8);

    // One request must fit the context, or the levels would measure refused
    // or cut-short requests (a prompt longer than the context is refused).
    if (args.get("ctx-size")) {
        const int64_t c = args.get_int("ctx-size", 0, 1, int64_t{1} << 24);
        // The last output token is sampled but never stored: p + n - 1 cells.
        const int64_t need = static_cast<int64_t>(n_prompt) + n_gen - 1;
        if (c < need) {
            throw UsageError("-c " + std::to_string(c) + " cannot hold one request: -p " +
                             std::to_string(n_prompt) + " prompt + -n " + std::to_string(n_gen) +
                             " output tokens need " + std::to_string(need) + " KV cells; use -c " +
                             std::to_string(need) + " or more (" +
                             std::to_string(need * max_level) + " for " +
                             std::to_string(max_level) +
                             " requests at once without preemption), or leave -c out");
        }
    }
    const std::string model_path = resolve_model_path(args.get("model"));
    core::SessionOptions so = batch_session_options(model_path, args, max_level, per_request);
    so.prefill_chunk = chunk;
    so.step_tokens = static_cast<uint32_t>(
        args.get_int("step-tokens", std::max<int64_t>(256, max_level), max_level, 1 << 20));
    std::unique_ptr<core::EngineSession> session = core::EngineSession::open(model_path, so);
    const tokenizer::Vocab& vocab = session->vocab();
    const bool json = args.has("json");
    if (!json) {
        std::printf("model %s, backend %s, %zu prompt + %d output tokens per request\n",
                    model_path.c_str(), session->model().backend_name().c_str(), n_prompt, n_gen);
        std::fflush(stdout);
    }
    auto greedy = [&](std::vector<int32_t> prompt, int32_t max_tokens, size_t i) {
        core::GenerationRequest r;
        r.label = std::to_string(i);
        r.prompt_tokens = std::move(prompt);
        r.max_tokens = max_tokens;
        r.ignore_eos = true;
        r.sampling.temperature = 0.0f;
        r.client_id = "bench";
        return r;
    };

    // Warm-up: one short request, so one-off costs (pipeline creation,
    // first-touch allocations) are not charged to the first level.
    {
        scheduler::AdmissionLimits lim = session->admission();
        lim.max_running = 1;
        session->set_admission(lim);
        session->submit(greedy(make_prompt(vocab, std::min<size_t>(n_prompt, 8), 0), 2, 0), {});
        session->wait_idle(std::chrono::minutes(10));
    }

    std::vector<LevelResult> results;
    for (uint32_t level : levels) {
        // Each level starts from an empty prefix cache: the same prompts ran
        // in the level before (and the warm-up), and hits would flatter it.
        // The session is idle here (wait_idle below), so no request holds KV.
        session->model().kv_cells().clear();
        const auto n_req = static_cast<size_t>(
            args.get_int("requests", std::max<int64_t>(8, 4 * int64_t{level}), 1, 1 << 20));
        scheduler::AdmissionLimits lim = session->admission();
        lim.max_running = level;  // N at a time; the rest wait
        lim.max_queue = static_cast<uint32_t>(n_req);
        session->set_admission(lim);
        session->reset_metrics();  // this level's figures only
        // The first request that ends otherwise than stop/length says why.
        std::mutex why_mu;
        std::string why;
        const core::EventSink note_other_finish = [&](const core::RequestEvent& e) {
            if (e.type != core::RequestEvent::Type::Finished || !e.result || e.result->completed())
                return;
            std::lock_guard lock(why_mu);
            if (why.empty()) why = e.result->finish_reason + ": " + e.result->message;
        };
        for (size_t i = 0; i < n_req; ++i) {
            session->submit(greedy(make_prompt(vocab, n_prompt, i % 64), n_gen, i),
                            note_other_finish);
        }
        session->wait_idle(std::chrono::hours(24));
        const metrics::MetricsSnapshot s =
            session->metrics().snapshot(session->metrics().last_sample_ms(), 60000);
        results.push_back({level, n_req, s.run, s.finish_reasons});
        if (!json) {
            if (results.size() == 1) std::fputs(concurrency_table_header().c_str(), stdout);
            std::fputs(
                concurrency_table_row(level, n_req, s.run, results.front().run.output_tokens_per_s)
                    .c_str(),
                stdout);
            std::fflush(stdout);
        }
        if (s.run.requests_completed != n_req) {
            throw std::runtime_error("only " + std::to_string(s.run.requests_completed) + " of " +
                                     std::to_string(n_req) + " requests completed at concurrency " +
                                     std::to_string(level) + " (first other finish: " + why + ")");
        }
    }
    if (!json) {
        std::printf(
            "latencies in ms; wait = queue wait (submission to admission); TTFT from submission;\n"
            "over the run (wall time): in tok/s = prompt tokens computed / wall, out tok/s = all\n"
            "output tokens / wall, req/s = completed requests / wall (docs/metrics.md)\n");
        return 0;
    }
    nlohmann::json j;
    j["model"] = model_path;
    j["backend"] = session->model().backend_name();
    j["n_prompt"] = n_prompt;
    j["n_gen"] = n_gen;
    j["levels"] = nlohmann::json::array();
    for (const LevelResult& r : results) {
        nlohmann::json l = window_json(r.run);
        l["concurrency"] = r.concurrency;
        l["requests"] = r.requests;
        l["speedup_output_throughput"] =
            r.run.output_tokens_per_s / results.front().run.output_tokens_per_s;
        j["levels"].push_back(l);
    }
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
}

}  // namespace wb::cli
