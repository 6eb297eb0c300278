// `workbench-cli bench [-m MODEL] [-p 64] [-n 64] [-r 5] [--device D] [--profile]
// [--bandwidth]`: prefill and decode throughput like llama-bench (pp<N> and
// tg<N> rows, median and spread over repetitions), with the device, model
// and types. tg rows also give decode as effective weight bandwidth: the
// weight bytes one decode step reads (model/weight_traffic.h) x tokens/s,
// in GB/s, and with --bandwidth its share of the machine's measured read
// bandwidth (bench_bandwidth.h); --bandwidth without -m measures only that.
// Each repetition starts from an empty KV cache: one prefill ubatch of -p
// random tokens, then -n single-token decode steps. One warm-up run first.
// Rows name the model's shape (a synth shape when the sizes match one), the
// backend and, for the CPU executor, its threads and kernel ISA; the CPU
// seconds the process used per token (getrusage: user + system, all
// threads) are less sensitive to other load on the machine than wall time.

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "bench_bandwidth.h"
#include "bench_stats.h"
#include "common_options.h"
#include "exec/cpu/isa.h"
#include "ggml/types.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "model/prefill.h"
#include "model/weight_traffic.h"
#include "quant/synth_model.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "bench",
    "",
    "Measure prefill and decode tokens/s (median and spread over repetitions).",
    "Like llama-bench: pp<N> is a prefill of N tokens (in ubatches of at most 512, as\n"
    "llama-bench's default n_ubatch), tg<N> is N decode steps\n"
    "of one token each; tokens/s = tokens / wall time of decode() (which waits for the\n"
    "GPU). Reports the median, standard deviation, min and max over -r repetitions\n"
    "after one warm-up. --profile adds the per-op time table of one prefill and of\n"
    "one decode step: GPU time from timestamp queries on Vulkan, each op's wall time\n"
    "on the CPU backend. -t 1,2,4 (CPU backend) runs the model at each thread count\n"
    "and adds each count's speedup over the first: thread scaling.\n"
    "\n"
    "bench --concurrency LIST is the serving benchmark of the continuous-batching\n"
    "scheduler at several concurrency levels, with its own options: see\n"
    "'workbench-cli bench --concurrency 1 --help'. bench --cold-start measures\n"
    "process start to first token, phase by phase: 'workbench-cli bench\n"
    "--cold-start --help'. bench --draft ngram|FILE measures decode with and\n"
    "without speculative decoding in one run: 'workbench-cli bench --draft ngram\n"
    "--help'.\n"
    "\n"
    "tg rows report decode as weight GB/s (1e9 bytes/s): the weight bytes one decode\n"
    "step reads (every matrix, norm and bias once, one row of the token embedding)\n"
    "times tokens/s. --bandwidth first measures this machine's memory read bandwidth\n"
    "at each -t thread count (every thread sums a buffer of max(256 MiB, 4 x the\n"
    "last-level cache); median (min-max) GB/s over -r passes) and adds decode's\n"
    "share of it; without -m, bench --bandwidth measures only the bandwidth.",
    concat(concat(model_options(), context_options()),
           {
               {"n-prompt", 'p', "N", "prefill tokens (default 64)"},
               {"n-gen", 'n', "N", "decode steps (default 64)"},
               {"repetitions", 'r', "N", "timed repetitions (default 5)"},
               {"profile", 0, "", "print per-op times (GPU on Vulkan, wall on the CPU backend)"},
               {"bandwidth", 0, "",
                "measure the memory read bandwidth (GB/s) and decode's share of it"},
               {"json", 0, "", "print one JSON object instead of the table"},
           }),
    0,
    0,
};

using Clock = std::chrono::steady_clock;

using Stats = RepeatStats;

// The shared summary, with zeros (not NaN) for a phase with no samples so
// the table and JSON print numbers.
Stats stats(std::vector<double> v) {
    if (v.empty()) return {0.0, 0.0, 0.0, 0.0};
    return repeat_stats(std::move(v));
}

/// Per-op GPU times and host phases of one prefill or one decode run.
struct RunProfile {
    model::Profile ops;
    model::HostTimes host;
};

/// CPU seconds (user + system) this process has used so far, all threads.
double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto sec = [](const timeval& tv) {
        return static_cast<double>(tv.tv_sec) + 1e-6 * static_cast<double>(tv.tv_usec);
    };
    return sec(ru.ru_utime) + sec(ru.ru_stime);
}

