// workbench-cli load: drives an OpenAI-compatible endpoint with open-loop
// (or closed-loop) traffic and reports throughput, latency percentiles and
// goodput per step, optionally as a rate sweep (docs/load.md). The work is
// in app/load; this file parses options and prints results.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "cost/price.h"
#include "gguf/gguf.h"
#include "load/driver.h"
#include "load/load_log.h"
#include "load/prompts.h"
#include "load/report.h"
#include "load/step_stats.h"
#include "load/sweep.h"
#include "load/target_run.h"
#include "load/telemetry.h"
#include "tokenizer/tokenizer.h"

namespace wb::cli {
namespace {

using json = nlohmann::json;

const CommandSpec kSpec{
    "load",
    "",
    "Load-test an OpenAI-compatible endpoint: throughput, latency percentiles, goodput.",
    "Sends streaming requests (stream_options.include_usage) to --target and times each\n"
    "from the client: TTFT, inter-token latency, TPOT, end-to-end. Open loop by default:\n"
    "requests go out on an arrival schedule (--arrival, --rate) whatever the server does;\n"
    "--concurrency N keeps N in flight instead. --sweep N runs a synchronous step, a\n"
    "throughput step, then N rates between them and names the highest rate that meets\n"
    "the SLOs. Every request is logged (one run of kind \"load_test\") unless --no-log;\n"
    "the API key is read from the variable --api-key-env names, never printed or logged.\n"
    "Definitions of every figure: docs/load.md.",
    concat(
        std::vector<OptionSpec>{
            {"target", 0, "URL", "base URL of the endpoint, http://host:port (required)"},
            {"model", 0, "NAME",
             "the requests' \"model\" field (default: the first of GET /v1/models)"},
            {"api-key-env", 0, "VAR", "environment variable holding the API key"},
            {"compare-target", 0, "URL",
             "compare under load: the same test on a second endpoint (a sweep at the first's "
             "rates)"},
            {"compare-model", 0, "NAME", "the second endpoint's \"model\" field"},
            {"compare-api-key-env", 0, "VAR", "environment variable holding the second's API key"},
            {"api", 0, "chat|completions",
             "route: /v1/chat/completions or /v1/completions (default: chat)"},
            {"local-model", 0, "FILE",
             "GGUF of the served model: sizes synthetic prompts, counts tokens without usage"},
            {"arrival", 0, "KIND", "constant | poisson | gamma (default: poisson)"},
            {"rate", 0, "R", "offered requests/s of the open loop (default: 1)"},
            {"burstiness", 0, "B", "gamma shape: 1 = Poisson, < 1 burstier (default: 1)"},
            {"concurrency", 0, "N", "closed loop: keep N requests in flight"},
            {"max-in-flight", 0, "N", "open loop: at most N requests in flight (default: no cap)"},
            {"requests", 0, "N", "requests per step (default: 100)"},
            {"duration", 0, "S", "stop each step after S seconds (then --requests is a cap)"},
            {"warmup", 0, "N", "requests sent first, one at a time, not counted (default: 0)"},
            {"max-tokens", 0, "N", "max_tokens of each request (default: 16)"},
            {"prompts", 0, "FILE", "prompt set: one prompt per line or JSON lines with \"prompt\""},
            {"synthetic-prompt-tokens", 0, "MEAN[:SD]",
             "synthetic prompts of MEAN (+- SD) words or --local-model tokens (default: 32)"},
            {"shared-prefix-share", 0, "F",
             "share of each synthetic prompt common to all (default: 0)"},
            {"sweep", 0, "N", "rate sweep with N rate steps"},
            {"sweep-concurrency", 0, "N",
             "in-flight requests of the sweep's throughput step (default: 64)"},
            {"slo-ttft-p99-ms", 0, "X", "SLO: p99 time to first token <= X ms"},
            {"slo-itl-p99-ms", 0, "Y", "SLO: p99 inter-token latency <= Y ms"},
            {"slo-e2e-p99-ms", 0, "Z", "SLO: p99 end-to-end latency <= Z ms"},
            {"timeout-s", 0, "S",
             "a request fails after S s without data or S s in all (default: 60)"},
            {"connect-timeout-s", 0, "S", "TCP connect limit (default: 10)"},
            {"ca-cert", 0, "FILE",
             "https: trust the CA certificates in FILE (PEM) instead of the system's"},
            {"json", 0, "", "print the results as JSON"},
            {"csv", 0, "FILE", "also write one CSV row per step to FILE"},
            {"telemetry-csv", 0, "FILE",
             "also write the target's scheduler passes (GET /scheduler/passes), a row each, to "
             "FILE"},
            {"db", 0, "PATH",
             "run log database (default: ~/.local/share/inference-workbench/runlog.sqlite)"},
            {"no-log", 0, "", "do not log requests to the run log"},
            {"seed", 0, "N", "seed of the arrival schedule and synthetic prompts (default: 0)"},
        },
        price_options("each step's wall time (a remote endpoint is paid while it is up)")),
    0,
    0,
};

std::string fmt(double v, int prec = 1) {
    if (!std::isfinite(v)) return "-";
    char b[32];
    std::snprintf(b, sizeof b, "%.*f", prec, v);
    return b;
}

void print_table(const std::vector<load::SweepStep>& steps, int best) {
    // Queue wait only where the target reports it (our server's timings).
    const bool queue = std::any_of(steps.begin(), steps.end(),
                                   [](const auto& s) { return s.stats.queue_wait.count > 0; });
    std::printf("%-14s %8s %8s %6s %5s %8s %9s %8s %8s %8s %8s %8s %8s %8s %8s", "step", "offered",
                "achieved", "done", "err", "req/s", "out tok/s", "goodput", "TTFT p50", "TTFT p99",
                "ITL p50", "ITL p99", "TPOT p50", "e2e p50", "e2e p99");
    if (queue) std::printf(" %9s %9s", "queue p50", "queue p99");
    std::printf("\n");
    for (size_t i = 0; i < steps.size(); ++i) {
        const load::StepStats& s = steps[i].stats;
        const std::string offered = s.offered_rate
                                        ? fmt(*s.offered_rate, 2)
                                        : ("c=" + std::to_string(s.concurrency.value_or(0)));
        std::printf("%-14s %8s %8s %6zu %5zu %8s %9s %8s %8s %8s %8s %8s %8s %8s %8s",
                    steps[i].label.c_str(), offered.c_str(), fmt(s.achieved_rate, 2).c_str(),
                    s.completed, s.errors, fmt(s.request_throughput, 2).c_str(),
                    fmt(s.output_throughput).c_str(), fmt(s.goodput, 2).c_str(),
                    fmt(s.ttft.p50).c_str(), fmt(s.ttft.p99).c_str(), fmt(s.itl.p50).c_str(),
                    fmt(s.itl.p99).c_str(), fmt(s.tpot.p50).c_str(), fmt(s.e2e.p50).c_str(),
                    fmt(s.e2e.p99).c_str());
        if (queue)
            std::printf(" %9s %9s", fmt(s.queue_wait.p50).c_str(), fmt(s.queue_wait.p99).c_str());
        std::printf("%s\n", static_cast<int>(i) == best ? "  <- best within SLOs" : "");
    }
    std::printf("(rates in requests/s, latencies in ms%s%s)\n",
                queue ? "; queue wait as the target reported it" : "",
                std::any_of(steps.begin(), steps.end(),
                            [](const auto& s) { return s.stats.output_tokens_approximate; })
                    ? "; output tokens approximate: counted as content chunks"
                    : "");
}

// Scheduler telemetry per step (when the target reports it).
void print_scheduler(const std::vector<load::SweepStep>& steps,
                     const std::vector<load::SchedulerStats>& sched, const std::string& why_not) {
    if (sched.empty()) {
        std::printf("scheduler telemetry: unavailable (%s)\n", why_not.c_str());
        return;
    }
    std::printf("\nscheduler (the target's forward passes in each step):\n");
    std::printf("%-14s %8s %10s %9s %10s %10s %12s %8s\n", "step", "passes", "batch mean",
                "batch max", "prefill t", "decode t", "KV used max", "preempt");
    for (size_t i = 0; i < steps.size() && i < sched.size(); ++i) {
        const load::SchedulerStats& s = sched[i];
        const std::string kv =
            std::to_string(s.kv_blocks_used_max) + "/" + std::to_string(s.kv_blocks_total);
        std::printf("%-14s %8zu %10s %9u %10llu %10llu %12s %8llu\n", steps[i].label.c_str(),
                    s.passes, fmt(s.batch_mean, 2).c_str(), s.batch_max,
                    static_cast<unsigned long long>(s.prefill_tokens),
                    static_cast<unsigned long long>(s.decode_tokens), kv.c_str(),
                    static_cast<unsigned long long>(s.preemptions));
    }
    std::printf("(tokens per step; KV in blocks, used of total)\n");
}

// What every target of one `load` runs with.
struct LoadSetup {
    const std::vector<std::string>& prompts;
    size_t n_step_prompts;  // the first ones; the rest are the warm-ups' own
    size_t n_warm_prompts;
    int max_tokens;
    int sweep;  // rate steps; 0 = the plan as one step
    int sweep_concurrency;
    load::Slo slo;
    load::TokenCounter count;
    std::string local_model;
    std::string api;
    std::optional<cost::Price> price;  // recorded in each run's settings
};

using TargetRun = load::TargetOutcome;

// The API key in the environment variable `option` names ("" without the
// option); a variable that is unset or empty is a usage error.
std::string api_key_from_env(const ParsedArgs& args, const std::string& option) {
    const auto var = args.get(option);
    if (!var) return {};
    const char* key = std::getenv(var->c_str());
    if (key == nullptr || *key == '\0')
        throw UsageError("load: --" + option + ": the environment variable " + *var +
                         " is not set or empty");
    return key;
}

// --target and how to talk to it (--model, --api-key-env, --api, the
// timeouts, --ca-cert). The model is not looked up here: every option is
// checked before the first request goes out.
load::Target parse_target(const ParsedArgs& args) {
    load::Target target;
    const auto url = args.get("target");
    if (!url) throw UsageError("load: --target URL is required");
    target.base_url = *url;
    try {
        load::check_base_url(target.base_url);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("load: --target: ") + e.what());
    }
    target.model = args.get("model").value_or("");
    target.api_key = api_key_from_env(args, "api-key-env");
    const std::string api = args.get("api").value_or("chat");
    if (api != "chat" && api != "completions")
        throw UsageError("load: --api: '" + api + "' is not chat or completions");
    target.api = api == "chat" ? load::Api::Chat : load::Api::Completions;
    target.timeout_s = args.get_double("timeout-s", 60, 0.001, 86400);
    target.connect_timeout_s = args.get_double("connect-timeout-s", 10, 0.001, 3600);
    target.ca_cert_path = args.get("ca-cert").value_or("");
    return target;
}

// One step's traffic: arrival process and rate, or a closed loop
// (--concurrency), the in-flight cap, requests, duration, warm-ups, seed.
load::StepPlan parse_plan(const ParsedArgs& args) {
    load::StepPlan plan;
    try {
        plan.arrival = load::parse_arrival(args.get("arrival").value_or("poisson"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("load: --arrival: ") + e.what());
    }
    plan.rate = args.get_double("rate", 1, 1e-6, 1e6);
    plan.burstiness = args.get_double("burstiness", 1, 1e-3, 1e3);
    if (args.get("concurrency")) {
        plan.concurrency = static_cast<int>(args.get_int("concurrency", 1, 1, 100000));
        if (args.get("rate") || args.get("arrival"))
            throw UsageError("load: --concurrency (closed loop) excludes --rate and --arrival");
    }
    if (args.get("max-in-flight"))
        plan.max_in_flight = static_cast<int>(args.get_int("max-in-flight", 1, 1, 100000));
    // With --duration alone the duration ends the step (requests: a cap).
    plan.requests = static_cast<size_t>(
        args.get_int("requests", args.get("duration") ? 10000000 : 100, 1, 10000000));
    if (args.get("duration")) plan.duration_s = args.get_double("duration", 1, 0.001, 1e7);
    plan.warmup = static_cast<size_t>(args.get_int("warmup", 0, 0, 1000000));
    plan.seed = static_cast<uint64_t>(args.get_int("seed", 0, 0, INT64_MAX));
    return plan;
}

// The SLOs a step is judged by (ms; unset = no bound).
load::Slo parse_slo(const ParsedArgs& args) {
    load::Slo slo;
    if (args.get("slo-ttft-p99-ms"))
        slo.ttft_p99_ms = args.get_double("slo-ttft-p99-ms", 0, 0, 1e9);
    if (args.get("slo-itl-p99-ms")) slo.itl_p99_ms = args.get_double("slo-itl-p99-ms", 0, 0, 1e9);
    if (args.get("slo-e2e-p99-ms")) slo.e2e_p99_ms = args.get_double("slo-e2e-p99-ms", 0, 0, 1e9);
    return slo;
}

// The prompts of a test: [n_step] for the counted requests, then [n_warm]
// of the warm-ups' own.
struct PromptSet {
    std::vector<std::string> prompts;
    size_t n_step = 0;
    size_t n_warm = 0;
};

// --prompts, or synthetic prompts sized in `vocab`'s tokens (words when
// null): enough for every request of a step (at most 4096, reused in turn).
PromptSet make_prompts(const ParsedArgs& args, const load::StepPlan& plan,
                       const std::shared_ptr<tokenizer::Vocab>& vocab) {
    PromptSet set;
    if (const auto file = args.get("prompts")) {
        if (args.get("synthetic-prompt-tokens") || args.get("shared-prefix-share"))
            throw UsageError("load: --prompts excludes the synthetic prompt options");
        set.prompts = load::read_prompt_set(*file);
    } else {
        load::SyntheticPrompts sp;
        sp.mean_tokens = 32;
        sp.seed = plan.seed;
        try {
            if (const auto s = args.get("synthetic-prompt-tokens"))
                load::parse_synthetic_lengths(*s, sp);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("load: --synthetic-prompt-tokens: ") + e.what());
        }
        sp.shared_prefix_share = args.get_double("shared-prefix-share", 0, 0, 1);
        load::PromptTokenCounter prompt_tokens;
        if (vocab) {
            prompt_tokens = [vocab](const std::string& text) {
                return vocab->tokenize(text, false, false).size();
            };
        }
        // Warm-up requests get prompts of their own, after the step's, so
        // that no counted request finds its prompt in the prefix cache.
        set.n_warm = std::min<size_t>(plan.warmup, 4096);
        set.prompts = load::synthetic_prompts(
            sp, std::min<size_t>(plan.requests, 4096) + set.n_warm, prompt_tokens);
    }
    // Fewer prompts than asked (a huge mean): the warm-ups share the set.
    if (set.n_warm >= set.prompts.size()) set.n_warm = 0;
    set.n_step = set.prompts.size() - set.n_warm;
    return set;
}

// --telemetry-csv: the targets' scheduler passes, a comparison's labelled
// "A: " and "B: " as in --csv.
void write_telemetry(const std::string& path, const TargetRun& a, const TargetRun* b) {
    std::vector<load::TelemetryRow> rows = a.passes;
    std::vector<load::StepSpan> spans = a.spans;
    if (b) {
        for (load::StepSpan& sp : spans) sp.label = "A: " + sp.label;
        rows.insert(rows.end(), b->passes.begin(), b->passes.end());
        for (load::StepSpan sp : b->spans) {
            sp.label = "B: " + sp.label;
            spans.push_back(std::move(sp));
        }
    }
    if (a.scheduler.empty() && (!b || b->scheduler.empty())) {
        std::fprintf(stderr, "warning: --telemetry-csv: no file written: %s\n",
                     a.telemetry_unavailable.c_str());
        return;
    }
    load::write_telemetry_csv(path, rows, spans);
}

// Runs the test on `target` (a sweep at `rates` when given), logging each
// request under a load_test run of its own unless --no-log; prints the
// steps and the first ten errors to stderr unless --json.
TargetRun run_target(const ParsedArgs& args, const load::Target& target, const load::StepPlan& plan,
                     const LoadSetup& setup, const std::vector<double>& rates) {
    load::TargetPlan p;
    p.target = target;
    p.api = setup.api;
    p.plan = plan;
    p.sweep = setup.sweep;
    p.sweep_concurrency = setup.sweep_concurrency;
    p.rates = rates;
    p.slo = setup.slo;
    p.max_tokens = setup.max_tokens;
    if (setup.price) p.extra_settings["price"] = cost::to_json(*setup.price);
    p.prompt = [&setup](size_t i, bool warm) {
        return warm && setup.n_warm_prompts > 0
                   ? setup.prompts[setup.n_step_prompts + i % setup.n_warm_prompts]
                   : setup.prompts[i % setup.n_step_prompts];
    };
    p.count = setup.count;
    if (!args.has("no-log")) p.db_path = run_log_path(args);
    p.local_model = setup.local_model;
    p.compare_target = args.get("compare-target").value_or("");

    const bool quiet = args.has("json");
    std::mutex mu;
    size_t errors_printed = 0;
    load::TargetHooks hooks;
    hooks.step_started = [quiet, &setup](size_t index, const std::string& label,
                                         const load::StepPlan&) {
        if (!quiet && setup.sweep > 0)
            std::fprintf(stderr, "step %zu: %s\n", index + 1, label.c_str());
    };
    hooks.result = [&](size_t, bool, const load::RequestSpec& s, const load::RequestResult& r) {
        if (r.ok || quiet) return;
        std::lock_guard lock(mu);
        if (errors_printed < 10) {
            std::fprintf(stderr, "request %s: error: %s\n", s.user.c_str(), r.error.c_str());
            if (++errors_printed == 10)
                std::fprintf(stderr, "(further errors are counted, not printed)\n");
        }
    };
    TargetRun out = load::run_target(p, hooks);
    if (out.log_write_errors > 0) {
        std::fprintf(stderr, "warning: run log: %zu rows could not be written: %s\n",
                     out.log_write_errors, out.first_write_error.c_str());
    }
    return out;
}

// The second target of a comparison: --compare-target's URL, its own
// --compare-model and --compare-api-key-env, the first target's API and
// timeouts.
load::Target compare_target(const ParsedArgs& args, const load::Target& first,
                            const std::string& url) {
    load::Target t = first;
    t.base_url = url;
    try {
        load::check_base_url(url);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("load: --compare-target: ") + e.what());
    }
    t.api_key = api_key_from_env(args, "compare-api-key-env");
    t.model = args.get("compare-model").value_or("");
    if (t.model.empty()) t.model = load::first_model_id(t);
    return t;
}

