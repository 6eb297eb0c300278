#include "chat_view.h"

#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "engine_bridge.h"
#include "run_recorder.h"

namespace wb::ui {

namespace {

QString html_text(const QString& s) {
    return s.toHtmlEscaped().replace('\n', "<br>");
}

}  // namespace

ChatView::ChatView(gui::EngineBridge* bridge, gui::RunRecorder* recorder,
                   std::function<gui::GenSettings()> settings, QWidget* parent)
    : QWidget(parent), bridge_(bridge), recorder_(recorder), settings_(std::move(settings)) {
    auto* layout = new QVBoxLayout(this);
    notice_ = new QLabel(
        tr("This model carries a chat template (tokenizer.chat_template). Chat templates arrive "
           "in a later version; for now the conversation is sent as plain text to complete."));
    notice_->setWordWrap(true);
    notice_->setStyleSheet("background: #fff4d6; border: 1px solid #e0c060; padding: 4px");
    notice_->hide();
    layout->addWidget(notice_);

    transcript_ = new QTextBrowser;
    transcript_->setOpenLinks(false);
    transcript_->setPlaceholderText(
        tr("Type a message below and press Ctrl+Enter. Story models like the default one "
           "continue your text."));
    layout->addWidget(transcript_, 1);

    input_ = new QPlainTextEdit;
    input_->setPlaceholderText(tr("Message (Ctrl+Enter to send, Esc to stop)"));
    input_->setMaximumHeight(90);
    input_->installEventFilter(this);
    layout->addWidget(input_);

    auto* buttons = new QHBoxLayout;
    send_ = new QPushButton(tr("Send"));
    send_->setToolTip(tr("Send the message (Ctrl+Enter)"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setToolTip(tr("Stop the reply (Esc)"));
    regen_ = new QPushButton(tr("Regenerate"));
    regen_->setToolTip(tr("Generate the last reply again with the current settings"));
    copy_ = new QPushButton(tr("Copy"));
    copy_->setToolTip(tr("Copy the last reply to the clipboard"));
    newChat_ = new QPushButton(tr("New chat"));
    newChat_->setToolTip(tr("Start a new conversation (Ctrl+N)"));
    for (QPushButton* b : {send_, stop_, regen_, copy_}) buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(newChat_);
    layout->addLayout(buttons);

    connect(send_, &QPushButton::clicked, this, [this] { submitCurrent(); });
    connect(stop_, &QPushButton::clicked, this, &ChatView::stop);
    connect(regen_, &QPushButton::clicked, this, &ChatView::regenerate);
    connect(copy_, &QPushButton::clicked, this, &ChatView::copyLastReply);
    connect(newChat_, &QPushButton::clicked, this, &ChatView::newChat);
    connect(bridge_, &gui::EngineBridge::tokenArrived, this, &ChatView::onToken);
    connect(bridge_, &gui::EngineBridge::requestFinished, this, &ChatView::onFinished);
    connect(bridge_, &gui::EngineBridge::stateChanged, this, [this] { updateButtons(); });
    updateButtons();
}

bool ChatView::eventFilter(QObject* obj, QEvent* ev) {
    if (obj == input_ && ev->type() == QEvent::KeyPress) {
        auto* k = static_cast<QKeyEvent*>(ev);
        if ((k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter) &&
            (k->modifiers() & Qt::ControlModifier)) {
            submitCurrent();
            return true;
        }
        if (k->key() == Qt::Key_Escape) {
            stop();
            return true;
        }
    }
    return QWidget::eventFilter(obj, ev);
}

void ChatView::submitCurrent() {
    const QString text = input_->toPlainText();
    if (text.trimmed().isEmpty()) return;
    if (send(text)) input_->clear();
}

QString ChatView::conversationText(const QList<Turn>& turns) {
    QString s;
    for (qsizetype i = 0; i < turns.size(); ++i) {
        if (turns[i].user && i > 0) s += '\n';
        s += turns[i].text;
    }
    return s;
}

bool ChatView::send(const QString& text) {
    return sendTurn(text, false);
}

bool ChatView::sendTurn(const QString& text, bool new_seed) {
    if (!bridge_->hasModel() || isStreaming()) return false;
    turns_.append({true, text, {}, {}, {}});
    turns_.append({false, {}, {}, {}, {}});
    render();
    const gui::GenSettings s = settings_();
    if (run_id_ == 0 && recorder_ != nullptr)
        run_id_ = recorder_->beginRun("chat", tr("chat with %1").arg(bridge_->modelInfo().name), s);
    gui::RequestSpec spec;
    spec.id = QStringLiteral("chat-%1").arg(++counter_);
    // The reply is the last (empty) turn, so the prompt is everything before it.
    spec.prompt = conversationText(turns_.mid(0, turns_.size() - 1));
    // A random seed per turn unless the user fixed one; the seed used is in
    // the result's settings (footer, run log).
    spec.settings = s.forRequest(new_seed);
    spec.run_id = run_id_;
    active_id_ = spec.id;
    updateButtons();
    if (!bridge_->submit(spec)) {
        active_id_.clear();
        turns_.removeLast();
        turns_.removeLast();
        render();
        updateButtons();
        return false;
    }
    return true;
}

void ChatView::stop() {
    if (isStreaming()) bridge_->cancel(active_id_);
}

void ChatView::regenerate() {
    if (isStreaming() || turns_.size() < 2 || turns_.last().user) return;
    turns_.removeLast();
    const Turn user = turns_.takeLast();
    render();
    // Always a new seed: the same seed would give the same reply again.
    sendTurn(user.text, true);
}

void ChatView::copyLastReply() {
    for (qsizetype i = turns_.size() - 1; i >= 0; --i) {
        if (!turns_[i].user) {
            QApplication::clipboard()->setText(turns_[i].text);
            return;
        }
    }
}

void ChatView::newChat() {
    if (isStreaming()) bridge_->cancel(active_id_);
    active_id_.clear();
    endRun();
    turns_.clear();
    render();
    updateButtons();
}

void ChatView::endRun() {
    if (run_id_ != 0 && recorder_ != nullptr) recorder_->endRun(run_id_);
    run_id_ = 0;
}

void ChatView::setChatTemplateNotice(bool model_has_template) {
    notice_->setVisible(model_has_template);
}

void ChatView::render() {
    QString html;
    for (const Turn& t : turns_) {
        if (t.user) {
            html += QStringLiteral(
                        "<p style='background-color:#e8f0fe; margin:6px 0px;'><b>You</b><br>%1</p>")
                        .arg(html_text(t.text));
        } else {
            html += QStringLiteral("<p style='margin:6px 0px;'><b>Model</b><br>%1</p>")
                        .arg(html_text(t.text));
            if (!t.footer.isEmpty())
                html += QStringLiteral("<p style='color:#666666; font-size:small;'>%1</p>")
                            .arg(t.footer.toHtmlEscaped());
        }
    }
    transcript_->setHtml(html);
    transcript_->moveCursor(QTextCursor::End);
}

void ChatView::updateButtons() {
    const bool model = bridge_->hasModel();
    const bool streaming = isStreaming();
    send_->setEnabled(model && !streaming);
    stop_->setEnabled(streaming);
    const bool has_reply = !turns_.isEmpty() && !turns_.last().user;
    regen_->setEnabled(model && !streaming && has_reply);
    copy_->setEnabled(has_reply);
}

void ChatView::onToken(const QString& id, int token, const QString& piece) {
    if (id != active_id_ || turns_.isEmpty()) return;
    Turn& reply = turns_.last();
    reply.token_ids.append(token);
    if (piece.isEmpty()) return;
    reply.text += piece;
    // Append at the end (the streaming reply is the last paragraph) rather
    // than re-rendering: O(piece) per token.
    QTextCursor c(transcript_->document());
    c.movePosition(QTextCursor::End);
    c.insertText(piece);
    QScrollBar* bar = transcript_->verticalScrollBar();
    bar->setValue(bar->maximum());
}

void ChatView::onFinished(const gui::RequestResult& r) {
    if (r.id != active_id_ || turns_.isEmpty()) return;
    active_id_.clear();
    Turn& reply = turns_.last();
    reply.text = r.output;  // the authoritative text (includes a flushed tail)
    reply.token_ids = r.token_ids;
    reply.finish_reason = r.finish_reason;
    // The scheduler's detail often starts with the reason itself
    // ("cancelled during decode"): show it once.
    const QString finish = r.error.isEmpty() ? r.finish_reason
                           : r.error.startsWith(r.finish_reason)
                               ? r.error
                               : r.finish_reason + " (" + r.error + ")";
    QString footer = QStringLiteral("%1 tokens · TTFT %2 · %3 tokens/s · finish: %4")
                         .arg(r.generated_tokens)
                         .arg(r.ttft_ms >= 0 ? QString::number(r.ttft_ms, 'f', 1) + " ms" : "—")
                         .arg(r.decode_tps, 0, 'f', 1)
                         .arg(finish);
    footer += QStringLiteral(" · %1 on %2 · %3")
                  .arg(bridge_->modelInfo().name, bridge_->backendName(), r.settings.summary());
    reply.footer = footer;
    render();
    updateButtons();
    emit replyFinished(r);
}

}  // namespace wb::ui
