// `workbench-cli chat-template FILE`: renders a conversation (JSON on stdin)
// with a chat template and prints the prompt, so users can see exactly what
// a model is given. FILE is a GGUF model (its tokenizer.chat_template, BOS
// and EOS texts, and --ids prints the prompt's token ids) or a Jinja
// template file.

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "chat/chat_template.h"
#include "chat/json_input.h"
#include "chat_options.h"
#include "common_options.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "chat-template",
    "FILE",
    "Render a conversation (JSON messages on stdin) with a chat template and print the prompt.",
    "FILE is a GGUF model (its own tokenizer.chat_template unless --chat-format names a\n"
    "built-in format; BOS/EOS come from its vocabulary) or a Jinja template file.\n"
    "stdin holds a JSON array of {\"role\", \"content\"} messages, or an object with\n"
    "\"messages\" and any other template variables. Rendering matches Python's Jinja2 as\n"
    "Hugging Face transformers uses it; with a model, a leading BOS text is dropped\n"
    "when the tokenizer adds BOS itself, as llama.cpp does. Errors name the template\n"
    "line.",
    concat(chat_template_options(),
           {
               {"no-generation-prompt", 0, "", "do not end with the assistant's turn header"},
               {"ids", 0, "", "also print the prompt's token ids (FILE must be a model)"},
               {"bos", 0, "TEXT", "bos_token for a template file (default: empty)"},
               {"eos", 0, "TEXT", "eos_token for a template file (default: empty)"},
           }),
    1,
    1,
};

bool is_gguf(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error(path + ": cannot open");
    char magic[4] = {};
    const size_t n = std::fread(magic, 1, 4, f);
    std::fclose(f);
    return n == 4 && std::string(magic, 4) == "GGUF";
}

std::string read_file(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error(path + ": cannot open");
    std::string s;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    const bool bad = std::ferror(f);
    std::fclose(f);
    if (bad) throw std::runtime_error(path + ": cannot read");
    return s;
}

}  // namespace

int cmd_chat_template(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const std::string path = args.positional[0];
    std::string input;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, stdin)) > 0;) input.append(buf, n);
    nlohmann::ordered_json doc;
    try {
        doc = chat::parse_json_input(input, "chat-template: stdin");
    } catch (const chat::JsonInputError& e) {
        throw UsageError(e.what());
    }
    nlohmann::ordered_json vars = chat_vars_from_args(args);
    nlohmann::ordered_json messages = doc;
    if (doc.is_object()) {
        messages = doc.value("messages", nlohmann::ordered_json::array());
        for (auto it = doc.begin(); it != doc.end(); ++it) {
            if (it.key() != "messages") vars[it.key()] = it.value();
        }
    }
    if (!messages.is_array()) throw UsageError("chat-template: \"messages\" must be an array");
    std::vector<chat::Message> turns;
    for (size_t i = 0; i < messages.size(); ++i) {
        const auto& m = messages[i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() ||
            (m.contains("content") && !m["content"].is_string())) {
            throw UsageError("chat-template: message " + std::to_string(i) +
                             " needs a string \"role\" and a string \"content\"");
        }
        turns.push_back({m["role"].get<std::string>(), m.value("content", std::string())});
    }
    const bool agp = !args.has("no-generation-prompt");

    if (is_gguf(path)) {
        const gguf::File f = gguf::File::open(path);
        const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(f);
        const chat::TemplateChoice choice =
            chat::choose_template(f, vocab, args.get("chat-format").value_or(""));
        if (!choice.note.empty()) std::fprintf(stderr, "note: %s\n", choice.note.c_str());
        const chat::ChatPrompt p = chat::build_prompt(choice.tmpl, vocab, turns, agp, vars);
        std::fwrite(p.text.data(), 1, p.text.size(), stdout);
        if (args.has("ids")) {
            std::string line = "\n";
            for (size_t i = 0; i < p.ids.size(); ++i)
                line += (i ? " " : "") + std::to_string(p.ids[i]);
            std::printf("%s\n", line.c_str());
        }
        std::fprintf(stderr, "%s\n", describe_chat_prompt(p).c_str());
        return 0;
    }
    if (args.has("ids")) throw UsageError("chat-template: --ids needs a model file (GGUF)");
    if (args.has("chat-format")) {
        throw UsageError(
            "chat-template: --chat-format chooses a model's template; FILE is a template file");
    }
    const chat::ChatTemplate t = chat::ChatTemplate::from_source(read_file(path), path);
    const std::string text =
        t.render(turns, agp, args.get("bos").value_or(""), args.get("eos").value_or(""), vars);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return 0;
}

}  // namespace wb::cli