load::Report report_of(const TargetRun& r, const load::Target& target, const std::string& api,
                       const load::Slo& slo, const std::optional<cost::Price>& price) {
    load::Report rep;
    rep.target = target.base_url;
    rep.model = target.model;
    rep.api = api;
    rep.steps = r.steps;
    rep.reasons = r.reasons;
    rep.best = r.best;
    rep.slo = slo;
    rep.price = price;
    rep.scheduler = r.scheduler;
    rep.telemetry_unavailable = r.telemetry_unavailable;
    rep.run_id = r.run_id;
    rep.db = r.db;
    return rep;
}

// The table, the best step, the cost lines and the run of one target
// (`heading` above them when comparing).
void print_run(const TargetRun& r, const std::string& heading, const load::Slo& slo,
               const std::optional<cost::Price>& price) {
    if (!heading.empty()) std::printf("%s\n", heading.c_str());
    print_table(r.steps, r.best);
    print_scheduler(r.steps, r.scheduler, r.telemetry_unavailable);
    if (r.best >= 0) {
        std::printf("highest rate within the SLOs: %s (%.2f requests/s)\n",
                    r.steps[static_cast<size_t>(r.best)].label.c_str(),
                    r.steps[static_cast<size_t>(r.best)].stats.request_throughput);
    } else if (slo.any()) {
        std::printf("no step met the SLOs\n");
    }
    if (price) {
        for (const load::SweepStep& st : r.steps) {
            const cost::Figures c = load::step_cost(st.stats, *price);
            std::printf(
                "cost of %s: %s %s a request, %s per 1k requests, %s per M output "
                "tokens (%s)\n",
                st.label.c_str(), fmt(c.per_request, 6).c_str(), price->currency.c_str(),
                fmt(c.per_1k_requests, 4).c_str(), fmt(c.per_m_output_tokens, 4).c_str(),
                c.formula.c_str());
        }
    }
    if (r.run_id && r.db)
        std::printf("run log: run %lld in %s\n", static_cast<long long>(*r.run_id), r.db->c_str());
}

}  // namespace

