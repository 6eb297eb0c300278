#include "ui/chat_conversation.h"

#include <QObject>
#include <exception>

namespace wb::ui {

void ChatConversation::setModel(std::shared_ptr<core::EngineSession> session,
                                bool model_has_template) {
    session_ = std::move(session);
    model_has_template_ = session_ && model_has_template;
    setTemplate({});
}

QString ChatConversation::defaultTemplate() const {
    return modelHasTemplate() ? QString(kModel) : QString(kNone);
}

QStringList ChatConversation::templateChoices() const {
    QStringList out;
    if (modelHasTemplate()) out << kModel;
    for (const chat::BuiltinFormat f : chat::builtin_formats())
        out << QString::fromUtf8(chat::builtin_format_name(f));
    out << kNone;
    return out;
}

QString ChatConversation::templateLabel(const QString& choice) {
    if (choice == kModel) return QObject::tr("Model's own (tokenizer.chat_template)");
    if (choice == kNone) return QObject::tr("None: plain text completion");
    if (const auto f = chat::builtin_format_by_name(choice.toStdString()))
        return QObject::tr("%1 (built-in)").arg(QString::fromUtf8(chat::builtin_format_label(*f)));
    return choice;
}

bool ChatConversation::setTemplate(const QString& requested) {
    const QString choice = requested.isEmpty() ? defaultTemplate() : requested;
    if (!templateChoices().contains(choice)) return false;
    // The default asks the session for the model's own ("model"): the one
    // rule (chat::choose_template, as the CLI's generate --chat and batch
    // use it) decides, plain text with a note for a model without a
    // template; a picked choice is asked for by its name.
    key_ = requested.isEmpty() ? QString(kModel) : choice;
    choice_ = choice;
    note_.clear();
    tmpl_.reset();
    if (!session_) return true;
    tmpl_ = session_->chat_template(key_.toStdString());
    note_ = QString::fromStdString(tmpl_->note);
    if (tmpl_->tmpl.is_plain_text()) choice_ = kNone;
    return true;
}

QString ChatConversation::templateSource() const {
    if (!usesTemplate()) {
        return modelHasTemplate()
                   ? QObject::tr("no template: the conversation is completed as plain text")
                   : QObject::tr(
                         "the model has no tokenizer.chat_template: the conversation is completed "
                         "as plain text; pick a built-in format to chat");
    }
    const QString sha = QString::fromStdString(tmpl_->tmpl.sha256()).left(12);
    if (const auto f = tmpl_->tmpl.builtin_format())
        return QObject::tr("built-in %1 format · sha256 %2")
            .arg(QString::fromUtf8(chat::builtin_format_label(*f)), sha);
    return QObject::tr("tokenizer.chat_template from the model file · sha256 %1").arg(sha);
}

std::vector<chat::Message> ChatConversation::messages(const QList<ChatTurn>& turns,
                                                      const QString& pending_user) const {
    std::vector<chat::Message> out;
    if (!system_.isEmpty()) out.push_back({"system", system_.toStdString()});
    for (qsizetype i = 0; i < turns.size(); ++i) {
        const ChatTurn& t = turns[i];
        if (!t.user && t.text.isEmpty() && i == turns.size() - 1) break;  // being generated
        out.push_back({t.user ? "user" : "assistant", t.text.toStdString()});
    }
    if (!pending_user.isEmpty()) out.push_back({"user", pending_user.toStdString()});
    return out;
}

QString ChatConversation::plainText(const QList<ChatTurn>& turns) {
    QString s;
    for (qsizetype i = 0; i < turns.size(); ++i) {
        if (turns[i].user && i > 0) s += '\n';
        s += turns[i].text;
    }
    return s;
}

core::GenerationRequest ChatConversation::request(const QList<ChatTurn>& turns,
                                                  const QString& pending_user) const {
    // The messages and the name the template was asked for: the session
    // renders them (plain text when the choice is; chat::plain_text_prompt).
    core::GenerationRequest r;
    r.messages = messages(turns, pending_user);
    r.chat_template = key_.toStdString();
    return r;
}

ChatPromptText ChatConversation::prompt(const QList<ChatTurn>& turns,
                                        const QString& pending_user) const {
    ChatPromptText p;
    if (!session_) {
        p.error = QObject::tr("no model loaded");
        return p;
    }
    core::GenerationRequest r = request(turns, pending_user);
    if (r.messages.empty()) return p;  // nothing to send yet
    auto prepared = std::make_shared<const core::PreparedRequest>(session_->prepare(std::move(r)));
    if (!prepared->ok()) {
        p.error = QString::fromStdString(prepared->problem());
        return p;
    }
    p.text = QString::fromStdString(prepared->prompt());
    p.ids = prepared->prompt_tokens();
    if (usesTemplate()) {
        const core::PromptFacts& f = prepared->prompt_facts();
        p.format = QJsonObject{{"prompt_mode", "chat"},
                               {"chat_template", QString::fromStdString(f.template_name)},
                               {"chat_template_sha256", QString::fromStdString(f.template_sha256)},
                               {"add_bos", f.add_bos},
                               {"pre_tokenizer", QString::fromStdString(f.pre_tokenizer)},
                               {"parse_special", f.parse_special}};
    }
    p.prepared = std::move(prepared);
    return p;
}

}  // namespace wb::ui
