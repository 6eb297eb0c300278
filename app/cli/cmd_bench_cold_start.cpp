// `workbench-cli bench --cold-start`: how long a fresh process takes from
// start to the first token of its first request, and where that time goes:
// process start, file map, metadata parse, vocabulary, SHA-256 of the file
// (what the run log hashes), Vulkan device, weight upload, pipeline
// creation, first prefill (its compute, and one-off work on first use).
//
// The parent runs the same child (this executable with --cold-start-child)
// -r times per mode, each in a fresh process, and prints the median and
// spread of every phase:
//   cold: an empty pipeline cache (a new $XDG_CACHE_HOME each run), so the
//         driver compiles every pipeline;
//   warm: the on-disk pipeline cache a first (unreported) run left;
//   warm, hash beside load: as warm, with the SHA-256 on a second thread
//         while the weights load (the overlap the app can make).
// The model file stays in the OS page cache between runs (dropping it needs
// root), so "file map" and "upload" are a warm-disk figure.

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "bench_stats.h"
#include "common_options.h"
#include "gguf/gguf.h"
#include "loader/load.h"
#include "runlog/sha256.h"
#include "tokenizer/vocab.h"

extern char** environ;

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "bench",
    "",
    "Measure cold start: process start to the first token, phase by phase.",
    "With --cold-start, runs a fresh process -r times per mode and prints the\n"
    "median, min and max of each phase of reaching the first token: process\n"
    "start, file map, metadata parse, vocabulary, SHA-256 of the file (as the\n"
    "run log hashes it), Vulkan device, weight upload, pipeline creation, first\n"
    "prefill of -p prompt tokens, split into its compute (the same prefill\n"
    "again) and one-off work on first use (lavapipe compiles a pipeline at its\n"
    "first dispatch). Modes: cold (empty pipeline cache each run),\n"
    "warm (the on-disk pipeline cache a first run left), and warm with the hash\n"
    "on a second thread beside the load. On the CPU backends (no device, no\n"
    "pipelines) the modes are the hash before the load and beside it. The model\n"
    "file stays in the OS page cache between runs.",
    concat(concat(model_options(), context_options()),
           {
               {"cold-start", 0, "", "this mode"},
               {"repetitions", 'r', "N", "fresh processes per mode (default 5)"},
               {"n-prompt", 'p', "N", "prompt tokens of the first request (default 32)"},
               {"json", 0, "", "print one JSON object instead of the table"},
               {"cold-start-child", 0, "", "internal: one measured run, JSON on stdout"},
               {"spawned-at", 0, "NS", "internal: steady-clock ns when the parent spawned it"},
               {"overlap-hash", 0, "", "internal: hash the file beside the load"},
           }),
    0,
    0,
};

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

