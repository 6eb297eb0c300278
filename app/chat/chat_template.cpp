#include "chat/chat_template.h"

#include <openssl/evp.h>

#include <stdexcept>

#include "chat/jinja/json_value.h"

namespace wb::chat {

namespace {

std::string sha256_hex(std::string_view bytes) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("SHA-256 of the chat template failed (OpenSSL)");
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < len; ++i) {
        out += kHex[md[i] >> 4];
        out += kHex[md[i] & 15];
    }
    return out;
}

std::string token_text(const tokenizer::Vocab& v, int32_t id) {
    return id >= 0 ? v.text(id) : std::string();
}

}  // namespace

ChatTemplate ChatTemplate::from_source(std::string source, std::string name) {
    ChatTemplate t;
    t.parsed_ = jinja::Template::parse(source, name);
    t.sha256_ = sha256_hex(source);
    t.source_ = std::move(source);
    t.name_ = std::move(name);
    return t;
}

ChatTemplate ChatTemplate::builtin(BuiltinFormat f) {
    ChatTemplate t =
        from_source(std::string(builtin_format_source(f)), std::string(builtin_format_name(f)));
    t.builtin_ = f;
    return t;
}

ChatTemplate ChatTemplate::plain_text() {
    ChatTemplate t;
    t.name_ = kPlainTextName;
    t.sha256_ = sha256_hex("");
    t.plain_ = true;
    return t;
}

std::string ChatTemplate::render(const std::vector<Message>& messages, bool add_generation_prompt,
                                 const std::string& bos_token, const std::string& eos_token,
                                 const nlohmann::ordered_json& extra,
                                 const jinja::RenderOptions& options) const {
    if (plain_) return plain_text_prompt(messages);
    nlohmann::ordered_json vars = nlohmann::ordered_json::object();
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Message& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
    vars["messages"] = std::move(list);
    vars["add_generation_prompt"] = add_generation_prompt;
    vars["bos_token"] = bos_token;
    vars["eos_token"] = eos_token;
    if (extra.is_object()) {
        for (auto it = extra.begin(); it != extra.end(); ++it) vars[it.key()] = it.value();
    }
    return parsed_.render(jinja::from_json(vars), options);
}

BuiltinFormat guess_builtin_format(const tokenizer::Vocab& vocab) {
    if (vocab.find("<|im_start|>") >= 0) return BuiltinFormat::ChatML;
    if (vocab.find("<|start_header_id|>") >= 0) return BuiltinFormat::Llama3;
    if (vocab.find("<start_of_turn>") >= 0) return BuiltinFormat::Gemma;
    if (vocab.find("<|user|>") >= 0 && vocab.find("<|end|>") >= 0) return BuiltinFormat::Phi3;
    if (vocab.find("[INST]") >= 0) return BuiltinFormat::Mistral;
    return vocab.kind() == "spm" ? BuiltinFormat::Llama2 : BuiltinFormat::ChatML;
}

TemplateChoice choose_template(const gguf::File& file, const tokenizer::Vocab& vocab,
                               const std::string& requested) {
    std::optional<std::string> source;
    std::string read_error;
    try {
        source = file.get_string(kChatTemplateKey);
    } catch (const gguf::Error& e) {
        read_error = e.what();
    }
    return choose_template(source, read_error, vocab, requested, file.path());
}

TemplateChoice choose_template(const std::optional<std::string>& model_source,
                               const std::string& read_error, const tokenizer::Vocab& vocab,
                               const std::string& requested, const std::string& model_path) {
    if (requested == kPlainTextName) return {ChatTemplate::plain_text(), ""};
    if (!requested.empty() && requested != "model") {
        const auto f = builtin_format_by_name(requested);
        if (!f) {
            std::string names;
            for (const BuiltinFormat b : builtin_formats())
                names +=
                    std::string(names.empty() ? "" : ", ") + std::string(builtin_format_name(b));
            throw std::invalid_argument("unknown chat format '" + requested + "'; use 'model', '" +
                                        kPlainTextName + "' or one of: " + names);
        }
        return {ChatTemplate::builtin(*f), ""};
    }
    const std::string model = model_path.empty() ? std::string("the model") : model_path;
    const BuiltinFormat fallback = guess_builtin_format(vocab);
    const std::string fallback_text =
        "using the built-in " + std::string(builtin_format_label(fallback)) + " format";
    // A template that is there but cannot be read is a chat model whose
    // template is broken: a built-in format is the closer guess.
    if (!read_error.empty())
        return {ChatTemplate::builtin(fallback), read_error + "; " + fallback_text};
    if (!model_source || model_source->empty()) {
        // A base/completion model: it continues text, a chat format would
        // only confuse it.
        return {ChatTemplate::plain_text(),
                "no chat template in " + model +
                    ": plain text completion; pick a format with --chat-format NAME or the "
                    "Template picker"};
    }
    try {
        ChatTemplate t = ChatTemplate::from_source(*model_source, "model");
        // One short conversation as a probe: a template that parses but
        // cannot render a single user turn within the limits (a value
        // nested without end, a string doubled past the memory budget, a
        // loop past the time limit) is hostile or broken, and would fail
        // every request and every keystroke's token count after it.
        try {
            t.render({{"user", "Hello"}}, true, token_text(vocab, vocab.bos()),
                     token_text(vocab, vocab.eos()));
        } catch (const jinja::Error& e) {
            if (e.kind() == jinja::Error::Kind::Limit) throw;
        }
        return {std::move(t), ""};
    } catch (const jinja::Error& e) {
        return {ChatTemplate::builtin(fallback),
                (model_path.empty() ? std::string() : model_path + ": ") +
                    "the model's chat template cannot be used (" + e.what() + "); " +
                    fallback_text};
    }
}

ChatPrompt build_prompt(const ChatTemplate& tmpl, const tokenizer::Vocab& vocab,
                        const std::vector<Message>& messages, bool add_generation_prompt,
                        const nlohmann::ordered_json& extra, const jinja::RenderOptions& options) {
    ChatPrompt p;
    const std::string bos = token_text(vocab, vocab.bos());
    const std::string eos = token_text(vocab, vocab.eos());
    p.text = tmpl.render(messages, add_generation_prompt, bos, eos, extra, options);
    p.template_name = tmpl.name();
    p.template_sha256 = tmpl.sha256();
    p.add_bos = vocab.add_bos();
    p.pre_tokenizer = vocab.pre_family();
    p.stop_ids = vocab.eog_ids();
    if (tmpl.is_plain_text()) {
        // A raw prompt: BOS as the vocabulary says, no special-token parsing.
        p.ids = vocab.tokenize(p.text, /*add_special=*/true);
        p.parse_special = false;
        return p;
    }
    // llama.cpp common_chat_templates_apply: BOS/EOS appear once.
    if (vocab.add_bos() && !bos.empty() && p.text.compare(0, bos.size(), bos) == 0)
        p.text.erase(0, bos.size());
    if (vocab.add_eos() && !eos.empty() && p.text.size() >= eos.size() &&
        p.text.compare(p.text.size() - eos.size(), eos.size(), eos) == 0) {
        p.text.resize(p.text.size() - eos.size());
    }
    p.ids = vocab.tokenize(p.text, /*add_special=*/true, /*parse_special=*/true);
    p.parse_special = true;
    return p;
}

}  // namespace wb::chat
