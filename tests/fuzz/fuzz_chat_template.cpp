// fuzz_chat_template: arbitrary bytes as a chat template -> parse, then
// render with a three-turn conversation under small limits. Any outcome but
// a jinja::Error that names a line inside the template is a finding: a
// crash, a sanitizer report, a hang (-timeout), another exception type
// escaping, or an error without a message.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "chat/jinja/json_value.h"
#include "chat/jinja/template.h"

namespace {

[[noreturn]] void finding(const char* what, const char* detail) {
    std::fprintf(stderr, "%s: %s\n", what, detail);
    std::abort();
}

const wb::chat::jinja::Value& variables() {
    static const wb::chat::jinja::Value v =
        wb::chat::jinja::from_json(nlohmann::ordered_json::parse(R"({
        "messages": [
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Hi <|im_end|> {{ x }}"},
            {"role": "assistant", "content": "Hello", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
            {"role": "user", "content": "Bye"}
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"
    })"));
    return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string source(reinterpret_cast<const char*>(data), size);
    int n_lines = 1;
    for (const char c : source) n_lines += c == '\n';
    wb::chat::jinja::RenderOptions opts;
    opts.limits.max_output_bytes = 1 << 20;
    opts.limits.max_steps = 200000;
    opts.limits.max_call_depth = 32;
    opts.strftime_now = [](const std::string&) { return std::string("26 Jul 2024"); };
    try {
        const auto t = wb::chat::jinja::Template::parse(source, "fuzz");
        (void)t.render(variables(), opts);
    } catch (const wb::chat::jinja::Error& e) {
        if (e.message().empty()) finding("error without a message", e.what());
        if (e.line() < 0 || e.line() > n_lines)
            finding("error line outside the template", e.what());
    } catch (const std::bad_alloc&) {
        finding("allocation failed", "std::bad_alloc escaped");
    } catch (const std::exception& e) {
        finding("non-template exception escaped", e.what());
    }
    return 0;
}
