// workbench-cli: the Qt-free command-line front end of Inference Workbench.
//
// HOW TO ADD A COMMAND (`workbench-cli foo`):
//   1. Write app/cli/cmd_foo.cpp defining, in namespace wb::cli,
//          int cmd_foo(const std::vector<std::string>& argv);
//      `argv` holds the arguments after "foo". Describe the command with a
//      CommandSpec (args.h), parse with parse_args(), print help_text() and
//      return 0 when args.help is set, return the exit status otherwise.
//      Throw on errors: main() prints what() to stderr and exits non-zero
//      (UsageError -> 2, anything else -> 1).
//   2. Add one line `    X(foo, "one-line summary") \` to WB_CLI_COMMANDS
//      below (the list is in `--help` order).
//   3. Add cmd_foo.cpp to WB_CLI_SOURCES in app/cli/CMakeLists.txt (and its
//      library to the target_link_libraries there).

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "args.h"
#include "wb_version.h"

// The command table: X(name, summary), one line per command, each ending in
// a backslash; keep the closing comment line last.
// clang-format off
#define WB_CLI_COMMANDS(X) \
    X(info, "Show a model's architecture, hyperparameters, tokenizer, tensors and memory") \
    X(plan, "Show the device memory a model needs and the largest context that fits") \
    X(generate, "Generate text from a prompt, streaming it to stdout") \
    X(tokenize, "Print the token ids of a text") \
    X(chat_template, "Render a conversation (JSON on stdin) with a chat template and print the prompt") \
    X(quantize, "Write a quantized copy of a GGUF model (F16, Q8_0, Q6_K, Q5_K_M, Q4_K_M, ..., Q2_K)") \
    X(synth, "Write a random-weight model in a real model's shape (TinyLlama, Llama 7B/8B, Qwen2.5)") \
    X(compare, "Compare a model with its variants: speed, memory, PPL, KLD, agreement, accuracy") \
    X(devices, "List the Vulkan devices and their capabilities") \
    X(bench, "Measure prefill and decode tokens/s (median and spread over repetitions)") \
    X(export, "Export logged responses (run log) as CSV or JSON Lines") \
    X(batch, "Run a prompt set through the continuous-batching scheduler, with latency metrics") \
    X(serve, "Serve the model over an OpenAI-compatible HTTP API (docs/server.md)") \
    X(load, "Load-test an OpenAI-compatible endpoint: open-loop traffic, sweeps, SLOs (docs/load.md)") \
    X(log, "Run-log maintenance: path, settings, prune, retention, redact, check, salvage") \
    X(diff, "Show what differs between two runs of the run log (environment drift)") \
    /* end of the command table */
// clang-format on

namespace wb::cli {
#define WB_CLI_DECLARE(name, summary) int cmd_##name(const std::vector<std::string>& argv);
WB_CLI_COMMANDS(WB_CLI_DECLARE)
#undef WB_CLI_DECLARE
}  // namespace wb::cli

namespace {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>& argv);
};

#define WB_CLI_ENTRY(name, summary) {#name, summary, &wb::cli::cmd_##name},
const Command kCommands[] = {WB_CLI_COMMANDS(WB_CLI_ENTRY)};
#undef WB_CLI_ENTRY

// What users type: the table's identifier with '-' for '_' (chat_template
// is `workbench-cli chat-template`).
std::string cli_name(const Command& c) {
    std::string n = c.name;
    for (char& ch : n) {
        if (ch == '_') ch = '-';
    }
    return n;
}

void print_tool_help() {
    std::printf(
        "Usage: workbench-cli COMMAND [OPTIONS] [ARGS]\n"
        "Run local GGUF language models from the command line (Inference Workbench).\n"
        "\n"
        "Commands:\n");
    for (const Command& c : kCommands) std::printf("  %-13s %s\n", cli_name(c).c_str(), c.summary);
    std::printf(
        "\n"
        "Options:\n"
        "  -h, --help     show this help and exit\n"
        "      --version  print the version and git commit and exit\n"
        "\n"
        "Run 'workbench-cli COMMAND --help' for the options of a command.\n"
        "Without -m, commands use the bundled model (%s).\n",
        "stories260K.gguf");
}

}  // namespace

int main(int argc, char** argv) {
    // Past a file-size limit (ulimit -f) a write fails with EFBIG and is
    // reported like a full disk, instead of SIGXFSZ killing the process
    // halfway through a record.
    std::signal(SIGXFSZ, SIG_IGN);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_tool_help();
        return 2;
    }
    const std::string& first = args[0];
    if (first == "-h" || first == "--help" || first == "help") {
        print_tool_help();
        return 0;
    }
    if (first == "--version" || first == "-V") {
        std::printf("workbench-cli %s (git %s)\n", WB_VERSION, WB_GIT_COMMIT);
        return 0;
    }
    for (const Command& c : kCommands) {
        if (first != cli_name(c)) continue;
        const std::string name = cli_name(c);
        std::vector<std::string> rest(args.begin() + 1, args.end());
        try {
            int rc = c.run(rest);
            // Every command's output is checked once more here: a full disk,
            // a closed pipe or /dev/full must not end in exit status 0 with
            // the output cut short (stdio reports a failed write only here).
            if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
                std::fprintf(stderr,
                             "workbench-cli %s: error: standard output: cannot write: %s (the "
                             "output is incomplete)\n",
                             c.name, std::strerror(errno != 0 ? errno : EIO));
                return 1;
            }
            return rc;
        } catch (const wb::cli::UsageError& e) {
            std::fflush(stdout);
            std::fprintf(stderr, "workbench-cli: %s\nTry 'workbench-cli %s --help'.\n", e.what(),
                         name.c_str());
            return 2;
        } catch (const std::bad_alloc&) {
            // Mostly the KV cache of a large -c (times --concurrency) on the
            // CPU backend; "std::bad_alloc" alone names neither.
            std::fflush(stdout);
            std::fprintf(stderr,
                         "workbench-cli %s: error: out of memory (std::bad_alloc); the KV cache "
                         "grows with -c (times --concurrency for batch and bench): try smaller "
                         "values\n",
                         name.c_str());
            return 1;
        } catch (const std::exception& e) {
            std::fflush(stdout);
            std::fprintf(stderr, "workbench-cli %s: error: %s\n", name.c_str(), e.what());
            return 1;
        }
    }
    std::fprintf(stderr, "workbench-cli: unknown command '%s'\nTry 'workbench-cli --help'.\n",
                 first.c_str());
    return 2;
}
