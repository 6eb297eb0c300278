#include "batch_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common_options.h"
#include "gguf/gguf.h"
#include "model/load.h"

namespace wb::cli {

std::vector<OptionSpec> batch_context_options() {
    return {
        {"backend", 0, "NAME",
         std::string("compute backend cpu|vulkan (default: ") + kDefaultBackend + ")"},
        {"device", 0, "SEL", "Vulkan device index or name substring (default: first discrete GPU)"},
        {"ctx-size", 'c', "N", "KV cells per slot (default: training context, at most 4096)"},
        {"kv-type", 0, "TYPE", "KV cache element type f32|f16 (default: f32)"},
    };
}

BatchModel load_batch_model(const std::string& path, const ParsedArgs& args, uint32_t n_parallel,
                            uint32_t default_per_slot) {
    BatchModel bm;
    bm.path = path;
    model::LoadOptions opts;
    {
        const gguf::File file = gguf::File::open(path);
        bm.vocab = tokenizer::Vocab::from_gguf(file);
        opts = load_options_from_args(args, model::HParams::from_gguf(file).n_ctx_train);
    }
    if (default_per_slot != 0 && !args.get("ctx-size")) opts.context.n_ctx = default_per_slot;
    const uint32_t slots = std::max<uint32_t>(n_parallel, 1);
    const uint64_t cells = uint64_t{opts.context.n_ctx} * slots;
    if (cells > (uint64_t{1} << 24)) {
        throw UsageError("-c " + std::to_string(opts.context.n_ctx) + " per slot times " +
                         std::to_string(slots) + " slots is more than 16777216 KV cells");
    }
    opts.context.n_ctx = static_cast<uint32_t>(cells);
    opts.context.n_seq_max = slots;
    bm.model = model::load_model(path, opts);
    return bm;
}

nlohmann::json sampling_json(const sampling::SamplingParams& p) {
    return {{"temperature", p.temperature},
            {"top_k", p.top_k},
            {"top_p", p.top_p},
            {"min_p", p.min_p},
            {"repeat_penalty", p.repeat_penalty},
            {"repeat_last_n", p.repeat_last_n},
            {"seed", p.seed}};
}

nlohmann::json summary_json(const metrics::Summary& s) {
    auto v = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
    return {{"count", s.count}, {"mean", v(s.mean)}, {"p50", v(s.p50)}, {"p90", v(s.p90)},
            {"p95", v(s.p95)},  {"p99", v(s.p99)},   {"max", v(s.max)}};
}

nlohmann::json window_json(const metrics::WindowStats& w) {
    auto v = [](double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); };
    return {{"wall_ms", w.end_ms - w.begin_ms},
            {"queue_wait_ms", summary_json(w.queue_wait_ms)},
            {"ttft_ms", summary_json(w.ttft_ms)},
            {"itl_ms", summary_json(w.itl_ms)},
            {"tpot_ms", summary_json(w.tpot_ms)},
            {"e2e_ms", summary_json(w.e2e_ms)},
            {"prompt_tokens", summary_json(w.prompt_tokens)},
            {"output_tokens", summary_json(w.generated_tokens)},
            {"requests_finished", w.requests_finished},
            {"requests_completed", w.requests_completed},
            {"steps", w.steps},
            {"prefill_tokens", w.prefill_tokens},
            {"decode_tokens", w.decode_tokens},
            {"prefill_tokens_per_s", v(w.prefill_tokens_per_s)},
            {"decode_tokens_per_s", v(w.decode_tokens_per_s)},
            {"busy_fraction", v(w.busy_fraction)}};
}

}  // namespace wb::cli
