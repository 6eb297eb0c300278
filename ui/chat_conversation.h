#pragma once
// The Chat tab's conversation state, apart from its widgets: the turns, the
// system prompt and the chat template in use, and how they become the
// prompt the model is given. A model with tokenizer.chat_template is
// rendered with it (or a built-in format the user picks) by app/chat's
// build_prompt, the same code as `workbench-cli generate --chat` and
// `workbench-cli chat-template`; a model without one is completed as plain
// text until the user picks a built-in format (story models continue text;
// a chat format would only confuse them).

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"

namespace wb::tokenizer {
class Vocab;
}

namespace wb::ui {

/// One turn of the conversation.
struct ChatTurn {
    bool user = true;
    QString text;
    QString footer;         ///< reply facts once finished
    QList<int> token_ids;   ///< reply tokens (replies only)
    QString finish_reason;  ///< "" while streaming
};

/// The prompt of a conversation: what the model is given.
struct ChatPromptText {
    QString text;              ///< the prompt as text (rendered template or plain text)
    std::vector<int32_t> ids;  ///< [n_prompt] token ids, BOS included where the vocab adds it
    QJsonObject format;        ///< how it was built, for the run log; empty for plain text
    QString error;             ///< why it could not be built ("" = ok; ids then empty)
    int tokens() const { return static_cast<int>(ids.size()); }
};

/// Conversation + system prompt + template choice of the Chat tab.
class ChatConversation {
  public:
    /// Template choice meaning "plain text completion, no template".
    static constexpr const char* kNone = "none";
    /// Template choice meaning "the model's tokenizer.chat_template".
    static constexpr const char* kModel = "model";

    /// Takes a newly loaded model: its vocabulary (null: no model), its
    /// tokenizer.chat_template (nullopt: none) and why that could not be
    /// read ("" if it could). Resets the template choice to the model's
    /// default (defaultTemplate()); the turns stay.
    void setModel(std::shared_ptr<const tokenizer::Vocab> vocab,
                  std::optional<std::string> model_template, std::string read_error);
    bool hasModel() const { return vocab_ != nullptr; }
    /// True when the loaded model carries tokenizer.chat_template.
    bool modelHasTemplate() const {
        return model_template_.has_value() && !model_template_->empty();
    }

    /// "model" when the model carries a chat template, else "none".
    QString defaultTemplate() const;
    /// The choices offered: "model" (only when the model has a template),
    /// the built-in short names (chatml, llama3, ...), "none".
    QStringList templateChoices() const;
    /// What a choice is called in the picker: "Model's own
    /// (tokenizer.chat_template)", "ChatML (built-in)", "None: plain text".
    static QString templateLabel(const QString& choice);
    /// Picks the template by choice name ("" = defaultTemplate()). Returns
    /// false (choice unchanged) for an unknown name.
    bool setTemplate(const QString& choice);
    /// The current choice ("model", a built-in short name or "none").
    QString templateChoice() const { return choice_; }
    /// True when prompts are rendered by a chat template (not plain text).
    bool usesTemplate() const { return tmpl_.has_value(); }
    /// The template in use, if any.
    const std::optional<chat::ChatTemplate>& chatTemplate() const { return tmpl_; }
    /// One line on the template in use and where it comes from, e.g.
    /// "tokenizer.chat_template from the model file · sha256 3f2a9c1b0e4d".
    QString templateSource() const;
    /// Why the requested template is not the one in use ("" normally), e.g.
    /// the model's template did not parse and a built-in replaced it.
    QString templateNote() const { return note_; }

    void setSystemPrompt(const QString& s) { system_ = s; }
    const QString& systemPrompt() const { return system_; }

    QList<ChatTurn>& turns() { return turns_; }
    const QList<ChatTurn>& turns() const { return turns_; }

    /// The messages of `turns` (user -> "user", replies -> "assistant"),
    /// after the system prompt when it is not empty; `pending_user`, when
    /// not empty, is added as a last user message. An empty last reply (one
    /// being generated) is left out.
    std::vector<chat::Message> messages(const QList<ChatTurn>& turns,
                                        const QString& pending_user = {}) const;
    /// The prompt for `turns` (+ `pending_user`): rendered by the chat
    /// template with the generation prompt and tokenized with special
    /// tokens parsed (chat::build_prompt); without a template, the plain
    /// text (system prompt, then the turns, each later user message on a
    /// new line) tokenized as the scheduler does (BOS as the vocabulary
    /// says, no special tokens). Never throws: a template error (e.g. a
    /// template that refuses a system message) is in `error`.
    ChatPromptText prompt(const QList<ChatTurn>& turns, const QString& pending_user = {}) const;
    /// The plain-text form of `turns` (no template): turns joined, each
    /// later user message on a new line.
    static QString plainText(const QList<ChatTurn>& turns);

  private:
    std::shared_ptr<const tokenizer::Vocab> vocab_;
    std::optional<std::string> model_template_;
    std::string read_error_;
    QString choice_ = kNone;
    std::optional<chat::ChatTemplate> tmpl_;
    QString note_;
    QString system_;
    QList<ChatTurn> turns_;
};

}  // namespace wb::ui