/// The measured run, in the child process.
int child(const ParsedArgs& args) {
    const Clock::time_point t_main = Clock::now();
    double process_ms = 0.0;
    if (auto s = args.get("spawned-at")) {
        process_ms = static_cast<double>(now_ns() - std::stoll(*s)) / 1e6;
    }
    const std::string path = resolve_model_path(args.get("model"));
    const auto n_prompt = static_cast<size_t>(args.get_int("n-prompt", 32, 1, 4096));
    const bool overlap = args.has("overlap-hash");

    // The vocabulary is read from its own mapping, as the app does.
    const Clock::time_point t_vocab = Clock::now();
    const gguf::File vf = gguf::File::open(path);
    const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(vf);
    const model::LoadOptions lo =
        load_options_from_args(args, model::HParams::from_gguf(vf).n_ctx_train);
    const double vocab_ms = ms_between(t_vocab, Clock::now());

    double hash_ms = 0.0;
    auto hash = [&] {
        const Clock::time_point t = Clock::now();
        (void)runlog::sha256_file_hex(path);
        hash_ms = ms_between(t, Clock::now());
    };
    const Clock::time_point t_load = Clock::now();
    model::LoadTimings lt;
    std::unique_ptr<model::Model> m;
    if (overlap) {
        std::thread h(hash);
        try {
            m = model::load_model_timed(path, lo, lt);
        } catch (...) {
            h.join();
            throw;
        }
        h.join();
    } else {
        hash();
        m = model::load_model_timed(path, lo, lt);
    }
    const double load_wall_ms = ms_between(t_load, Clock::now());

    // The first request: a prompt of n_prompt tokens of text, one ubatch.
    std::string text;
    std::vector<int32_t> ids;
    while (ids.size() < n_prompt) {
        text += "Once upon a time there was a little girl named Lily. She liked to play. ";
        ids = vocab.tokenize(text, true);
    }
    ids.resize(n_prompt);
    model::Batch b;
    for (size_t i = 0; i < ids.size(); ++i)
        b.add(ids[i], static_cast<int32_t>(i), 0, i + 1 == ids.size());
    const double pipelines_before = lt.pipelines_ms;
    const Clock::time_point t_prefill = Clock::now();
    std::vector<float> logits;
    m->decode(b, logits);
    const int32_t first =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    const Clock::time_point t_first = Clock::now();
    model::add_pipeline_times(*m, lt);
    const double prefill_ms = ms_between(t_prefill, t_first) - (lt.pipelines_ms - pipelines_before);
    // The same prefill again: its compute alone. What the first took more is
    // one-off work on first use (a driver that compiles a pipeline at its
    // first dispatch, as lavapipe does, first-touch allocations).
    m->seq_rm(0);
    const Clock::time_point t_again = Clock::now();
    m->decode(b, logits);
    const double again_ms = ms_between(t_again, Clock::now());

    nlohmann::json j = {
        {"process_start_ms", process_ms},
        {"map_ms", lt.map_ms},
        {"parse_ms", lt.parse_ms},
        {"vocab_ms", vocab_ms},
        {"hash_ms", hash_ms},
        {"device_ms", lt.device_ms},
        {"upload_ms", lt.upload_ms},
        {"pipelines_ms", lt.pipelines_ms},
        {"first_prefill_ms", prefill_ms},
        {"prefill_compute_ms", again_ms},
        {"first_use_ms", std::max(0.0, prefill_ms - again_ms)},
        {"load_wall_ms", load_wall_ms},
        {"to_first_token_ms", process_ms + ms_between(t_main, t_first)},
        {"pipelines", lt.pipelines},
        {"pipelines_compile_ms", lt.pipelines_compile_ms},
        {"pipeline_threads", lt.pipeline_threads},
        {"pipeline_cache_bytes", lt.pipeline_cache_bytes},
        {"first_token", first},
        {"backend", m->backend_name()},
    };
    std::printf("%s\n", j.dump().c_str());
    return 0;
}

/// Runs `argv` with $XDG_CACHE_HOME = cache_dir, returns its stdout; throws
/// when it cannot start or exits non-zero (with its stderr passed through).
std::string run_child(const std::vector<std::string>& argv, const std::string& cache_dir) {
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
        if (std::strncmp(*e, "XDG_CACHE_HOME=", 15) != 0) env.emplace_back(*e);
    }
    env.push_back("XDG_CACHE_HOME=" + cache_dir);
    std::vector<char*> cargv, cenv;
    for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (const std::string& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
    cenv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    if (rc != 0) {
        close(out[0]);
        throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(out[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        text.append(buf, static_cast<size_t>(n));
    }
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw std::runtime_error("cold-start run failed (exit status " +
                                 std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                                 "); its error is above");
    }
    return text;
}

const std::pair<const char*, const char*> kPhases[] = {
    {"process_start_ms", "process start"},   {"vocab_ms", "vocabulary"},
    {"hash_ms", "hash (SHA-256)"},           {"map_ms", "file map"},
    {"parse_ms", "metadata parse"},          {"device_ms", "Vulkan device"},
    {"upload_ms", "weight upload"},          {"pipelines_ms", "pipeline creation"},
    {"first_prefill_ms", "first prefill"},   {"prefill_compute_ms", "  of it compute"},
    {"first_use_ms", "  of it first use"},   {"load_wall_ms", "  load wall time"},
    {"to_first_token_ms", "to first token"},
};

}  // namespace

