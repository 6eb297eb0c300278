#pragma once
// Options of commands that render a conversation with a chat template
// (generate --chat, chat-template):
//   --chat-format NAME   "model" (the GGUF's tokenizer.chat_template, the
//                        default; chat::choose_template: plain text for a
//                        model without one), "none" (plain text) or a
//                        built-in format (chatml, llama3, ...)
//   --chat-var KEY=VALUE extra template variable; VALUE is read as JSON when
//                        it parses (true, 3, "x", {...}), else as a string
// and, for generate, the turns: --system TEXT, --user TEXT, --assistant TEXT
// (repeatable, kept in command-line order).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "chat/chat_template.h"
#include "core/settings_json.h"

namespace wb::cli {

/// --chat-format and --chat-var.
std::vector<OptionSpec> chat_template_options();
/// --system, --user, --assistant.
std::vector<OptionSpec> chat_turn_options();

/// The --system/--user/--assistant turns in command-line order (a --system
/// anywhere goes first, as templates expect it there). Throws UsageError
/// when there is no --user turn.
std::vector<chat::Message> chat_turns_from_args(const ParsedArgs& args);

/// The --chat-var variables as a JSON object. Throws UsageError for an
/// entry without '='.
nlohmann::ordered_json chat_vars_from_args(const ParsedArgs& args);

/// One line saying which template a prompt used, for stderr:
/// "chat template: model (sha256 1a2b3c4d...), BOS added by the tokenizer".
std::string describe_chat_prompt(const chat::ChatPrompt& p);
/// The same line from a prepared request's facts and its prompt's token count.
std::string describe_chat_prompt(const core::PromptFacts& f, size_t n_tokens);

}  // namespace wb::cli
