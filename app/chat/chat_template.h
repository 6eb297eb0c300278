#pragma once
// A model's chat template and how a conversation becomes prompt text and
// token ids (what llama.cpp's common_chat_templates_apply + llama_tokenize
// do): the template renders the messages, a leading BOS text is dropped when
// the vocabulary adds BOS itself, the text is tokenized with special tokens
// parsed, and generation stops at the vocabulary's end-of-generation tokens.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chat/builtin_formats.h"
#include "chat/jinja/template.h"
#include "gguf/gguf.h"
#include "tokenizer/vocab.h"

namespace wb::chat {

/// One turn of a conversation.
struct Message {
    std::string role;     ///< "system", "user", "assistant" (templates may accept others)
    std::string content;  ///< UTF-8 text
};

/// A parsed chat template with its identity for the run log.
class ChatTemplate {
  public:
    /// Parses `source`. `name` is what users and the run log see ("model"
    /// for a GGUF's own template, a built-in's short name, a file name).
    /// Throws jinja::Error (Kind::Syntax) naming the construct and line.
    static ChatTemplate from_source(std::string source, std::string name);
    /// A built-in format (never throws).
    static ChatTemplate builtin(BuiltinFormat f);
    /// No template: plain text completion (name "none", empty source).
    /// render() joins the messages as plain_text_prompt() does; build_prompt
    /// tokenizes that text without parsing special tokens, as a raw prompt.
    /// Never throws.
    static ChatTemplate plain_text();

    const std::string& name() const { return name_; }
    const std::string& source() const { return source_; }
    /// SHA-256 of the source bytes, 64 lowercase hex digits.
    const std::string& sha256() const { return sha256_; }
    /// The built-in format this is, if it is one.
    std::optional<BuiltinFormat> builtin_format() const { return builtin_; }
    /// True for plain_text(): no template, the messages are joined as text.
    bool is_plain_text() const { return plain_; }

    /// Renders `messages` with the variables templates expect: messages
    /// (list of {role, content}), add_generation_prompt, bos_token,
    /// eos_token, plus `extra` (a JSON object, e.g. {"date_string": "26 Jul
    /// 2024"} or {"enable_thinking": false}; its keys win). Throws
    /// jinja::Error (the template's raise_exception message, an undefined
    /// variable, a limit) naming the line.
    std::string render(const std::vector<Message>& messages, bool add_generation_prompt,
                       const std::string& bos_token, const std::string& eos_token,
                       const nlohmann::ordered_json& extra = nlohmann::ordered_json::object(),
                       const jinja::RenderOptions& options = {}) const;

  private:
    std::string name_, source_, sha256_;
    std::optional<BuiltinFormat> builtin_;
    bool plain_ = false;
    jinja::Template parsed_;
};

/// The conversation as plain text, for a model without a chat template (a
/// base/completion model continues text): the contents in order, each
/// message but the first and the assistant's on a new line (an assistant
/// reply continues the text before it). {system S, user U} -> "S\nU";
/// {user U1, assistant A1, user U2} -> "U1A1\nU2". Roles are not written.
/// Never throws.
std::string plain_text_prompt(const std::vector<Message>& messages);

/// Template name meaning "no template: plain text completion".
inline constexpr const char* kPlainTextName = "none";

/// GGUF key of a model's own template.
inline constexpr const char* kChatTemplateKey = "tokenizer.chat_template";

/// The built-in format whose marker tokens the vocabulary has
/// ("<|im_start|>" ChatML, "<|start_header_id|>" Llama 3, "<start_of_turn>"
/// Gemma, "<|user|>" Phi-3, "[INST]" Mistral), else Llama 2 for
/// SentencePiece vocabularies and ChatML for the rest.
BuiltinFormat guess_builtin_format(const tokenizer::Vocab& vocab);

/// The template a chat with this model uses, and why.
struct TemplateChoice {
    /// The template, or ChatTemplate::plain_text() (is_plain_text()) for
    /// plain text completion.
    ChatTemplate tmpl;
    /// Empty when the requested template is used; otherwise what happened,
    /// e.g. "m.gguf: the model's chat template cannot be used
    /// (chat_template:12: unknown filter 'x'); using the built-in ChatML
    /// format" or "no chat template in m.gguf: plain text completion; pick a
    /// format with --chat-format NAME or the Template picker".
    std::string note;
};

/// The one rule every surface (CLI generate --chat and batch, the app's
/// Chat and Batch tabs) uses to pick how messages become a prompt:
///  - `requested` a built-in's short name: that format, no note;
///  - `requested` "none" (kPlainTextName): plain text, no note;
///  - `requested` "" or "model":
///    - the GGUF has no tokenizer.chat_template (absent or ""): it is a
///      base/completion model, so plain text completion, with the note
///      "no chat template in MODEL: plain text completion; pick a format
///      with --chat-format NAME or the Template picker";
///    - the template is present but unusable (not a string, does not
///      parse, or hits a limit (jinja::Error Kind::Limit) rendering one
///      user turn): guess_builtin_format() with a note naming the model
///      file and the error;
///    - else the model's own template, no note.
/// Throws std::invalid_argument for an unknown name.
TemplateChoice choose_template(const gguf::File& file, const tokenizer::Vocab& vocab,
                               const std::string& requested = "");

/// The same choice from a template already read from the file:
/// `model_source` is tokenizer.chat_template (nullopt when absent; "" counts
/// as absent), `read_error` a reason it could not be read (e.g. not a
/// string; "" when it could), `model_path` the file notes name ("" = "the
/// model"). For callers that keep the vocabulary but not the file (the
/// engine session). Throws std::invalid_argument for an unknown name.
TemplateChoice choose_template(const std::optional<std::string>& model_source,
                               const std::string& read_error, const tokenizer::Vocab& vocab,
                               const std::string& requested = "",
                               const std::string& model_path = "");

/// A conversation ready to run, with what the run log records about how it
/// was built.
struct ChatPrompt {
    std::string text;               ///< rendered text, BOS/EOS text removed as below
    std::vector<int32_t> ids;       ///< tokenize(text, add_special = true, parse_special = true)
    std::vector<int32_t> stop_ids;  ///< vocab.eog_ids(): generation ends at any of these
    std::string template_name;
    std::string template_sha256;
    bool add_bos = false;       ///< the vocabulary put BOS in front
    std::string pre_tokenizer;  ///< vocab.pre_family() ("" for SentencePiece)
    bool parse_special = true;  ///< special-token text in the rendering became control ids
};

/// Renders `messages` with `tmpl` (bos_token/eos_token: the vocabulary's
/// BOS/EOS texts) and tokenizes the result. A plain-text `tmpl`
/// (ChatTemplate::plain_text) gives plain_text_prompt(messages), tokenized
/// as a raw prompt (BOS as the vocabulary says, special tokens not parsed:
/// parse_special false). As llama.cpp does, a rendering
/// that starts with the BOS text loses it when the vocabulary adds BOS
/// itself (so BOS appears once), and one that ends with the EOS text loses
/// it when the vocabulary adds EOS. Throws jinja::Error from rendering and
/// std::runtime_error from tokenizing.
ChatPrompt build_prompt(const ChatTemplate& tmpl, const tokenizer::Vocab& vocab,
                        const std::vector<Message>& messages, bool add_generation_prompt = true,
                        const nlohmann::ordered_json& extra = nlohmann::ordered_json::object(),
                        const jinja::RenderOptions& options = {});

}  // namespace wb::chat