int cmd_load(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    // Every option first: a mistake is said before any request goes out.
    load::Target target = parse_target(args);
    const std::string api = target.api == load::Api::Chat ? "chat" : "completions";
    const load::StepPlan plan = parse_plan(args);
    const int max_tokens = static_cast<int>(args.get_int("max-tokens", 16, 1, 1000000));
    const int sweep = static_cast<int>(args.get_int("sweep", 0, 0, 1000));
    const int sweep_conc = static_cast<int>(args.get_int("sweep-concurrency", 64, 1, 100000));
    if (sweep > 0 && plan.concurrency)
        throw UsageError("load: --sweep picks its own rates; it excludes --concurrency");
    const load::Slo slo = parse_slo(args);
    if (args.has("no-log") && args.has("db"))
        throw UsageError("load: --db and --no-log exclude each other");
    const std::optional<cost::Price> price = price_from_args(args, "load");

    // Without --model, the endpoint's first listed model (servers such as
    // ours and vLLM require the field).
    if (target.model.empty()) target.model = load::first_model_id(target);

    // The served model's tokenizer (--local-model): sizes synthetic prompts in
    // its tokens and counts output tokens when the server sends no usage block.
    load::TokenCounter count;
    std::shared_ptr<tokenizer::Vocab> vocab;
    auto vocab_mu = std::make_shared<std::mutex>();
    const std::string local_model = args.get("local-model").value_or("");
    if (!local_model.empty()) {
        const gguf::File f = gguf::File::open(local_model);
        vocab = std::make_shared<tokenizer::Vocab>(tokenizer::Vocab::from_gguf(f));
        count = [vocab, vocab_mu](const std::string& text) {
            std::lock_guard lock(*vocab_mu);
            return static_cast<int64_t>(vocab->tokenize(text, false, false).size());
        };
    }
    const PromptSet set = make_prompts(args, plan, vocab);

    const LoadSetup setup{set.prompts, set.n_step, set.n_warm,  max_tokens, sweep, sweep_conc,
                          slo,         count,      local_model, api,        price};
    // Compare under load: the same prompts, schedule and SLOs on a second
    // target; a sweep runs it at the first target's rates (one x axis).
    std::optional<load::Target> target_b;
    if (const auto url = args.get("compare-target")) target_b = compare_target(args, target, *url);
    // A model the endpoint does not list is said before the test, not only
    // as a 404 on every request (the test still runs: some servers answer
    // for models they do not list).
    for (const load::Target* t : {&target, target_b ? &*target_b : nullptr}) {
        if (!t) continue;
        if (const std::string w = load::unlisted_model_warning(*t); !w.empty())
            std::fprintf(stderr, "warning: %s\n", w.c_str());
    }
    const TargetRun a = run_target(args, target, plan, setup, {});
    std::optional<TargetRun> b;
    if (target_b) {
        if (!args.has("json"))
            std::fprintf(stderr, "compare target: %s\n", target_b->base_url.c_str());
        b = run_target(args, *target_b, plan, setup,
                       sweep > 0 ? load::offered_rates(a.steps) : std::vector<double>{});
    }

    if (const auto path = args.get("telemetry-csv")) write_telemetry(*path, a, b ? &*b : nullptr);
    if (const auto csv = args.get("csv"))
        load::write_csv(*csv, b ? load::compared_steps(a.steps, b->steps) : a.steps, price);
    if (args.has("json")) {
        json out = load::report_json(report_of(a, target, api, slo, price));
        if (b) out["compare"] = load::report_json(report_of(*b, *target_b, api, slo, price));
        std::printf("%s\n", out.dump(2, ' ', false, json::error_handler_t::replace).c_str());
        return 0;
    }
    print_run(a, b ? "A: " + target.base_url : std::string(), slo, price);
    if (b) {
        std::printf("\n");
        print_run(*b, "B: " + target_b->base_url, slo, price);
    }
    return 0;
}

}  // namespace wb::cli
