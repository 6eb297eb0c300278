// `workbench-cli compare -m A -m B [-m C...]`: runs a reference model and its
// variants on the same workload and prints speed, memory and quality side
// by side (app/compare/compare.h describes every figure). Status lines go to
// stderr; the table (or, with --json, one JSON object) to stdout.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "compare/compare.h"
#include "compare/compare_cost.h"
#include "compare/compare_jobs.h"
#include "loader/load.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "compare",
    "",
    "Compare a model with its variants: speed, memory, perplexity, KLD, agreement, accuracy.",
    "The first -m model is the reference A; the others (B, C, ...) are compared\n"
    "with it. Every model runs the same prompts greedily (-n tokens, no stop\n"
    "token) for load time, prefill/decode tokens/s, TTFT and end-to-end time,\n"
    "teacher-forced token agreement on A's output and the first step where\n"
    "free-running outputs split. --text adds perplexity by llama.cpp's\n"
    "llama-perplexity rule (chunks of --ctx tokens, first token BOS, second half\n"
    "scored; the text needs 2 x ctx tokens) and the KL divergence of each\n"
    "variant's next-token distribution from A's (mean, median, p99, max) with\n"
    "top-1 agreement, computed from full logits in double. --testset adds\n"
    "accuracy on a JSONL set ({\"prompt\", \"answer\", \"match\": exact|contains,\n"
    "\"max_tokens\"}) and lists the items where the models disagree. Models with\n"
    "a different vocabulary are still compared on outputs, speed, perplexity\n"
    "and accuracy, and the output says so. Every response (each model's prompts\n"
    "and test items) is written to the run log under one \"compare\" run unless\n"
    "--no-log; the run log is opened before any model loads.\n"
    "Speed is measured as llama-bench does: one request at a time, each model\n"
    "alone, one untimed warm-up pass over the prompts per model (first-use work\n"
    "such as pipeline compilation), then -r timed passes, the models' passes taken\n"
    "in turn so background load falls on all alike; each figure is the median\n"
    "(min-max) of one sample per timed pass (TTFT and end-to-end: the pass's mean\n"
    "over its prompts). Only the first timed pass is logged.",
    concat(
        std::vector<OptionSpec>{
            {"model", 'm', "FILE", "model file; repeat: first is the reference A (at least 2)"},
            {"text", 0, "FILE", "text for perplexity and KL divergence"},
            {"testset", 0, "FILE", "JSONL test set for accuracy"},
            {"prompts", 0, "FILE",
             "prompts, one per line (or JSONL with \"prompt\"); default: 3 built-in prompts"},
            {"n-predict", 'n', "N", "greedy tokens per prompt (default: 48)"},
            {"repetitions", 'r', "N",
             "timed passes over the prompts per model after 1 untimed warm-up pass (default: " +
                 std::to_string(compare::CompareOptions{}.repetitions) + ")"},
            {"ctx", 'c', "N", "perplexity window in tokens, llama-perplexity -c (default: 512)"},
            {"max-tokens", 0, "N", "default max tokens per test item (default: 32)"},
            kv_type_option(),
            {"backend", 0, "NAME",
             std::string("cpu (threaded, quantized kernels), cpu-ref (f32 reference) or vulkan (") +
                 kDefaultBackendHelp + ")"},
            {"device", 0, "DEV", "Vulkan device index or name substring"},
            {"json", 0, "", "print one JSON object instead of the table"},
            {"quiet", 'q', "", "no progress lines on stderr"},
            {"db", 0, "PATH",
             "run log database (default: ~/.local/share/inference-workbench/runlog.sqlite)"},
            {"no-log", 0, "", "do not write the responses to the run log"},
        },
        price_options("each pane's engine time (one timed pass, the median)")),
    0,
    0,
};

}  // namespace

int cmd_compare(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const std::optional<cost::Price> price = price_from_args(args, "compare");
    compare::CompareOptions o;
    o.models = args.get_all("model");
    if (o.models.size() < 2) {
        throw UsageError("compare: give at least two models: -m REFERENCE -m VARIANT [-m ...]");
    }
    o.text_file = args.get("text");
    o.testset_file = args.get("testset");
    if (const auto p = args.get("prompts")) o.prompts = compare::load_prompts(*p);
    o.n_predict = static_cast<uint32_t>(args.get_int("n-predict", 48, 1, 4096));
    o.repetitions = static_cast<uint32_t>(
        args.get_int("repetitions", compare::CompareOptions{}.repetitions, 1, 1000));
    o.ppl_ctx = static_cast<uint32_t>(args.get_int("ctx", 512, 4, 1 << 20));
    o.testset_max_tokens = static_cast<uint32_t>(args.get_int("max-tokens", 32, 1, 4096));
    o.kv_type = kv_type_from_args(args);
    const std::string backend =
        args.has("backend") ? *args.get("backend") : default_backend().backend;
    const std::string device = args.get("device").value_or("");
    const bool quiet = args.has("quiet");
    // Run log, opened strictly before any model loads: a bad database file
    // is reported (and nothing run) rather than found bad after the work.
    std::string db;
    if (!args.has("no-log")) {
        // Creates it, prints its notices, throws if it cannot be opened.
        const std::shared_ptr<runlog::RunLog> probe = open_run_log(args);
        db = run_log_path(args);
    }

    const compare::ModelLoader loader = [&](const std::string& path,
                                            const model::ContextParams& cp) {
        model::LoadOptions lo;
        lo.backend = backend;
        lo.device = device;
        lo.context = cp;
        return model::load_model(path, lo);
    };
    const compare::CompareReport rep = compare::run_compare(o, loader, [&](const std::string& s) {
        if (!quiet) std::fprintf(stderr, "compare: %s\n", s.c_str());
    });
    if (!db.empty()) {
        std::string name = "compare:";
        for (const std::string& m : o.models) {
            name += ' ';
            name += std::filesystem::path(m).filename().string();
        }
        model::LoadOptions base;
        base.backend = backend;
        base.device = device;
        const int64_t run_id = compare::log_comparison(db, name, rep, base, false, price);
        if (!quiet) {
            std::fprintf(stderr, "compare: logged %zu responses as run %lld in %s\n",
                         compare::responses_in(rep), static_cast<long long>(run_id), db.c_str());
        }
    }
    if (args.has("json")) {
        nlohmann::json j = compare::to_json(rep);
        if (price) {
            j["price"] = cost::to_json(*price);
            for (size_t i = 0; i < rep.models.size() && i < j["models"].size(); ++i)
                j["models"][i]["cost"] = cost::to_json(compare::model_cost(rep.models[i], *price));
        }
        std::cout << j.dump(1) << "\n";
    } else {
        std::cout << compare::format_table(rep);
        // Cost per pane, one pass of the prompts priced (pane_cost).
        if (price) {
            for (const compare::ModelReport& m : rep.models) {
                const cost::Figures c = compare::model_cost(m, *price);
                std::cout << "cost of " << m.label << ": " << c.per_request << " "
                          << price->currency << " a request, " << c.per_1k_requests
                          << " per 1k requests, " << c.per_m_output_tokens
                          << " per M output tokens (" << c.formula << ")\n";
            }
        }
    }
    return 0;
}

}  // namespace wb::cli
