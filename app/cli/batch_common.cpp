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
        {"ctx-size", 'c', "N",
         "context: KV pool size in tokens, shared by the running requests; one request may use "
         "all of it (default: training context, at most 4096, times --concurrency)"},
        {"kv-type", 0, "TYPE", "KV cache element type f32|f16 (default: f32)"},
    };
}

BatchModel load_batch_model(const std::string& path, const ParsedArgs& args, uint32_t n_parallel,
                            uint32_t default_per_request) {
    BatchModel bm;
    bm.path = path;
    model::LoadOptions opts;
    {
        const gguf::File file = gguf::File::open(path);
        bm.vocab = tokenizer::Vocab::from_gguf(file);
        opts = load_options_from_args(args, model::HParams::from_gguf(file).n_ctx_train);
    }
    const uint32_t slots = std::max<uint32_t>(n_parallel, 1);
    if (!args.get("ctx-size")) {
        // Room for every running request's default context at once.
        if (default_per_request != 0) opts.context.n_ctx = default_per_request;
        const uint64_t cells = uint64_t{opts.context.n_ctx} * slots;
        opts.context.n_ctx = static_cast<uint32_t>(std::min<uint64_t>(cells, uint64_t{1} << 24));
    }
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

}  // namespace wb::cli