int cmd_bench_cold_start(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    if (args.has("cold-start-child")) return child(args);

    const int64_t reps = args.get_int("repetitions", 5, 1, 1000);
    const std::string path = resolve_model_path(args.get("model"));
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    // The child gets our options back, minus the parent's own.
    std::vector<std::string> base = {self, "bench", "--cold-start-child", "-m", path};
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a == "--cold-start" || a == "--json") continue;
        if (a == "-m" || a == "--model" || a == "-r" || a == "--repetitions") {
            ++i;
            continue;
        }
        if (a.rfind("--model=", 0) == 0 || a.rfind("--repetitions=", 0) == 0) continue;
        base.push_back(a);
    }
    const std::filesystem::path tmp =
        std::filesystem::temp_directory_path() / ("wb-cold-start-" + std::to_string(getpid()));
    std::filesystem::create_directories(tmp);
    struct Cleanup {
        std::filesystem::path p;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(p, ec);
        }
    } cleanup{tmp};

    struct Mode {
        const char* name;
        bool fresh_cache;
        bool overlap;
        std::vector<nlohmann::json> runs;
    };
    // Only the Vulkan backend has pipelines and a pipeline cache: on the CPU
    // backends "cold" and "warm" would be the same run twice.
    const bool vulkan = load_options_from_args(args, 0).backend == "vulkan";
    std::vector<Mode> modes;
    if (vulkan) {
        modes = {{"cold pipeline cache", true, false, {}},
                 {"warm pipeline cache", false, false, {}},
                 {"warm, hash beside load", false, true, {}}};
    } else {
        modes = {{"hash, then load", false, false, {}}, {"hash beside load", false, true, {}}};
    }
    // The phases this backend has (no device or pipelines on the CPU).
    std::vector<std::pair<const char*, const char*>> shown;
    for (const auto& ph : kPhases) {
        const std::string key = ph.first;
        if (!vulkan && (key == "device_ms" || key == "pipelines_ms")) continue;
        shown.push_back(ph);
    }
    const std::string warm_dir = (tmp / "warm").string();
    auto one = [&](const Mode& mode, int64_t i) {
        const std::string dir =
            mode.fresh_cache ? (tmp / ("cold-" + std::to_string(i))).string() : warm_dir;
        std::vector<std::string> a = base;
        if (mode.overlap) a.push_back("--overlap-hash");
        a.push_back("--spawned-at");
        a.push_back(std::to_string(now_ns()));
        return nlohmann::json::parse(run_child(a, dir));
    };
    // A first, unreported run fills the warm pipeline cache (and the page cache).
    (void)one(modes[vulkan ? 1 : 0], 0);
    for (int64_t i = 0; i < reps; ++i) {
        for (Mode& mode : modes) mode.runs.push_back(one(mode, i));  // interleaved: fair drift
    }

    const std::string backend = modes[0].runs.front().value("backend", std::string());
    if (args.has("json")) {
        nlohmann::json j = {{"model", path}, {"backend", backend}, {"repetitions", reps}};
        for (const Mode& mode : modes) {
            nlohmann::json phases;
            for (const auto& [key, label] : shown) {
                std::vector<double> v;
                for (const auto& r : mode.runs) v.push_back(r.value(key, 0.0));
                const RepeatStats s = repeat_stats(v);
                phases[key] = {{"median", s.median}, {"min", s.min}, {"max", s.max}};
            }
            j["modes"].push_back(
                {{"mode", mode.name},
                 {"pipelines", mode.runs.front().value("pipelines", 0)},
                 {"pipeline_cache_bytes", mode.runs.front().value("pipeline_cache_bytes", 0)},
                 {"phases", phases},
                 {"runs", mode.runs}});
        }
        std::printf("%s\n", j.dump(1).c_str());
        return 0;
    }
    std::printf("cold start of %s on %s: %lld fresh processes per mode, ms (median [min-max])\n",
                path.c_str(), backend.c_str(), static_cast<long long>(reps));
    std::vector<std::vector<std::string>> rows(1, {"phase"});
    std::vector<Align> cols{Align::Left};
    for (const Mode& mode : modes) {
        rows[0].push_back(mode.name);
        cols.push_back(Align::Right);
    }
    for (const auto& [key, label] : shown) {
        std::vector<std::string> row{label};
        for (const Mode& mode : modes) {
            std::vector<double> v;
            for (const auto& r : mode.runs) v.push_back(r.value(key, 0.0));
            const RepeatStats s = repeat_stats(v);
            char cell[128];
            std::snprintf(cell, sizeof cell, "%.1f [%.1f-%.1f]", s.median, s.min, s.max);
            row.emplace_back(cell);
        }
        rows.push_back(std::move(row));
    }
    std::fputs(format_columns(rows, cols, false).c_str(), stdout);
    if (!vulkan) {
        std::printf(
            "the %s backend has no device to open and no pipelines to create; the model file "
            "stays in the OS page cache between runs\n",
            backend.c_str());
        return 0;
    }
    const int threads = modes[0].runs.front().value("pipeline_threads", 0);
    std::printf(
        "pipelines created: %d, compiled %s; the model file stays in the OS page cache "
        "between runs\n",
        modes[0].runs.front().value("pipelines", 0),
        threads > 0 ? ("on " + std::to_string(threads) +
                       " threads beside the recording (pipeline creation = time waited)")
                          .c_str()
                    : "in the caller on first use (WB_VK_PIPELINE_THREADS=0)");
    return 0;
}

}  // namespace wb::cli
