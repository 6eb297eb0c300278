// fuzz_chat_template: arbitrary bytes as a chat template -> parse, then
// render with a three-turn conversation under small limits. Any outcome but
// a jinja::Error that names a line inside the template is a finding: a
// crash, a sanitizer report, a hang (-timeout), another exception type
// escaping, or an error without a message.
//
// Random byte mutations rarely build the inputs that break interpreters:
// nesting thousands deep, chains of thousands of operators, loops
// that double a value. An input that starts with byte 0xFF is therefore a
// recipe, not template text: each following group of 3 bytes picks a
// construct and how many times to repeat it (up to 1023), and the
// expansion is the template (see expand()). The dictionary
// tests/fuzz/chat_template.dict gives the mutator Jinja's tokens.

#include <chrono>
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

std::string times(const std::string& s, size_t n) {
    std::string out;
    for (size_t i = 0; i < n && out.size() < (2u << 20); ++i) out += s;
    return out;
}

// One construct of a recipe, repeated `n` times (chains, nesting, growth
// loops, shared and cyclic values).
std::string construct(uint8_t op, size_t n) {
    const std::string k = std::to_string(n);
    const std::string loop = "{% for i in range(" + std::to_string(n) + ") %}";
    // Shared sublists: 2^m items; m stays small enough that comparing two
    // of them is quick (the clock stopping a 2^60 comparison is a unit
    // test's job, not each fuzz input's).
    const std::string small_loop = "{% for i in range(" + std::to_string(n % 24) + ") %}";
    switch (op % 20) {
        case 0:
            return "{{ 1" + times(" + 1", n) + " }}";
        case 1:
            return "{{ 'a'" + times(" ~ 'a'", n) + " }}";
        case 2:
            return "{{ messages" + times(".x", n) + " }}";
        case 3:
            return "{{ messages" + times("[0]", n) + " }}";
        case 4:
            return "{{ 'a'" + times("|trim", n) + " }}";
        case 5:
            return "{{ " + times("(", n) + "1" + times(")", n) + " }}";
        case 6:
            return "{{ " + times("[", n) + times("]", n) + " }}";
        case 7:
            return times("{% if true %}", n) + "x" + times("{% endif %}", n);
        case 8:
            return "{{ 1" + times(" if true else 1", n) + " }}";
        case 9:
            return "{{ " + times("not ", n) + "true }}";
        case 10:
            return "{% set ns = namespace(x=[]) %}" + loop + "{% set ns.x = [ns.x] %}{% endfor %}" +
                   "{{ ns.x }}";
        case 11:
            return "{% set ns = namespace(s='x') %}" + loop +
                   "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s|length }}";
        case 12:
            return "{% set ns = namespace(s=[1]) %}" + loop +
                   "{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s|length }}";
        case 13:
            return "{{ 'a'|center(" + k + "000) }}{{ 'a'|indent(" + k + "000, true) }}";
        case 14:
            return "{% set s = 'a' * " + std::to_string(n % 5000) + " %}{{ (s|replace('a', s))" +
                   "|replace('a', s)|length }}";
        case 15:
            return "{% set ns = namespace(a=1) %}{% set ns.self = ns %}{% set ns.l = [ns, ns] %}"
                   "{{ ns }}{{ ns == ns }}{{ ns.l|tojson }}";
        case 16:
            return "{% set ns = namespace(a=[1], b=[1]) %}" + small_loop +
                   "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}"
                   "{{ ns.a == ns.b }}{{ ns.a }}{{ ns.a|tojson }}";
        case 17:
            return "{% macro m(d) %}{% if d > 0 %}{{ m(d - 1) }}{% endif %}{% endmacro %}{{ m(" +
                   k + ") }}";
        case 18:
            return "{% set ns = namespace(x=0) %}" + loop +
                   "{% set ns.x = namespace(y=ns.x) %}{% endfor %}{{ ns.x }}";
        default:
            return "{{ ('a' * " + k + ").split('') }}{{ ('a ' * " + k + ").split() }}";
    }
}

std::string expand(const uint8_t* d, size_t n) {
    std::string out;
    for (size_t i = 1; i + 3 <= n && out.size() < (2u << 20); i += 3) {
        // Up to 1023: past every depth limit (256, 512) and the doubling
        // loops' budget, while each input stays quick to run (CI runs a
        // fixed number of them).
        const size_t count =
            1 +
            (((static_cast<size_t>(d[i + 1]) | static_cast<size_t>(d[i + 2]) << 8) & 0x1FF) << 1);
        out += construct(d[i], count);
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string source = size > 0 && data[0] == 0xFF
                                   ? expand(data, size)
                                   : std::string(reinterpret_cast<const char*>(data), size);
    int n_lines = 1;
    for (const char c : source) n_lines += c == '\n';
    wb::chat::jinja::RenderOptions opts;
    opts.limits.max_output_bytes = 1 << 20;
    opts.limits.max_steps = 200000;
    opts.limits.max_call_depth = 32;
    opts.limits.max_bytes_held = 16u << 20;
    opts.limits.max_time = std::chrono::milliseconds(500);
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
