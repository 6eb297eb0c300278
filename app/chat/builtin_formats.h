#pragma once
// Named built-in chat formats: the fallback when a model's
// tokenizer.chat_template is there but unusable (chat::choose_template; a
// model without one is completed as plain text), and a choice the user can
// make by hand. Each is a
// Jinja template rendered by the same interpreter as a model's own.

#include <optional>
#include <string_view>
#include <vector>

namespace wb::chat {

enum class BuiltinFormat {
    ChatML,   ///< <|im_start|>role\ncontent<|im_end|>\n (Qwen, SmolLM, Hermes, ...)
    Llama3,   ///< <|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
    Llama2,   ///< <s>[INST] <<SYS>>\nsystem\n<</SYS>>\n\nuser [/INST] answer </s>
    Gemma,    ///< <start_of_turn>user\ncontent<end_of_turn>\n; "model" for the assistant
    Phi3,     ///< <|user|>\ncontent<|end|>\n
    Mistral,  ///< <s>[INST] user [/INST]answer</s>
};

/// All formats, in menu order.
const std::vector<BuiltinFormat>& builtin_formats();
/// Short name used in settings, the CLI and the run log: "chatml",
/// "llama3", "llama2", "gemma", "phi3", "mistral".
std::string_view builtin_format_name(BuiltinFormat f);
/// Name shown to users: "ChatML", "Llama 3", ...
std::string_view builtin_format_label(BuiltinFormat f);
/// The format with short name `name` (case-insensitive), if any.
std::optional<BuiltinFormat> builtin_format_by_name(std::string_view name);
/// The Jinja source of the format. Variables: messages (role, content),
/// add_generation_prompt, bos_token, eos_token. Formats without a system
/// role (Llama 2, Gemma, Mistral) put the system text before the first
/// user message.
std::string_view builtin_format_source(BuiltinFormat f);

}  // namespace wb::chat
