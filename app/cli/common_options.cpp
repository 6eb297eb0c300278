#include "common_options.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

#include "cost/price.h"
#include "paths.h"
#include "runlog/db_location.h"

namespace wb::cli {

std::string resolve_model_path(const std::optional<std::string>& given) {
    if (given) return *given;
    return wb::paths::default_model_path().string();
}

std::vector<OptionSpec> model_options() {
    return {{"model", 'm', "FILE", "GGUF model file (default: bundled stories260K.gguf)"}};
}

std::vector<OptionSpec> context_options() {
    return {
        {"backend", 0, "NAME",
         std::string("compute backend: cpu (threaded, quantized kernels), cpu-ref (f32 "
                     "reference), vulkan (") +
             kDefaultBackendHelp + ")"},
        {"threads", 't', "N", "threads of the cpu backend (default: physical cores)"},
        {"device", 0, "SEL", "Vulkan device index or name substring (default: first discrete GPU)"},
        {"ctx-size", 'c', "N", "KV cache size in tokens (default: training context, at most 4096)"},
        kv_type_option(),
    };
}

std::vector<OptionSpec> sampling_options() {
    return {
        {"temp", 0, "T", "temperature; 0 = greedy (default: 0.8)"},
        {"top-k", 0, "N", "keep the N most likely tokens; 0 = off (default: 40)"},
        {"top-p", 0, "P", "nucleus sampling mass; 1 = off (default: 0.95)"},
        {"min-p", 0, "P", "drop tokens below P times the best one; 0 = off (default: 0.05)"},
        {"repeat-penalty", 0, "X", "penalty for recent tokens; 1 = off (default: 1.0)"},
        {"repeat-last-n", 0, "N", "recent tokens the penalty sees; -1 = all (default: 64)"},
        {"seed", 0, "N", "random seed of the draw (default: random, reported)"},
    };
}

std::vector<OptionSpec> concat(std::vector<OptionSpec> base, const std::vector<OptionSpec>& more) {
    base.insert(base.end(), more.begin(), more.end());
    return base;
}

const model::BackendChoice& default_backend() {
    static const model::BackendChoice choice = model::detect_default_backend();
    return choice;
}

std::string default_backend_line() {
    const model::BackendChoice& c = default_backend();
    std::string s = c.backend;
    if (c.backend == "cpu") s += ", " + std::to_string(c.threads) + " threads";
    return s + " (default: " + c.reason + "; --backend picks another)";
}

model::LoadOptions load_options_from_args(const ParsedArgs& args, uint32_t n_ctx_train) {
    model::LoadOptions o;
    if (std::optional<std::string> given = args.get("backend")) {
        o.backend = *given;
    } else {
        o.backend = default_backend().backend;
    }
    if (o.backend != "cpu" && o.backend != "cpu-ref" && o.backend != "vulkan") {
        throw UsageError("--backend: '" + o.backend + "' is not cpu, cpu-ref or vulkan");
    }
    o.threads = static_cast<unsigned>(args.get_int("threads", 0, 0, 1024));
    o.device = args.get("device").value_or("");
    o.context.n_ctx = static_cast<uint32_t>(
        args.get_int("ctx-size", default_context(n_ctx_train), 1, int64_t{1} << 24));
    o.context.kv_type = kv_type_from_args(args);
    return o;
}

namespace {

// The KV types' names joined by `sep` ("f16|f32|q8_0|q4_0").
std::string kv_type_names(const char* sep) {
    std::string out;
    for (const model::KvType t : model::kv_types())
        out += (out.empty() ? "" : sep) + std::string(model::kv_type_name(t));
    return out;
}

}  // namespace

OptionSpec kv_type_option() {
    return {"kv-type", 0, "TYPE",
            "KV cache type " + kv_type_names("|") + " (llama.cpp's -ctk/-ctv; default: " +
                model::kv_type_name(model::ContextParams{}.kv_type) + ")"};
}

model::KvType kv_type_from_args(const ParsedArgs& args) {
    const std::optional<std::string> given = args.get("kv-type");
    if (!given) return model::ContextParams{}.kv_type;
    if (const std::optional<model::KvType> t = model::parse_kv_type(*given)) return *t;
    throw UsageError("--kv-type: '" + *given + "' is not one of " + kv_type_names(", "));
}

sampling::SamplingParams sampling_from_args(const ParsedArgs& args) {
    sampling::SamplingParams s;
    s.temperature = static_cast<float>(args.get_double("temp", 0.8, 0.0, 1e6));
    s.top_k =
        static_cast<int32_t>(args.get_int("top-k", 40, 0, std::numeric_limits<int32_t>::max()));
    s.top_p = static_cast<float>(args.get_double("top-p", 0.95, 0.0, 1.0));
    s.min_p = static_cast<float>(args.get_double("min-p", 0.05, 0.0, 1.0));
    s.repeat_penalty = static_cast<float>(args.get_double("repeat-penalty", 1.0, 1e-6, 1e6));
    s.repeat_last_n = static_cast<int32_t>(
        args.get_int("repeat-last-n", 64, -1, std::numeric_limits<int32_t>::max()));
    if (args.has("seed")) {
        s.seed =
            static_cast<uint64_t>(args.get_int("seed", 0, 0, std::numeric_limits<int64_t>::max()));
    } else {
        std::random_device rd;
        s.seed = (uint64_t{rd()} << 32) ^ rd();
        s.seed &= uint64_t{std::numeric_limits<int64_t>::max()};  // printable back as --seed
    }
    return s;
}

std::shared_ptr<runlog::RunLog> open_run_log(const ParsedArgs& args) {
    auto log = std::make_shared<runlog::RunLog>(runlog::RunLog::open(run_log_path(args)));
    print_open_notices(*log);
    return log;
}

void print_open_notices(const runlog::RunLog& log) {
    for (const runlog::OpenNotice& n : log.open_notices())
        std::fprintf(stderr, "%s: %s\n", n.warning ? "warning" : "note", n.text.c_str());
}

void print_warnings(const std::vector<std::string>& warnings) {
    for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
}

void warn_context_past_n_ctx_train(uint32_t n_ctx, uint32_t n_parallel, uint32_t n_ctx_train) {
    const uint32_t per_seq = n_ctx / std::max<uint32_t>(n_parallel, 1);
    if (n_ctx_train == 0 || per_seq <= n_ctx_train) return;
    std::fprintf(stderr,
                 "warning: the context per sequence (%u tokens) is larger than the model's "
                 "training context (%u tokens) -- possible training context overflow; output "
                 "past %u tokens is unreliable\n",
                 per_seq, n_ctx_train, n_ctx_train);
}

std::string run_log_path(const ParsedArgs& args) {
    if (std::optional<std::string> given = args.get("db")) return *given;
    return runlog::default_db_path();
}

std::vector<OptionSpec> price_options(const std::string& hour_basis) {
    return {
        {"price-per-hour", 0, "X", "cost: X an hour (a GPU-hour), charged on " + hour_basis},
        {"price-per-m-input", 0, "X", "cost: X per million input tokens"},
        {"price-per-m-output", 0, "Y", "cost: Y per million output tokens"},
        {"currency", 0, "NAME", "label of the prices (default: USD)"},
    };
}

std::optional<cost::Price> price_from_args(const ParsedArgs& args, const std::string& command) {
    const auto amount = [&](const char* name) -> std::optional<double> {
        if (!args.get(name)) return std::nullopt;
        return args.get_double(name, 0, 0, 1e12);
    };
    try {
        return cost::price_from_options(amount("price-per-hour"), amount("price-per-m-input"),
                                        amount("price-per-m-output"),
                                        args.get("currency").value_or("USD"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(command + ": " + e.what());
    }
}

}  // namespace wb::cli
