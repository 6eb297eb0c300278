#include "chat_options.h"

#include "chat/json_input.h"

namespace wb::cli {

std::vector<OptionSpec> chat_template_options() {
    return {
        {"chat-format", 0, "NAME",
         "chat template: 'model' (the model's own, default; plain text for a model without "
         "one), 'none' (plain text completion) or chatml, llama3, llama2, gemma, phi3, mistral"},
        {"chat-var", 0, "KEY=VALUE",
         "extra template variable, e.g. date_string=\"26 Jul 2024\" (VALUE is JSON if it parses, "
         "else text; repeatable)"},
    };
}

std::vector<OptionSpec> chat_turn_options() {
    return {
        {"system", 0, "TEXT", "system message (with --chat)"},
        {"user", 0, "TEXT", "a user turn (with --chat; repeatable, in order with --assistant)"},
        {"assistant", 0, "TEXT", "an earlier assistant turn (with --chat; repeatable)"},
    };
}

std::vector<chat::Message> chat_turns_from_args(const ParsedArgs& args) {
    std::vector<chat::Message> turns;
    bool has_user = false;
    for (const auto& [name, value] : args.in_order()) {
        if (name == "system") {
            turns.insert(turns.begin(), chat::Message{"system", value});
        } else if (name == "user" || name == "assistant") {
            has_user = has_user || name == "user";
            turns.push_back({name, value});
        }
    }
    if (!has_user) throw UsageError("--chat needs at least one --user turn (or -p TEXT)");
    return turns;
}

nlohmann::ordered_json chat_vars_from_args(const ParsedArgs& args) {
    nlohmann::ordered_json vars = nlohmann::ordered_json::object();
    for (const std::string& kv : args.get_all("chat-var")) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
            throw UsageError("--chat-var: '" + kv + "' is not KEY=VALUE");
        }
        const std::string value = kv.substr(eq + 1);
        try {
            chat::check_json_depth(value, "--chat-var " + kv.substr(0, eq));
        } catch (const chat::JsonInputError& e) {
            throw UsageError(e.what());
        }
        nlohmann::ordered_json v = nlohmann::ordered_json::parse(value, nullptr, false);
        vars[kv.substr(0, eq)] = v.is_discarded() ? nlohmann::ordered_json(value) : v;
    }
    return vars;
}

std::string describe_chat_prompt(const core::PromptFacts& f, size_t n_tokens) {
    return "chat template: " + f.template_name + " (sha256 " + f.template_sha256.substr(0, 12) +
           "), " + std::to_string(n_tokens) + " prompt tokens" +
           (f.add_bos ? ", BOS added by the tokenizer" : "") +
           (f.pre_tokenizer.empty() ? "" : ", pre-tokenizer " + f.pre_tokenizer);
}

std::string describe_chat_prompt(const chat::ChatPrompt& p) {
    core::PromptFacts f;
    f.template_name = p.template_name;
    f.template_sha256 = p.template_sha256;
    f.add_bos = p.add_bos;
    f.pre_tokenizer = p.pre_tokenizer;
    return describe_chat_prompt(f, p.ids.size());
}

}  // namespace wb::cli