/// One repetition's prefill and decode figures.
struct RunResult {
    double pp_tps = 0, tg_tps = 0;      ///< tokens/s
    double pp_cpu_s = 0, tg_cpu_s = 0;  ///< CPU seconds per token
};

/// "TinyLlama-1.1B" when the sizes are those of a synth shape, else the sizes.
std::string shape_name(const model::HParams& hp) {
    for (const quant::SynthShape& s : quant::synth_shapes()) {
        if (s.arch == hp.arch && s.n_embd == hp.n_embd && s.n_layer == hp.n_layer &&
            s.n_head == hp.n_head && s.n_head_kv == hp.n_head_kv && s.n_ff == hp.n_ff &&
            s.n_vocab == hp.n_vocab)
            return s.like;
    }
    return "n_embd " + std::to_string(hp.n_embd) + ", n_layer " + std::to_string(hp.n_layer) +
           ", n_ff " + std::to_string(hp.n_ff);
}

/// One repetition.
RunResult run_once(model::Model& m, const std::vector<int32_t>& prompt, int64_t n_gen,
                   std::mt19937& rng, RunProfile* pp_prof, RunProfile* tg_prof) {
    const bool prof = m.can_profile();
    m.seq_rm(0);
    model::Batch b;
    std::vector<float> logits;
    if (prof && pp_prof) {
        m.clear_profile();
        m.set_profiling(true);
    }
    double c0 = cpu_seconds();
    auto t0 = Clock::now();
    // Ubatches of 512 tokens, as llama-bench's default n_ubatch: a long -p
    // is never one GPU submission of minutes.
    model::prefill(m, prompt, 0, 0, model::kDefaultUbatch, logits);
    const double pp_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const double pp_cpu = cpu_seconds() - c0;
    if (prof && pp_prof) {
        *pp_prof = {m.profile(), m.host_times()};
        m.clear_profile();
    }
    std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(m.hparams().n_vocab) - 1);
    int32_t pos = static_cast<int32_t>(prompt.size());
    c0 = cpu_seconds();
    t0 = Clock::now();
    for (int64_t i = 0; i < n_gen; ++i) {
        b.clear();
        b.add(tok(rng), pos++, 0, true);
        m.decode(b, logits);
    }
    const double tg_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    const double tg_cpu = cpu_seconds() - c0;
    if (prof && tg_prof) {
        *tg_prof = {m.profile(), m.host_times()};
        m.set_profiling(false);
        m.clear_profile();
    }
    RunResult r;
    r.pp_tps = pp_ms > 0 ? 1000.0 * static_cast<double>(prompt.size()) / pp_ms : 0.0;
    r.tg_tps = tg_ms > 0 ? 1000.0 * static_cast<double>(n_gen) / tg_ms : 0.0;
    r.pp_cpu_s = prompt.empty() ? 0.0 : pp_cpu / static_cast<double>(prompt.size());
    r.tg_cpu_s = n_gen > 0 ? tg_cpu / static_cast<double>(n_gen) : 0.0;
    return r;
}

/// `v` printed with `decimals` digits after the point ("%.*f").
std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

/// The per-op table, then the host phases of the same calls: what the
/// host spent preparing and recording each call, and how long the submit
/// waited for the fence (the GPU's op time plus launch and barrier costs).
void print_profile(const char* title, const RunProfile& p, double per, bool gpu) {
    std::vector<std::vector<std::string>> rows{{"op", "calls", gpu ? "GPU ms" : "ms", "share"}};
    double total = 0;
    for (const model::ProfileRow& r : p.ops.rows()) {
        rows.push_back({r.op, fixed(static_cast<double>(r.calls) / per, 0),
                        fixed(r.total_ms / per, 4), fixed(100.0 * r.share, 1) + "%"});
        total += r.total_ms / per;
    }
    rows.push_back({"total", "", fixed(total, 4), fixed(100.0, 1) + "%"});
    std::printf("\n%s\n%s", title,
                format_columns(rows, {Align::Left, Align::Right, Align::Right, Align::Right}, false)
                    .c_str());
    if (!gpu) return;  // the CPU backend records and submits nothing
    std::printf("host ms: prepare %.4f, record %.4f, submit to fence %.4f, logits readback %.4f\n",
                p.host.prepare_ms / per, p.host.record_ms / per, p.host.submit_wait_ms / per,
                p.host.readback_ms / per);
    std::printf("(%llu of %llu calls recorded their command buffer, the rest replayed one)\n",
                static_cast<unsigned long long>(p.host.recorded),
                static_cast<unsigned long long>(p.host.calls));
}

