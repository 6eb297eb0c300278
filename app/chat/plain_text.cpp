// plain_text_prompt on its own: the prompt-file reader (and its fuzzer)
// needs it without the template interpreter.

#include "chat/chat_template.h"

namespace wb::chat {

std::string plain_text_prompt(const std::vector<Message>& messages) {
    std::string out;
    for (size_t i = 0; i < messages.size(); ++i) {
        if (i > 0 && messages[i].role != "assistant") out += '\n';
        out += messages[i].content;
    }
    return out;
}

}  // namespace wb::chat
