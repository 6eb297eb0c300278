#include "chat/builtin_formats.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace wb::chat {

namespace {

// The system message, if first, is split off as `system` and the rest
// iterated as `turns` (shared head of the formats without a system role).
constexpr std::string_view kSplitSystem =
    "{%- if messages and messages[0]['role'] == 'system' -%}\n"
    "{%- set system = messages[0]['content'] -%}{%- set turns = messages[1:] -%}\n"
    "{%- else -%}{%- set system = '' -%}{%- set turns = messages -%}{%- endif -%}\n";

const std::string kChatML =
    "{%- for m in messages -%}\n"
    "{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}\n";

const std::string kLlama3 =
    "{{- bos_token -}}\n"
    "{%- for m in messages -%}\n"
    "{{- '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] | trim + "
    "'<|eot_id|>' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' "
    "-}}{%- endif -%}\n";

const std::string kLlama2 = std::string(kSplitSystem) +
                            "{%- for m in turns -%}\n"
                            "{%- if m['role'] == 'user' -%}\n"
                            "{%- set content = m['content'] | trim -%}\n"
                            "{%- if loop.first and system -%}{%- set content = '<<SYS>>\\n' + "
                            "system | trim + '\\n<</SYS>>\\n\\n' + content -%}{%- endif -%}\n"
                            "{{- bos_token + '[INST] ' + content + ' [/INST]' -}}\n"
                            "{%- else -%}\n"
                            "{{- ' ' + m['content'] | trim + ' ' + eos_token -}}\n"
                            "{%- endif -%}\n"
                            "{%- endfor -%}\n";

const std::string kGemma =
    std::string(kSplitSystem) +
    "{{- bos_token -}}\n"
    "{%- for m in turns -%}\n"
    "{%- set role = 'model' if m['role'] == 'assistant' else m['role'] -%}\n"
    "{%- set content = m['content'] | trim -%}\n"
    "{%- if loop.first and system -%}{%- set content = system | trim + '\\n\\n' + content -%}{%- "
    "endif -%}\n"
    "{{- '<start_of_turn>' + role + '\\n' + content + '<end_of_turn>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}\n";

const std::string kPhi3 =
    "{%- for m in messages -%}\n"
    "{{- '<|' + m['role'] + '|>\\n' + m['content'] + '<|end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}{{- '<|assistant|>\\n' -}}{%- endif -%}\n";

const std::string kMistral = std::string(kSplitSystem) +
                             "{{- bos_token -}}\n"
                             "{%- for m in turns -%}\n"
                             "{%- if m['role'] == 'user' -%}\n"
                             "{%- set content = m['content'] -%}\n"
                             "{%- if loop.first and system -%}{%- set content = system + '\\n\\n' "
                             "+ content -%}{%- endif -%}\n"
                             "{{- '[INST] ' + content + ' [/INST]' -}}\n"
                             "{%- else -%}\n"
                             "{{- m['content'] + eos_token -}}\n"
                             "{%- endif -%}\n"
                             "{%- endfor -%}\n";

}  // namespace

const std::vector<BuiltinFormat>& builtin_formats() {
    static const std::vector<BuiltinFormat> all = {BuiltinFormat::ChatML, BuiltinFormat::Llama3,
                                                   BuiltinFormat::Llama2, BuiltinFormat::Gemma,
                                                   BuiltinFormat::Phi3,   BuiltinFormat::Mistral};
    return all;
}

std::string_view builtin_format_name(BuiltinFormat f) {
    switch (f) {
        case BuiltinFormat::ChatML:
            return "chatml";
        case BuiltinFormat::Llama3:
            return "llama3";
        case BuiltinFormat::Llama2:
            return "llama2";
        case BuiltinFormat::Gemma:
            return "gemma";
        case BuiltinFormat::Phi3:
            return "phi3";
        case BuiltinFormat::Mistral:
            return "mistral";
    }
    return "chatml";
}

std::string_view builtin_format_label(BuiltinFormat f) {
    switch (f) {
        case BuiltinFormat::ChatML:
            return "ChatML";
        case BuiltinFormat::Llama3:
            return "Llama 3";
        case BuiltinFormat::Llama2:
            return "Llama 2";
        case BuiltinFormat::Gemma:
            return "Gemma";
        case BuiltinFormat::Phi3:
            return "Phi-3";
        case BuiltinFormat::Mistral:
            return "Mistral";
    }
    return "ChatML";
}

std::optional<BuiltinFormat> builtin_format_by_name(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const BuiltinFormat f : builtin_formats()) {
        if (builtin_format_name(f) == n) return f;
    }
    return std::nullopt;
}

std::string_view builtin_format_source(BuiltinFormat f) {
    switch (f) {
        case BuiltinFormat::ChatML:
            return kChatML;
        case BuiltinFormat::Llama3:
            return kLlama3;
        case BuiltinFormat::Llama2:
            return kLlama2;
        case BuiltinFormat::Gemma:
            return kGemma;
        case BuiltinFormat::Phi3:
            return kPhi3;
        case BuiltinFormat::Mistral:
            return kMistral;
    }
    return kChatML;
}

}  // namespace wb::chat