nlohmann::json profile_json(const RunProfile& p, double per, bool gpu) {
    nlohmann::json rows = nlohmann::json::array();
    for (const model::ProfileRow& r : p.ops.rows())
        rows.push_back({{"op", r.op},
                        {"calls", static_cast<double>(r.calls) / per},
                        {gpu ? "gpu_ms" : "ms", r.total_ms / per},
                        {"share", r.share}});
    if (!gpu) return {{"ops", rows}};  // the CPU backend has no host phases
    return {{"ops", rows},
            {"host_ms",
             {{"prepare", p.host.prepare_ms / per},
              {"record", p.host.record_ms / per},
              {"submit_to_fence", p.host.submit_wait_ms / per},
              {"logits_readback", p.host.readback_ms / per}}},
            {"calls", p.host.calls},
            {"recorded", p.host.recorded}};
}

}  // namespace

int cmd_bench_concurrency(const std::vector<std::string>& argv);  // cmd_bench_concurrency.cpp
int cmd_bench_cold_start(const std::vector<std::string>& argv);   // cmd_bench_cold_start.cpp
int cmd_bench_speculative(const std::vector<std::string>& argv);  // cmd_bench_speculative.cpp

int cmd_bench(const std::vector<std::string>& argv) {
    // --concurrency LIST: the scheduler's serving benchmark (its own options).
    for (const std::string& a : argv) {
        if (a == "--concurrency" || a.rfind("--concurrency=", 0) == 0)
            return cmd_bench_concurrency(argv);
        // --cold-start: fresh processes to the first token (its own options).
        if (a == "--cold-start" || a == "--cold-start-child") return cmd_bench_cold_start(argv);
        // --draft: decode with and without speculative decoding (its own options).
        if (a == "--draft" || a.rfind("--draft=", 0) == 0) return cmd_bench_speculative(argv);
    }
    // -t 1,2,4: one run per thread count. The list is taken out here; each
    // run gets one count (LoadOptions::threads).
    std::vector<std::string> args_in = argv;
    std::vector<unsigned> thread_list;
    for (size_t i = 0; i < args_in.size(); ++i) {
        std::string* value = nullptr;
        std::string rest;
        if ((args_in[i] == "-t" || args_in[i] == "--threads") && i + 1 < args_in.size()) {
            value = &args_in[i + 1];
        } else if (args_in[i].rfind("--threads=", 0) == 0) {
            rest = args_in[i].substr(10);
            value = &rest;
        }
        if (!value || value->find(',') == std::string::npos) continue;
        std::string item;
        for (size_t at = 0; at <= value->size(); ++at) {
            if (at < value->size() && (*value)[at] != ',') {
                item += (*value)[at];
                continue;
            }
            char* e = nullptr;
            const unsigned long t = std::strtoul(item.c_str(), &e, 10);
            if (item.empty() || *e != '\0' || t < 1 || t > 1024)
                throw UsageError("bench: -t " + *value +
                                 ": expected thread counts 1..1024 separated by commas");
            thread_list.push_back(static_cast<unsigned>(t));
            item.clear();
        }
        if (args_in[i].rfind("--threads=", 0) == 0)
            args_in[i] = "--threads=" + std::to_string(thread_list.front());
        else
            *value = std::to_string(thread_list.front());
    }
    const ParsedArgs args = parse_args(kSpec, args_in);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const int64_t n_prompt = args.get_int("n-prompt", 64, 0, 65535);
    const int64_t n_gen = args.get_int("n-gen", 64, 0, 1 << 20);
    const int64_t reps = args.get_int("repetitions", 5, 1, 1000);
    const bool profile = args.has("profile");
    const bool bandwidth = args.has("bandwidth");
    if (bandwidth && !args.get("model")) {
        // The bandwidth alone, at each thread count (default: physical cores).
        if (thread_list.empty())
            thread_list.push_back(static_cast<unsigned>(args.get_int("threads", 0, 0, 1024)));
        std::vector<BandwidthFigures> bw;
        for (const unsigned t : thread_list)
            bw.push_back(
                measure_bandwidth(t ? t : model::physical_core_count(), static_cast<int>(reps)));
        if (args.has("json")) {
            nlohmann::json j;
            j["bandwidth"] = bandwidth_json(bw.front());
            if (bw.size() > 1) {
                nlohmann::json all = nlohmann::json::array();
                for (const BandwidthFigures& b : bw) all.push_back(bandwidth_json(b));
                j["bandwidth_scaling"] = std::move(all);
            }
            std::printf("%s\n", j.dump().c_str());
        } else {
            std::printf("%s", bandwidth_table(bw, static_cast<int>(reps)).c_str());
        }
        return 0;
    }
    const std::string path = resolve_model_path(args.get("model"));

    const gguf::File f = gguf::File::open(path);
    const model::HParams hp = model::HParams::from_gguf(f);
    model::LoadOptions lo = load_options_from_args(args, hp.n_ctx_train);
    const uint64_t need_ctx = static_cast<uint64_t>(n_prompt + n_gen);
    if (!args.get("ctx-size") && lo.context.n_ctx < need_ctx)
        lo.context.n_ctx = static_cast<uint32_t>(need_ctx);
    if (lo.context.n_ctx < need_ctx) {
        throw UsageError("bench: -c " + std::to_string(lo.context.n_ctx) +
                         " is smaller than -p + -n = " + std::to_string(need_ctx));
    }
    if (!thread_list.empty() && lo.backend != "cpu")
        throw UsageError("bench: a list of thread counts (-t 1,2) needs --backend cpu, not " +
                         lo.backend);
    if (thread_list.empty()) thread_list.push_back(lo.threads);  // 0: the backend's default

    std::map<std::string, uint64_t> types;  // weight type -> tensors
    uint64_t n_params = 0, weight_bytes = 0;
    for (const gguf::TensorInfo& t : f.tensors()) {
        types[ggml::type_name(t.type)] += 1;
        n_params += t.n_elements();
        weight_bytes += t.nbytes;
    }
    // Weight bytes one decode step reads (not the whole file: one row of the
    // token embedding unless it is the tied output).
    const uint64_t decode_bytes = model::decode_weight_bytes(model::ModelDesc::from_gguf(f));
    std::string type_list;
    for (const auto& [t, n] : types)
        type_list += (type_list.empty() ? "" : ", ") + t + " x" + std::to_string(n);

    std::mt19937 prompt_rng(1234);
    std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(hp.n_vocab) - 1);
    std::vector<int32_t> prompt(static_cast<size_t>(n_prompt));
    for (int32_t& t : prompt) t = tok(prompt_rng);

    // One thread count's figures.
    struct Measured {
        unsigned threads = 0;
        unsigned asked = 0;   // -t as given (0: the default), keys its bandwidth
        std::string backend;  // "cpu 2t avx512" / "vulkan"
        std::vector<double> pp, tg;
        Stats sp, sg;
        double pp_cpu_s = 0, tg_cpu_s = 0;
        RunProfile pp_prof, tg_prof;
    };
    // --bandwidth: the read bandwidth at each count before any model is
    // loaded (the Vulkan backend's count is the CPU default, for its share).
    // Threads a run uses (0 asked: the default), which its bandwidth uses.
    const auto run_threads = [&](unsigned asked) -> unsigned {
        if (lo.backend == "cpu-ref") return 1;
        return asked ? asked : model::physical_core_count();
    };
    std::map<unsigned, BandwidthFigures> bw;
    if (bandwidth) {
        for (const unsigned t : thread_list) {
            const unsigned n = run_threads(t);
            if (!bw.count(n)) bw[n] = measure_bandwidth(n, static_cast<int>(reps));
        }
    }
    // A share of host memory bandwidth means something where the weights
    // are read from host memory: the CPU backends, and Vulkan on a CPU
    // device (lavapipe) when there is no GPU.
    const bool host_memory = lo.backend != "vulkan" || default_backend().backend == "cpu";
    const auto bw_for = [&](unsigned asked) -> const BandwidthFigures* {
        const auto it = bw.find(run_threads(asked));
        return it == bw.end() ? nullptr : &it->second;
    };
    std::vector<Measured> runs;
    std::string device;
    bool gpu_profile = false;
    for (const unsigned threads_asked : thread_list) {
        model::LoadOptions lot = lo;
        lot.threads = threads_asked;
        std::unique_ptr<model::Model> m = model::load_model(path, lot);
        if (profile && !m->can_profile())
            throw UsageError("bench: --profile needs --backend vulkan or cpu, not " + lo.backend);
        device = m->backend_name();
        gpu_profile = lo.backend == "vulkan";
        std::mt19937 rng(1234);
        run_once(*m, prompt, std::min<int64_t>(n_gen, 4), rng, nullptr,
                 nullptr);  // warm-up (pipelines, caches)
        Measured r;
        r.asked = threads_asked;
        std::vector<double> pp_cpu, tg_cpu;
        for (int64_t i = 0; i < reps; ++i) {
            const RunResult res = run_once(*m, prompt, n_gen, rng, nullptr, nullptr);
            r.pp.push_back(res.pp_tps);
            r.tg.push_back(res.tg_tps);
            pp_cpu.push_back(res.pp_cpu_s);
            tg_cpu.push_back(res.tg_cpu_s);
        }
        if (profile) run_once(*m, prompt, n_gen, rng, &r.pp_prof, &r.tg_prof);
        r.sp = stats(r.pp);
        r.sg = stats(r.tg);
        r.pp_cpu_s = stats(pp_cpu).median;
        r.tg_cpu_s = stats(tg_cpu).median;
        // What ran: the backend, and for the CPU executor its threads and ISA.
        r.backend = lo.backend;
        if (lo.backend == "cpu") {
            r.threads = threads_asked ? threads_asked : model::physical_core_count();
            r.backend += std::string(" ") + std::to_string(r.threads) + "t " +
                         cpu::isa_name(cpu::best_isa());
        } else if (lo.backend == "cpu-ref") {
            r.threads = 1;
        }
        runs.push_back(std::move(r));
    }
    const std::string shape = shape_name(hp);
    const std::string kv = model::kv_type_name(lo.context.kv_type);
    const double steps = static_cast<double>(std::max<int64_t>(n_gen, 1));
    const Measured& first = runs.front();

    if (args.has("json")) {
        auto figures = [&](const Measured& r, nlohmann::json& j) {
            j["pp"] = {{"tokens", n_prompt},
                       {"median", r.sp.median},
                       {"stdev", r.sp.stdev},
                       {"min", r.sp.min},
                       {"max", r.sp.max},
                       {"all", r.pp},
                       {"cpu_s_per_token", r.pp_cpu_s}};
            j["tg"] = {{"tokens", n_gen},
                       {"median", r.sg.median},
                       {"stdev", r.sg.stdev},
                       {"min", r.sg.min},
                       {"max", r.sg.max},
                       {"all", r.tg},
                       {"cpu_s_per_token", r.tg_cpu_s},
                       {"weight_gbps", weight_gbps(decode_bytes, r.sg.median)}};
            if (const BandwidthFigures* b = bw_for(r.asked)) {
                j["bandwidth"] = bandwidth_json(*b);
                if (host_memory && b->stats.median > 0)
                    j["tg"]["bandwidth_share"] =
                        weight_gbps(decode_bytes, r.sg.median) / b->stats.median;
            }
            if (profile) {
                j["profile_prefill"] = profile_json(r.pp_prof, 1.0, gpu_profile);
                j["profile_decode_step"] = profile_json(r.tg_prof, steps, gpu_profile);
            }
        };
        nlohmann::json j;
        j["device"] = device;
        j["backend"] = lo.backend;
        // Without --backend, why the default backend was chosen.
        if (!args.has("backend")) j["backend_reason"] = default_backend().reason;
        j["threads"] = first.threads;
        if (lo.backend == "cpu") j["isa"] = cpu::isa_name(cpu::best_isa());
        j["shape"] = shape;
        j["model"] = path;
        j["n_params"] = n_params;
        j["weight_bytes"] = weight_bytes;
        j["decode_weight_bytes"] = decode_bytes;
        j["types"] = types;
        j["kv_type"] = kv;
        j["repetitions"] = reps;
        figures(first, j);
        if (runs.size() > 1) {
            // Thread scaling: each count's figures and its speedup over the first.
            nlohmann::json scaling = nlohmann::json::array();
            for (const Measured& r : runs) {
                nlohmann::json e{{"threads", r.threads}};
                figures(r, e);
                e["pp_speedup"] = first.sp.median > 0 ? r.sp.median / first.sp.median : 0.0;
                e["tg_speedup"] = first.sg.median > 0 ? r.sg.median / first.sg.median : 0.0;
                scaling.push_back(std::move(e));
            }
            j["thread_scaling"] = std::move(scaling);
        }
        std::printf("%s\n", j.dump().c_str());
        return 0;
    }
    std::printf("device: %s\nmodel:  %s (%s, %.2f M params, %.2f MiB, %s), KV cache %s\n",
                device.c_str(), path.c_str(), hp.arch.c_str(), static_cast<double>(n_params) / 1e6,
                static_cast<double>(weight_bytes) / (1024.0 * 1024.0), type_list.c_str(),
                kv.c_str());
    if (!args.has("backend"))
        std::printf("backend: %s by default (%s)\n", lo.backend.c_str(),
                    default_backend().reason.c_str());
    const bool scaling = runs.size() > 1;
    const bool share_col = bandwidth && host_memory;
    std::vector<std::vector<std::string>> rows{{"shape", "backend", "test", "t/s median", "stdev",
                                                "min", "max", "CPU s/token", "weight GB/s"}};
    if (share_col) rows[0].push_back("of bandwidth");
    if (scaling) rows[0].push_back("speedup");
    for (const Measured& r : runs) {
        for (int test = 0; test < 2; ++test) {
            const Stats& st = test == 0 ? r.sp : r.sg;
            const Stats& base = test == 0 ? first.sp : first.sg;
            std::vector<std::string> row{
                shape,
                r.backend,
                (test == 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen)),
                fixed(st.median, 2),
                fixed(st.stdev, 2),
                fixed(st.min, 2),
                fixed(st.max, 2),
                fixed(test == 0 ? r.pp_cpu_s : r.tg_cpu_s, 4),
                test == 0 ? "-" : fixed(weight_gbps(decode_bytes, st.median), 2)};
            if (share_col) {
                const BandwidthFigures* b = bw_for(r.asked);
                row.push_back(
                    test == 0 || !b || b->stats.median <= 0
                        ? "-"
                        : fixed(100.0 * weight_gbps(decode_bytes, st.median) / b->stats.median, 1) +
                              "%");
            }
            if (scaling)
                row.push_back(base.median > 0 ? fixed(st.median / base.median, 2) + "x" : "-");
            rows.push_back(std::move(row));
        }
    }
    std::vector<Align> cols{Align::Left,  Align::Left,  Align::Left,  Align::Right, Align::Right,
                            Align::Right, Align::Right, Align::Right, Align::Right};
    if (share_col) cols.push_back(Align::Right);
    if (scaling) cols.push_back(Align::Right);
    std::printf("\n%s", format_columns(rows, cols, true).c_str());
    std::printf("(%lld repetitions after one warm-up%s)\n", static_cast<long long>(reps),
                scaling ? "; speedup: median over the first thread count's" : "");
    std::printf("(weight GB/s = %.2f MB of weights read per decoded token x tg t/s%s)\n",
                static_cast<double>(decode_bytes) / 1e6,
                share_col ? "; of bandwidth: over the read bandwidth at the same threads" : "");
    if (bandwidth) {
        std::vector<BandwidthFigures> all;
        for (const auto& [t, b] : bw) all.push_back(b);
        std::printf("\n%s", bandwidth_table(all, static_cast<int>(reps)).c_str());
    }
    if (profile) {
        for (const Measured& r : runs) {
            const std::string who =
                gpu_profile ? "per-op GPU time" : "per-op wall time, " + r.backend;
            if (r.pp_prof.ops.empty() && r.tg_prof.ops.empty()) {
                std::printf("\n(no profile: the device has no compute timestamps)\n");
                continue;
            }
            print_profile(
                (who + ", one prefill of " + std::to_string(n_prompt) + " tokens").c_str(),
                r.pp_prof, 1.0, gpu_profile);
            print_profile((who + ", one decode step (mean over the tg run)").c_str(), r.tg_prof,
                          steps, gpu_profile);
        }
    }
    return 0;
}

}  // namespace wb::cli
