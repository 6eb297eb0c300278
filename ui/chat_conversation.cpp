#include "chat_conversation.h"

#include <QObject>
#include <exception>

#include "tokenizer/vocab.h"

namespace wb::ui {

void ChatConversation::setModel(std::shared_ptr<const tokenizer::Vocab> vocab,
                                std::optional<std::string> model_template, std::string read_error) {
    vocab_ = std::move(vocab);
    model_template_ = std::move(model_template);
    read_error_ = std::move(read_error);
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
    choice_ = choice;
    note_.clear();
    tmpl_.reset();
    if (choice == kNone || !vocab_) return true;
    // The same choice as the CLI's --chat-format (app/chat choose_template):
    // a model template that does not parse falls back to a built-in, with a
    // note saying why.
    chat::TemplateChoice c = chat::choose_template(model_template_, read_error_, *vocab_,
                                                   choice == kModel ? "" : choice.toStdString());
    note_ = QString::fromStdString(c.note);
    tmpl_ = std::move(c.tmpl);
    return true;
}

QString ChatConversation::templateSource() const {
    if (!tmpl_) {
        return modelHasTemplate()
                   ? QObject::tr("no template: the conversation is completed as plain text")
                   : QObject::tr(
                         "the model has no tokenizer.chat_template: the conversation is completed "
                         "as plain text; pick a built-in format to chat");
    }
    const QString sha = QString::fromStdString(tmpl_->sha256()).left(12);
    if (const auto f = tmpl_->builtin_format())
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

ChatPromptText ChatConversation::prompt(const QList<ChatTurn>& turns,
                                        const QString& pending_user) const {
    ChatPromptText p;
    if (!vocab_) {
        p.error = QObject::tr("no model loaded");
        return p;
    }
    try {
        if (tmpl_) {
            const chat::ChatPrompt c =
                chat::build_prompt(*tmpl_, *vocab_, messages(turns, pending_user), true);
            p.text = QString::fromStdString(c.text);
            p.ids = c.ids;
            p.format =
                QJsonObject{{"prompt_mode", "chat"},
                            {"chat_template", QString::fromStdString(c.template_name)},
                            {"chat_template_sha256", QString::fromStdString(c.template_sha256)},
                            {"add_bos", c.add_bos},
                            {"pre_tokenizer", QString::fromStdString(c.pre_tokenizer)},
                            {"parse_special", c.parse_special}};
        } else {
            QList<ChatTurn> all = turns;
            if (!pending_user.isEmpty()) all.append({true, pending_user, {}, {}, {}});
            p.text = plainText(all);
            if (!system_.isEmpty()) p.text = system_ + '\n' + p.text;
            p.ids = vocab_->tokenize(p.text.toStdString(), /*add_special=*/true);
        }
    } catch (const std::exception& e) {
        p.ids.clear();
        p.error = QString::fromUtf8(e.what());
    }
    return p;
}

}  // namespace wb::ui
