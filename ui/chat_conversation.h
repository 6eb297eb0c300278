#pragma once
// The Chat tab's conversation state, apart from its widgets: the turns, the
// system prompt and the chat template in use, and how they become the
// prompt the model is given. A model with tokenizer.chat_template is
// rendered with it (or a built-in format the user picks) by the loaded
// session (EngineSession::prepare: app/chat's build_prompt, the same code as
// `workbench-cli generate --chat`), once: the meter shows that rendering and
// sending runs it. Which template is decided by the one rule,
// chat::choose_template: a model without a template is completed as plain
// text (chat::plain_text_prompt), with a note saying so, until the user
// picks a built-in format (story models continue text; a chat format would
// only confuse them).

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
#include "core/engine_session.h"

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
    /// The session's rendering (EngineSession::prepare) of the request the
    /// conversation makes: sent as it is (no second rendering). Null when
    /// nothing can be sent (no model, an empty conversation, an error).
    std::shared_ptr<const core::PreparedRequest> prepared;
    int tokens() const { return static_cast<int>(ids.size()); }
};

/// Conversation + system prompt + template choice of the Chat tab.
class ChatConversation {
  public:
    /// Template choice meaning "plain text completion, no template".
    static constexpr const char* kNone = "none";
    /// Template choice meaning "the model's tokenizer.chat_template".
    static constexpr const char* kModel = "model";

    /// Takes a newly loaded model: its session (null: no model), which
    /// renders and tokenizes every prompt, and whether the file carries a
    /// tokenizer.chat_template. Resets the template choice to the model's
    /// default (defaultTemplate()); the turns stay.
    void setModel(std::shared_ptr<core::EngineSession> session, bool model_has_template);
    bool hasModel() const { return session_ != nullptr; }
    /// True when the loaded model carries tokenizer.chat_template.
    bool modelHasTemplate() const { return model_has_template_; }

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
    /// The current choice as the picker shows it ("model", a built-in short
    /// name or "none"; "none" when the default resolved to plain text).
    QString templateChoice() const { return choice_; }
    /// The name the session was asked for (GenerationRequest::chat_template):
    /// "model" for the default, else the picked choice.
    QString templateKey() const { return key_; }
    /// True when prompts are rendered by a chat template (not plain text).
    bool usesTemplate() const { return tmpl_ != nullptr && !tmpl_->tmpl.is_plain_text(); }
    /// The template in use (the session's parse of it), null for plain text.
    const chat::ChatTemplate* chatTemplate() const {
        return usesTemplate() ? &tmpl_->tmpl : nullptr;
    }
    /// One line on the template in use and where it comes from, e.g.
    /// "tokenizer.chat_template from the model file · sha256 3f2a9c1b0e4d".
    QString templateSource() const;
    /// Why the requested template is not the one in use ("" normally), e.g.
    /// the model's template did not parse and a built-in replaced it, or the
    /// model has none and the conversation is completed as plain text
    /// (chat::choose_template's note, as the CLI prints it).
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
    /// The request `turns` (+ `pending_user`) make, prompt only: their
    /// messages and templateKey(); the session renders them, as plain text
    /// (chat::plain_text_prompt: system prompt, then the turns, each later
    /// user message on a new line) when the choice is plain text.
    core::GenerationRequest request(const QList<ChatTurn>& turns,
                                    const QString& pending_user = {}) const;
    /// The prompt of request(turns, pending_user) as the session renders
    /// and tokenizes it (EngineSession::prepare: the chat template with the
    /// generation prompt, special tokens parsed; plain text with BOS as the
    /// vocabulary says), with that rendering in `prepared` for sending. An
    /// empty conversation has no prompt (no ids, no error). Never throws: a
    /// template error (e.g. a template that refuses a system message) is in
    /// `error`.
    ChatPromptText prompt(const QList<ChatTurn>& turns, const QString& pending_user = {}) const;
    /// The plain-text form of `turns` (no template): turns joined, each
    /// later user message on a new line.
    static QString plainText(const QList<ChatTurn>& turns);

  private:
    std::shared_ptr<core::EngineSession> session_;
    bool model_has_template_ = false;
    QString choice_ = kNone;
    QString key_ = kModel;
    std::shared_ptr<const chat::TemplateChoice> tmpl_;  // the session's, cached by name
    QString note_;
    QString system_;
    QList<ChatTurn> turns_;
};

}  // namespace wb::ui
