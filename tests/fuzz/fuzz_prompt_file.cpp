// fuzz_prompt_file: arbitrary bytes as a batch prompt file (JSON Lines or
// plain text) -> parse_prompt_text. It must never throw; every entry and
// error carries a line number inside the file; entries have a non-empty
// prompt and unique ids.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "core/prompt_file.h"

namespace {
[[noreturn]] void finding(const char* what, size_t line) {
    std::fprintf(stderr, "%s (line %zu)\n", what, line);
    std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    size_t n_lines = 1;
    for (const char c : text) n_lines += c == '\n';
    const wb::core::PromptFile pf = wb::core::parse_prompt_text(text);  // must not throw
    std::set<std::string> ids;
    for (const auto& e : pf.entries) {
        if (e.line == 0 || e.line > n_lines) finding("entry line number outside the file", e.line);
        if (e.prompt.empty() == e.messages.empty())
            finding("entry with neither or both of a prompt and messages", e.line);
        if (e.id.empty()) finding("entry without an id", e.line);
        if (!ids.insert(e.id).second) finding("duplicate id accepted", e.line);
        if (e.max_tokens && (*e.max_tokens < 1 || *e.max_tokens > 1000000))
            finding("max_tokens outside [1, 1000000] accepted", e.line);
    }
    for (const auto& w : pf.warnings) {
        if (w.line == 0 || w.line > n_lines)
            finding("warning line number outside the file", w.line);
    }
    for (const auto& err : pf.errors) {
        if (err.line == 0 || err.line > n_lines)
            finding("error line number outside the file", err.line);
        if (err.problem.empty()) finding("error without a problem", err.line);
    }
    return 0;
}
