#include "batch_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common_options.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "model/hparams.h"

namespace wb::cli {

std::vector<OptionSpec> batch_context_options() {
    return {
        {"backend", 0, "NAME",
         std::string("compute backend cpu|vulkan (") + kDefaultBackendHelp + ")"},
        {"device", 0, "SEL", "Vulkan device index or name substring (default: first discrete GPU)"},
        {"ctx-size", 'c', "N",
         "context: KV pool size in tokens, shared by the running requests; one request may use "
         "all of it (default: training context, at most 4096, times --concurrency)"},
        kv_type_option(),
    };
}

core::SessionOptions batch_session_options(const std::string& path, const ParsedArgs& args,
                                           uint32_t n_parallel, uint32_t default_per_request) {
    core::SessionOptions so;
    {
        const gguf::File file = gguf::File::open(path);
        so.load = load_options_from_args(args, model::HParams::from_gguf(file).n_ctx_train);
    }
    model::LoadOptions& opts = so.load;
    const uint32_t slots = std::max<uint32_t>(n_parallel, 1);
    if (!args.get("ctx-size")) {
        // Room for every running request's default context at once.
        if (default_per_request != 0) opts.context.n_ctx = default_per_request;
        opts.context.n_ctx = pool_for(opts.context.n_ctx, slots);
    }
    opts.context.n_seq_max = slots;
    return so;
}

}  // namespace wb::cli
