#pragma once
// Prompt sets for batch runs: JSON Lines ({"prompt": ..., "max_tokens": ...,
// "id": ..., "stop": [...]}, or {"messages": [{"role": ..., "content": ...},
// ...]} in place of "prompt", as OpenAI's chat API takes them;
// https://jsonlines.org) or plain text with one prompt per line. Qt-free; the one parser of prompt
// files: the CLI's `batch` command and the GUI's Batch tab both read sets with it (same ids, same
// max_tokens and stop strings), and BatchRunner runs its entries.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"

namespace wb::core {

/// One prompt of the set.
struct PromptEntry {
    size_t line = 0;                    ///< 1-based line number in the file
    std::string id;                     ///< "id" (string or integer) or "line-<N>" when absent
    std::string prompt;                 ///< UTF-8 text ("" for a "messages" line)
    std::optional<int32_t> max_tokens;  ///< per-prompt "max_tokens", else the run's default
    std::vector<std::string> stop;      ///< per-prompt "stop" strings
    /// A "messages" line's conversation (empty for a "prompt" line), rendered
    /// with the model's chat template by the one rule (chat::choose_template).
    /// Last, so aggregate initializers of the earlier fields keep working.
    std::vector<chat::Message> messages;
};

/// A line that is not a valid entry.
struct PromptFileError {
    size_t line = 0;      ///< 1-based
    std::string problem;  ///< e.g. "not valid JSON: ...", "\"prompt\" is missing"
};

struct PromptFile {
    bool jsonl = false;                   ///< the format detected
    std::vector<PromptEntry> entries;     ///< valid entries, file order
    std::vector<PromptFileError> errors;  ///< malformed lines, file order
    /// Lines that run but have something ignored, file order: one per
    /// unknown key, problem "unknown key \"temprature\" ignored".
    std::vector<PromptFileError> warnings;
};

/// The text of an entry for people (tables, details): its prompt, or its
/// messages as chat::plain_text_prompt joins them. Never throws.
std::string entry_text(const PromptEntry& e);

/// Parses prompt-file text. The format is JSONL when the first non-blank
/// line starts with '{', plain text otherwise. Blank lines are skipped in
/// both. JSONL: each line one object with either a non-empty string
/// "prompt" or "messages", a non-empty array of objects each with a
/// non-empty string "role" and a string "content" (both on one line, or a
/// malformed "messages", is an error on its line); optional "id" (string or
/// integer), "max_tokens" (integer >= 1), "stop" (string or array of
/// strings); any other key is ignored with a warning naming it (a typo such
/// as "temprature" would otherwise be dropped without a word). Plain text:
/// the line is the prompt (a trailing CR is dropped). A leading UTF-8 byte
/// order mark is skipped before the format is chosen. Duplicate ids are
/// errors (results are matched by id). Never throws for bad content: every
/// problem becomes a PromptFileError with its line.
PromptFile parse_prompt_text(const std::string& text);

/// Reads and parses a file (wb::read_input_file: regular files of at most
/// 256 MiB). Throws std::runtime_error "<path>: cannot read the prompts
/// file ..." when it cannot be read, "... is not a regular file (it is a
/// FIFO ...)" for a FIFO, device (/dev/zero) or folder, and "... more than
/// the 256.0 MiB limit" for a larger file.
PromptFile read_prompt_file(const std::string& path);

}  // namespace wb::core
