// `workbench-cli bench --draft ngram|FILE`: decode speed with and without
// speculative decoding, measured in the same run on the same prompt:
// -r rounds, each one plain greedy request then one speculative request
// (alternating, so load drifts hit both alike), through the one request
// path (EngineSession, one slot). Prints each mode's decode tokens/s
// (FinishedRequest::decode_tps: tokens after the first / their time),
// median and spread, the speedup ratio of the medians, and the
// speculative run's acceptance rate and tokens per target pass. Greedy
// (temperature 0), so both modes produce the same tokens; a round whose
// outputs differ is reported.

#include <cstdio>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "bench_stats.h"
#include "common_options.h"
#include "core/engine_session.h"
#include "draft_options.h"
#include "gguf/gguf.h"
#include "model/hparams.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "bench",
    "",
    "Measure decode speed with and without speculative decoding.",
    "With --draft ngram|FILE, runs -r rounds of the same greedy request (the text of\n"
    "--prompt-file, or --prompt), each round once plainly and once with the draft,\n"
    "and prints decode tokens/s of both (median, stdev, min, max), the speedup of\n"
    "the medians, the acceptance rate and the tokens per target pass. One request\n"
    "runs at a time here; under load each request speculates inside the mixed\n"
    "batches (batch, serve).",
    concat(concat(concat(model_options(), context_options()), draft_options()),
           {
               {"prompt", 'p', "TEXT", "prompt text"},
               {"prompt-file", 'f', "PATH", "prompt text from a file"},
               {"n-predict", 'n', "N", "tokens to generate per request (default 128)"},
               {"repetitions", 'r', "N", "rounds (default 3)"},
               {"json", 0, "", "print one JSON object instead of the table"},
           }),
    0,
    0,
};

}  // namespace

int cmd_bench_speculative(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    std::string draft_path;
    const scheduler::SpeculativeParams spec = draft_from_args(args, &draft_path);
    if (spec.kind == scheduler::SpeculativeParams::Kind::None)
        throw UsageError("bench: this mode needs --draft ngram|FILE");
    std::string prompt;
    if (const auto f = args.get("prompt-file")) {
        std::ifstream in(*f, std::ios::binary);
        if (!in) throw UsageError("bench: cannot read --prompt-file '" + *f + "'");
        prompt.assign(std::istreambuf_iterator<char>(in), {});
    } else if (const auto p = args.get("prompt")) {
        prompt = *p;
    } else {
        throw UsageError("bench --draft: give --prompt TEXT or --prompt-file PATH");
    }
    const auto n_predict = static_cast<int32_t>(args.get_int("n-predict", 128, 2, 1 << 20));
    const auto rounds = static_cast<int>(args.get_int("repetitions", 3, 1, 1000));
    const std::string path = resolve_model_path(args.get("model"));
    core::SessionOptions so;
    {
        const gguf::File f = gguf::File::open(path);
        so.load = load_options_from_args(args, model::HParams::from_gguf(f).n_ctx_train);
    }
    so.load.context.n_seq_max = 1;
    so.prefill_chunk = std::min<uint32_t>(so.load.context.n_ctx, 512);
    so.step_tokens = so.prefill_chunk;
    so.limits.max_queue = 1;
    so.draft_model = draft_path;
    auto session = core::EngineSession::open(path, so);

    std::vector<double> plain_tps, spec_tps;
    scheduler::SpeculativeStats total;
    int64_t spec_tokens = 0;
    int mismatches = 0;
    for (int round = 0; round < rounds; ++round) {
        std::vector<int32_t> outputs[2];
        for (int mode = 0; mode < 2; ++mode) {
            core::GenerationRequest req;
            req.prompt = prompt;
            req.max_tokens = n_predict;
            req.sampling.temperature = 0.0f;
            req.client_id = "bench";
            req.label = mode == 0 ? "plain" : "speculative";
            if (mode == 1) req.speculative = spec;
            // One request at a time: submit, wait for its Finished event.
            std::promise<std::shared_ptr<const core::FinishedRequest>> done;
            auto fut = done.get_future();
            session->submit(req, [&done](const core::RequestEvent& e) {
                if (e.type == core::RequestEvent::Type::Finished) done.set_value(e.result);
            });
            const auto fin = fut.get();
            if (!fin->completed())
                throw std::runtime_error("bench: request failed: " + fin->message);
            const double tps = fin->decode_tps().value_or(0.0);
            (mode == 0 ? plain_tps : spec_tps).push_back(tps);
            outputs[mode] = fin->output_tokens;
            if (mode == 1) {
                const auto& s = fin->speculative;
                total.drafter = s.drafter;
                total.target_passes += s.target_passes;
                total.verify_passes += s.verify_passes;
                total.drafted += s.drafted;
                total.accepted += s.accepted;
                total.draft_ms += s.draft_ms;
                total.verify_ms += s.verify_ms;
                spec_tokens += static_cast<int64_t>(fin->output_tokens.size()) - 1;
            }
        }
        if (outputs[0] != outputs[1]) ++mismatches;
    }
    const RepeatStats p = repeat_stats(plain_tps), s = repeat_stats(spec_tps);
    const double speedup = p.median > 0 ? s.median / p.median : 0.0;
    const double per_pass =
        total.target_passes > 0 ? double(spec_tokens) / total.target_passes : 0.0;
    if (args.has("json")) {
        nlohmann::json j = {
            {"model", path},
            {"draft", total.drafter},
            {"rounds", rounds},
            {"n_predict", n_predict},
            {"plain_decode_tps", plain_tps},
            {"speculative_decode_tps", spec_tps},
            {"speedup", speedup},
            {"acceptance_rate", total.acceptance_rate()},
            {"tokens_per_target_pass", per_pass},
            {"draft_ms", total.draft_ms},
            {"verify_ms", total.verify_ms},
            {"output_mismatches", mismatches},
        };
        std::printf("%s\n", j.dump().c_str());
    } else {
        std::printf(
            "decode tokens/s over %d rounds (plain, then speculative, alternating):\n"
            "  plain        median %.1f  stdev %.1f  min %.1f  max %.1f\n"
            "  speculative  median %.1f  stdev %.1f  min %.1f  max %.1f\n"
            "speedup (median / median): %.2fx\n"
            "draft %s: acceptance %.1f%%, %.2f tokens per target pass, draft %.1f ms, "
            "verify %.1f ms\n",
            rounds, p.median, p.stdev, p.min, p.max, s.median, s.stdev, s.min, s.max, speedup,
            total.drafter.c_str(), 100.0 * total.acceptance_rate(), per_pass, total.draft_ms,
            total.verify_ms);
        if (mismatches > 0)
            std::printf("warning: %d rounds gave different tokens with and without the draft\n",
                        mismatches);
    }
    return mismatches > 0 ? 1 : 0;
}

}  // namespace wb::cli
