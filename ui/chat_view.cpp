#include "ui/chat_view.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollBar>
#include <QTextBrowser>
#include <QTextCharFormat>
#include <QTimer>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "desktop/engine_bridge.h"
#include "desktop/remote_client.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "desktop/speculation_text.h"
#include "ui/target_picker.h"
#include "ui/widgets/draft_picker.h"
#include "ui/widgets/wrap_label.h"

namespace wb::ui {

namespace {

QString html_text(const QString& s) {
    return s.toHtmlEscaped().replace('\n', "<br>");
}

QString link(const char* action, qsizetype index, const QString& label, const QString& tip) {
    return QStringLiteral("<a href='%1:%2' title='%3' style='color:#5a6b8c;'>%4</a>")
        .arg(QLatin1String(action))
        .arg(index)
        .arg(tip.toHtmlEscaped(), label);
}

}  // namespace

ChatView::ChatView(gui::EngineBridge* bridge, gui::RunRecorder* recorder,
                   std::function<gui::GenSettings()> settings, QWidget* parent)
    : QWidget(parent), bridge_(bridge), recorder_(recorder), settings_(std::move(settings)) {
    auto* layout = new QVBoxLayout(this);

    // Where messages go: the loaded model or a remote endpoint.
    picker_ = new TargetPicker(QStringLiteral("chat"));
    layout->addWidget(picker_);
    remote_ = new gui::RemoteClient(recorder_, this);

    // Template in use and where it comes from; the system prompt beside it.
    auto* templateRow = new QHBoxLayout;
    auto* templateLabel = new QLabel(tr("&Template:"));
    templateBox_ = new QComboBox;
    templateBox_->setObjectName("chatTemplate");
    templateBox_->setToolTip(
        tr("How the conversation becomes the prompt: the model's own chat template "
           "(tokenizer.chat_template), a built-in format, or none (plain text completion)"));
    templateLabel->setBuddy(templateBox_);
    templateInfo_ = new QLabel;
    templateInfo_->setObjectName("chatTemplateInfo");
    templateInfo_->setStyleSheet("color: #555555");
    templateInfo_->setWordWrap(true);
    promptButton_ = new QPushButton(tr("Prompt…"));
    promptButton_->setToolTip(
        tr("Show the prompt the next message sends: the rendered template and its token count"));
    templateRow->addWidget(templateLabel);
    templateRow->addWidget(templateBox_);
    templateRow->addWidget(templateInfo_, 1);
    templateRow->addWidget(promptButton_);
    layout->addLayout(templateRow);

    notice_ = new QLabel;
    notice_->setWordWrap(true);
    notice_->setStyleSheet("background: #fff4d6; border: 1px solid #e0c060; padding: 4px");
    notice_->hide();
    layout->addWidget(notice_);

    system_ = new QPlainTextEdit;
    system_->setObjectName("chatSystemPrompt");
    system_->setPlaceholderText(
        tr("System prompt (optional): instructions the model sees before the conversation, kept "
           "for this model file"));
    system_->setMaximumHeight(54);
    system_->setTabChangesFocus(true);
    layout->addWidget(system_);

    contextNotice_ = new QLabel;
    contextNotice_->setWordWrap(true);
    contextNotice_->setStyleSheet("background: #fde7e7; border: 1px solid #d08080; padding: 4px");
    dropTurns_ = new QPushButton(tr("Drop oldest turns"));
    dropTurns_->setToolTip(
        tr("Remove the oldest messages and replies from the conversation so that it fits the "
           "context again (the system prompt stays)"));
    auto* contextRow = new QHBoxLayout;
    contextRow->addWidget(contextNotice_, 1);
    contextRow->addWidget(dropTurns_);
    layout->addLayout(contextRow);
    contextNotice_->hide();
    dropTurns_->hide();

    transcript_ = new QTextBrowser;
    transcript_->setOpenLinks(false);
    transcript_->setPlaceholderText(
        tr("Type a message below and press Ctrl+Enter. Story models like the default one "
           "continue your text."));
    layout->addWidget(transcript_, 1);

    editBanner_ = new QLabel;
    editBanner_->setWordWrap(true);
    editBanner_->setStyleSheet("background: #e8f0fe; border: 1px solid #8fa8d8; padding: 4px");
    editBanner_->hide();
    layout->addWidget(editBanner_);

    input_ = new QPlainTextEdit;
    input_->setPlaceholderText(tr("Message (Ctrl+Enter to send, Esc to stop)"));
    input_->setMaximumHeight(90);
    input_->installEventFilter(this);
    layout->addWidget(input_);

    auto* meterRow = new QHBoxLayout;
    meter_ = new QProgressBar;
    meter_->setObjectName("chatTokenMeter");
    meter_->setTextVisible(false);
    meter_->setMaximumWidth(160);
    meter_->setMaximumHeight(12);
    meter_->setRange(0, 1);
    meter_->setValue(0);
    meterLabel_ = new ElideLabel;
    meterLabel_->setObjectName("chatTokenMeterText");
    meterRow->addWidget(meter_);
    meterRow->addWidget(meterLabel_, 1);
    // The draft picker sits under the input (the template row is full on a
    // small screen): what the next message is generated with.
    draft_ = new DraftPicker;
    meterRow->addWidget(draft_);
    layout->addLayout(meterRow);

    auto* buttons = new QHBoxLayout;
    send_ = new QPushButton(tr("Send"));
    send_->setToolTip(tr("Send the message (Ctrl+Enter)"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setToolTip(tr("Stop the reply (Esc)"));
    regen_ = new QPushButton(tr("Regenerate"));
    regen_->setToolTip(tr("Generate the last reply again with a new seed (Ctrl+R)"));
    copy_ = new QPushButton(tr("Copy"));
    copy_->setToolTip(tr("Copy the last reply to the clipboard (Ctrl+Shift+C)"));
    newChat_ = new QPushButton(tr("New chat"));
    newChat_->setToolTip(tr("Start a new conversation (Ctrl+N)"));
    for (QPushButton* b : {send_, stop_, regen_, copy_}) buttons->addWidget(b);
    buttons->addStretch();
    buttons->addWidget(newChat_);
    layout->addLayout(buttons);

    status_ = new QLabel;
    status_->setObjectName("chatStatus");
    status_->setWordWrap(true);
    status_->setStyleSheet("color: #555555");
    layout->addWidget(status_);

    meterTimer_ = new QTimer(this);
    meterTimer_->setSingleShot(true);
    meterTimer_->setInterval(150);  // count once typing pauses, not per key
    connect(meterTimer_, &QTimer::timeout, this, &ChatView::updateMeter);
    connect(input_, &QPlainTextEdit::textChanged, this, &ChatView::scheduleMeter);
    connect(system_, &QPlainTextEdit::textChanged, this, [this] {
        conv_.setSystemPrompt(system_->toPlainText());
        if (store_ && !model_path_.isEmpty())
            store_->setChatSystemPrompt(modelKey(), system_->toPlainText());
        scheduleMeter();
    });
    connect(templateBox_, &QComboBox::activated, this, &ChatView::onTemplatePicked);
    connect(promptButton_, &QPushButton::clicked, this, &ChatView::showPrompt);
    connect(draft_, &DraftPicker::changed, this, [this] {
        if (store_) store_->setChatDraft(draft_->choice());
    });
    connect(draft_, &DraftPicker::draftFileChanged, this, &ChatView::draftFileChanged);
    connect(transcript_, &QTextBrowser::anchorClicked, this, &ChatView::onLink);
    connect(send_, &QPushButton::clicked, this, [this] { submitCurrent(); });
    connect(stop_, &QPushButton::clicked, this, &ChatView::stop);
    connect(regen_, &QPushButton::clicked, this, &ChatView::regenerate);
    connect(copy_, &QPushButton::clicked, this, &ChatView::copyLastReply);
    connect(newChat_, &QPushButton::clicked, this, &ChatView::newChat);
    connect(dropTurns_, &QPushButton::clicked, this, [this] { dropOldestTurns(); });
    connect(bridge_, &gui::EngineBridge::modelLoaded, this, &ChatView::onModelLoaded);
    connect(bridge_, &gui::EngineBridge::tokenArrived, this, &ChatView::onToken);
    connect(bridge_, &gui::EngineBridge::requestFinished, this, &ChatView::onFinished);
    connect(bridge_, &gui::EngineBridge::stateChanged, this, [this] { updateButtons(); });
    connect(remote_, &gui::RemoteClient::tokenArrived, this, &ChatView::onToken);
    connect(remote_, &gui::RemoteClient::requestFinished, this, &ChatView::onFinished);
    connect(picker_, &TargetPicker::changed, this, [this] {
        // A conversation's run has one target: the next message starts a
        // new run (the transcript stays, and goes to the new target).
        endRun();
        updateButtons();
        updateMeter();
        setStatus(picker_->isRemote() ? tr("Messages now go to %1.").arg(picker_->remote().label())
                                      : tr("Messages now go to the loaded model."));
    });
    if (bridge_->hasModel()) onModelLoaded(bridge_->modelInfo());
    fillTemplateBox();
    updateButtons();
    updateMeter();
}

bool ChatView::eventFilter(QObject* obj, QEvent* ev) {
    // Esc while editing (nothing streaming) leaves editing: claim it before
    // the window's Stop shortcut takes it.
    if (obj == input_ && ev->type() == QEvent::ShortcutOverride) {
        auto* k = static_cast<QKeyEvent*>(ev);
        if (k->key() == Qt::Key_Escape && editing_ >= 0 && !isStreaming()) {
            ev->accept();
            return true;
        }
    }
    if (obj == input_ && ev->type() == QEvent::KeyPress) {
        auto* k = static_cast<QKeyEvent*>(ev);
        if ((k->key() == Qt::Key_Return || k->key() == Qt::Key_Enter) &&
            (k->modifiers() & Qt::ControlModifier)) {
            submitCurrent();
            return true;
        }
        if (k->key() == Qt::Key_Escape) {
            if (isStreaming())
                stop();
            else if (editing_ >= 0)
                cancelEdit();
            return true;
        }
    }
    return QWidget::eventFilter(obj, ev);
}

void ChatView::setStatus(const QString& text) {
    status_->setText(text);
    if (!text.isEmpty()) emit statusMessage(text);
}

void ChatView::setStore(gui::SettingsStore* store) {
    store_ = store;
    if (store_) draft_->setChoice(store_->chatDraft());
    {
        const QSignalBlocker block(picker_);  // restoring the choice starts no run
        picker_->setStore(store_);
    }
    updateButtons();
    if (bridge_->hasModel()) onModelLoaded(bridge_->modelInfo());
}

QString ChatView::draftFile() const {
    return draft_->draftFile();
}

QString ChatView::modelKey() const {
    return QFileInfo(model_path_).fileName();
}

void ChatView::onModelLoaded(const gui::ModelInfo& info) {
    // An endpoint without a usage block: its replies counted with this
    // model's tokenizer (immutable, so any thread may use it), marked approximate.
    remote_->countTokensWith(bridge_->vocab());
    // Another model file: its conversation starts afresh (the old turns were
    // written for, and tokenized by, the other model). A reload of the same
    // file (a new context size) keeps the conversation.
    const bool other_model =
        !model_path_.isEmpty() && info.path != model_path_ && !conv_.turns().isEmpty();
    if (other_model) newChat();
    model_path_ = info.path;
    const std::optional<std::string> tmpl = bridge_->chatTemplate();
    conv_.setModel(bridge_->session(), tmpl.has_value() && !tmpl->empty());
    if (store_) {
        const QString saved = store_->chatTemplate(modelKey());
        if (!saved.isEmpty()) conv_.setTemplate(saved);  // an unknown name keeps the default
        const QString system = store_->chatSystemPrompt(modelKey());
        const QSignalBlocker block(system_);
        system_->setPlainText(system);
    }
    conv_.setSystemPrompt(system_->toPlainText());
    fillTemplateBox();
    QString status =
        conv_.usesTemplate()
            ? tr("Chat template: %1.").arg(ChatConversation::templateLabel(conv_.templateChoice()))
            : QString();
    if (other_model)
        status = tr("Opened %1: a new chat started (the previous one was for another model).")
                     .arg(modelKey()) +
                 (status.isEmpty() ? QString() : QStringLiteral(" ") + status);
    setStatus(status);
    updateMeter();
    updateButtons();
}

void ChatView::fillTemplateBox() {
    const QSignalBlocker block(templateBox_);
    templateBox_->clear();
    for (const QString& c : conv_.templateChoices())
        templateBox_->addItem(ChatConversation::templateLabel(c), c);
    templateBox_->setCurrentIndex(templateBox_->findData(conv_.templateChoice()));
    templateBox_->setEnabled(conv_.hasModel());
    templateInfo_->setText(conv_.hasModel() ? conv_.templateSource() : tr("no model loaded"));
    if (conv_.chatTemplate())
        templateInfo_->setToolTip(QString::fromStdString(conv_.chatTemplate()->source()));
    else
        templateInfo_->setToolTip({});
    notice_->setText(conv_.templateNote());
    notice_->setVisible(!conv_.templateNote().isEmpty());
}

void ChatView::onTemplatePicked(int row) {
    setTemplate(templateBox_->itemData(row).toString());
}

bool ChatView::setTemplate(const QString& choice) {
    if (!conv_.setTemplate(choice)) return false;
    if (store_ && !model_path_.isEmpty())
        store_->setChatTemplate(modelKey(), conv_.templateChoice());
    fillTemplateBox();
    updateMeter();
    return true;
}

void ChatView::setSystemPrompt(const QString& text) {
    system_->setPlainText(text);  // textChanged keeps the conversation and the store in step
    updateMeter();
}

void ChatView::submitCurrent() {
    const QString text = input_->toPlainText();
    if (text.trimmed().isEmpty()) {
        setStatus(tr("Type a message first."));
        return;
    }
    if (send(text)) input_->clear();
}

QString ChatView::conversationText(const QList<Turn>& turns) {
    return ChatConversation::plainText(turns);
}

ChatPromptText ChatView::pendingPrompt() const {
    const QList<Turn>& turns = conv_.turns();
    // While a user turn is edited, sending replaces it and drops the turns
    // after it: the prompt is the turns before it plus the edited text.
    if (editing_ >= 0 && editing_ < turns.size())
        return conv_.prompt(turns.mid(0, editing_), input_->toPlainText());
    return conv_.prompt(turns, input_->toPlainText());
}

bool ChatView::send(const QString& text) {
    if (editing_ >= 0) return editAndResend(editing_, text);
    return sendTurn(text, false);
}

bool ChatView::sendRemote(const QString& text, bool new_seed) {
    QString err;
    const std::optional<QString> key = picker_->apiKey(&err);
    if (!key) {
        setStatus(tr("The message was not sent: %1").arg(err));
        return false;
    }
    const gui::RemoteTarget target = picker_->remote();
    QList<Turn>& turns = conv_.turns();
    hideDropOffer();
    gui::RequestSpec spec;
    // The endpoint renders the conversation with its own template.
    spec.messages = conv_.messages(turns, text);
    turns.append({true, text, {}, {}, {}});
    turns.append({false, {}, {}, {}, {}});
    const QString id = QStringLiteral("chat-%1").arg(++counter_);
    active_id_ = id;
    render();
    gui::GenSettings s = settings_();
    if (new_seed) s.fixed_seed = false;  // no seed sent: the endpoint draws one
    if (run_id_ == 0 && recorder_ != nullptr)
        run_id_ = recorder_->beginRun("chat", tr("chat with %1").arg(target.label()), s);
    spec.id = id;
    spec.settings = s;
    spec.run_id = run_id_;
    last_sent_ = {};
    setStatus({});
    updateButtons();
    updateMeter();
    if (!remote_->submit(target, *key, spec, &err)) {
        withdrawTurn(tr("The message was not sent: %1").arg(err));
        return false;
    }
    return true;
}

void ChatView::withdrawTurn(const QString& status) {
    active_id_.clear();
    QList<Turn>& turns = conv_.turns();
    turns.removeLast();  // the empty reply
    turns.removeLast();  // the user message
    render();
    updateButtons();
    updateMeter();
    setStatus(status);
}

void ChatView::cancelActive() {
    if (!isStreaming()) return;
    bridge_->cancel(active_id_);
    remote_->cancel(active_id_);
}

bool ChatView::sendTurn(const QString& text, bool new_seed) {
    if (picker_->isRemote()) {
        if (isStreaming()) {
            setStatus(tr("A reply is still being generated: wait for it or press Esc to stop it."));
            return false;
        }
        return sendRemote(text, new_seed);
    }
    if (!bridge_->hasModel()) {
        setStatus(tr("No model loaded: open one with Ctrl+O (File > Open model)."));
        return false;
    }
    if (isStreaming()) {
        setStatus(tr("A reply is still being generated: wait for it or press Esc to stop it."));
        return false;
    }
    QList<Turn>& turns = conv_.turns();
    const ChatPromptText p = conv_.prompt(turns, text);
    if (!p.error.isEmpty()) {
        setStatus(tr("The prompt cannot be built: %1. Pick another format under Template, or "
                     "change the system prompt.")
                      .arg(p.error));
        return false;
    }
    hideDropOffer();
    turns.append({true, text, {}, {}, {}});
    turns.append({false, {}, {}, {}, {}});
    // Streaming from here on, so the empty reply is drawn without its
    // links and footer: tokens go into its body, not after "Regenerate".
    const QString id = QStringLiteral("chat-%1").arg(++counter_);
    active_id_ = id;
    render();
    const gui::GenSettings s = settings_();
    if (run_id_ == 0 && recorder_ != nullptr)
        run_id_ =
            recorder_->beginRun("chat", tr("chat with %1").arg(bridge_->modelInfo().fileName()), s);
    gui::RequestSpec spec;
    spec.id = id;
    // The session's rendering above (the meter's ids) is what runs; the
    // messages or plain text go along in case another model loads meanwhile.
    spec.prepared = p.prepared;
    spec.messages = conv_.messages(turns.mid(0, turns.size() - 2), text);
    spec.chat_template = conv_.templateKey();
    last_sent_ = p;
    // A random seed per turn unless the user fixed one (and this is not a
    // regenerate): the session draws it and logs seed_policy "random", as
    // the run's settings say; the seed used is in the result's settings
    // (footer, run log).
    spec.settings = s;
    spec.seed_policy =
        s.fixed_seed && !new_seed ? core::SeedPolicy::Fixed : core::SeedPolicy::Random;
    spec.run_id = run_id_;
    spec.speculative = gui::speculative_params(draft_->choice());
    setStatus({});
    // A draft model is loaded with the model: until that reload has
    // happened, this reply runs without it (the footer says so).
    if (spec.speculative.kind == scheduler::SpeculativeParams::Kind::DraftModel &&
        bridge_->loadedRequest().draft_model != draft_->draftFile()) {
        spec.speculative.kind = scheduler::SpeculativeParams::Kind::None;
        setStatus(
            tr("The draft model is not loaded yet (it loads with the model): this reply "
               "runs without it."));
    }
    updateButtons();
    updateMeter();
    if (!bridge_->submit(spec)) {
        withdrawTurn(tr("The engine did not take the message: load a model first."));
        return false;
    }
    return true;
}

void ChatView::stop() {
    cancelActive();
}

void ChatView::regenerate() {
    const QList<Turn>& turns = conv_.turns();
    if (turns.size() >= 2 && !turns.last().user) regenerateAt(static_cast<int>(turns.size() - 1));
}

bool ChatView::regenerateAt(int index) {
    QList<Turn>& turns = conv_.turns();
    if (isStreaming()) {
        setStatus(tr("Stop the reply first (Esc), then regenerate."));
        return false;
    }
    if (index < 1 || index >= turns.size() || turns[index].user || !turns[index - 1].user)
        return false;
    const QList<Turn> before = turns;
    const QString user = turns[index - 1].text;
    turns.erase(turns.begin() + (index - 1), turns.end());
    // Always a new seed: the same seed would give the same reply again.
    if (!sendTurn(user, true)) {
        turns = before;
        render();
        updateMeter();
        return false;
    }
    return true;
}

void ChatView::copyLastReply() {
    const QList<Turn>& turns = conv_.turns();
    for (qsizetype i = turns.size() - 1; i >= 0; --i) {
        if (!turns[i].user) {
            copyTurn(static_cast<int>(i));
            return;
        }
    }
}

void ChatView::copyTurn(int index) {
    const QList<Turn>& turns = conv_.turns();
    if (index < 0 || index >= turns.size()) return;
    QApplication::clipboard()->setText(turns[index].text);
    setStatus(turns[index].user ? tr("Message copied to the clipboard.")
                                : tr("Reply copied to the clipboard."));
}

bool ChatView::editTurn(int index) {
    const QList<Turn>& turns = conv_.turns();
    if (index < 0 || index >= turns.size() || !turns[index].user) return false;
    if (isStreaming()) {
        setStatus(tr("Stop the reply first (Esc), then edit."));
        return false;
    }
    editing_ = index;
    input_->setPlainText(turns[index].text);
    input_->setFocus();
    const qsizetype later = turns.size() - index - 1;
    editBanner_->setText(
        tr("Editing message %1. Ctrl+Enter sends it in place of the original and drops the %2 "
           "turn(s) after it; Esc cancels.")
            .arg(index + 1)
            .arg(later));
    editBanner_->show();
    return true;
}

void ChatView::editLastMessage() {
    const QList<Turn>& turns = conv_.turns();
    for (qsizetype i = turns.size() - 1; i >= 0; --i) {
        if (turns[i].user) {
            editTurn(static_cast<int>(i));
            return;
        }
    }
    setStatus(tr("There is no message to edit yet."));
}

void ChatView::cancelEdit() {
    if (editing_ < 0) return;
    editing_ = -1;
    editBanner_->hide();
    input_->clear();
}

bool ChatView::editAndResend(int index, const QString& text) {
    QList<Turn>& turns = conv_.turns();
    if (index < 0 || index >= turns.size() || !turns[index].user || isStreaming()) return false;
    const QList<Turn> before = turns;
    turns.erase(turns.begin() + index, turns.end());
    if (!sendTurn(text, false)) {
        turns = before;
        render();
        updateMeter();
        return false;
    }
    editing_ = -1;
    editBanner_->hide();
    return true;
}

void ChatView::newChat() {
    cancelActive();
    active_id_.clear();
    endRun();
    conv_.turns().clear();
    cancelEdit();
    hideDropOffer();
    render();
    updateButtons();
    updateMeter();
    setStatus({});
}

void ChatView::endRun() {
    if (run_id_ != 0 && recorder_ != nullptr) recorder_->endRun(run_id_);
    run_id_ = 0;
}

void ChatView::refresh() {
    render();
    updateButtons();
    updateMeter();
}

void ChatView::render() {
    const QList<Turn>& turns = conv_.turns();
    QString html;
    for (qsizetype i = 0; i < turns.size(); ++i) {
        const Turn& t = turns[i];
        const bool streaming_reply = isStreaming() && i == turns.size() - 1;
        if (t.user) {
            html += QStringLiteral(
                        "<p style='background-color:#e8f0fe; margin:6px 0px;'><b>You</b><br>%1</p>")
                        .arg(html_text(t.text));
            html += QStringLiteral("<p style='font-size:small; margin:0px;'>%1 · %2</p>")
                        .arg(link("edit", i, tr("Edit"),
                                  tr("Edit this message and send it again (the turns after it "
                                     "are dropped)")),
                             link("copy", i, tr("Copy"), tr("Copy this message")));
        } else {
            html += QStringLiteral("<p style='margin:6px 0px;'><b>Model</b><br>%1</p>")
                        .arg(html_text(t.text));
            if (streaming_reply) continue;  // tokens are appended at the end
            if (!t.footer.isEmpty())
                html += QStringLiteral("<p style='color:#666666; font-size:small;'>%1</p>")
                            .arg(t.footer.toHtmlEscaped());
            html += QStringLiteral("<p style='font-size:small; margin:0px;'>%1 · %2</p>")
                        .arg(link("copy", i, tr("Copy"), tr("Copy this reply")),
                             link("regen", i, tr("Regenerate"),
                                  tr("Generate this reply again with a new seed (the turns after "
                                     "it are dropped)")));
        }
    }
    transcript_->setHtml(html);
    transcript_->moveCursor(QTextCursor::End);
}

void ChatView::onLink(const QUrl& url) {
    const int index = url.path().toInt();
    const QString action = url.scheme();
    if (action == "copy")
        copyTurn(index);
    else if (action == "edit")
        editTurn(index);
    else if (action == "regen")
        regenerateAt(index);
}

void ChatView::updateButtons() {
    const bool model = bridge_->hasModel() || picker_->isRemote();
    const bool streaming = isStreaming();
    const QList<Turn>& turns = conv_.turns();
    send_->setEnabled(model && !streaming);
    stop_->setEnabled(streaming);
    const bool has_reply = !turns.isEmpty() && !turns.last().user;
    regen_->setEnabled(model && !streaming && has_reply);
    copy_->setEnabled(has_reply);
    promptButton_->setEnabled(bridge_->hasModel() && !picker_->isRemote());
    // The endpoint renders the conversation and decodes as it does: the
    // template and the draft are the loaded model's.
    templateBox_->setEnabled(conv_.hasModel() && !picker_->isRemote());
    draft_->setEnabled(!picker_->isRemote());
}

void ChatView::scheduleMeter() {
    meterTimer_->start();
}

void ChatView::updateMeter() {
    meterTimer_->stop();
    if (picker_->isRemote()) {
        // The endpoint renders and counts the prompt; its count comes back
        // in each reply's footer.
        meter_->setRange(0, 1);
        meter_->setValue(0);
        meterLabel_->setText(tr("Prompt tokens: counted by the endpoint (shown under each reply)"));
        return;
    }
    if (!conv_.hasModel()) {
        meter_->setRange(0, 1);
        meter_->setValue(0);
        meterLabel_->setText(tr("Prompt tokens: no model loaded"));
        return;
    }
    // While a reply streams the meter keeps the prompt that was sent.
    const ChatPromptText p = isStreaming() ? conv_.prompt(conv_.turns()) : pendingPrompt();
    const int ctx = bridge_->contextSize();
    if (!p.error.isEmpty()) {
        meterLabel_->setText(tr("Prompt cannot be built: %1").arg(p.error));
        meterLabel_->setStyleSheet("color: #b00020");
        meter_->setValue(0);
        return;
    }
    // One number for "the context of one request", as the model bar's plan
    // and the status bar say it: the model's training context when the pool
    // holds at least that much (a request may run past it, unreliably),
    // else the pool.
    const int trained = bridge_->modelInfo().n_ctx_train;
    const int shown = trained > 0 && trained < ctx ? trained : ctx;
    meter_->setRange(0, std::max(1, shown));
    meter_->setValue(std::min(p.tokens(), std::max(1, shown)));
    QString text =
        shown < ctx ? tr("Prompt %1 / %2 tokens (the model's training context; the "
                         "KV pool holds %3)")
                          .arg(p.tokens())
                          .arg(shown)
                          .arg(ctx)
                    : tr("Prompt %1 / %2 tokens (context of one request)").arg(p.tokens()).arg(ctx);
    QString style;
    if (ctx > 0 && p.tokens() >= ctx) {
        text += tr(" · over the context: drop the oldest turns or start a new chat");
        style = "color: #b00020";
    } else if (trained > 0 && p.tokens() > trained) {
        // Warned before sending, as llama.cpp warns at load: it runs, but
        // what the model writes past its training context is unreliable.
        text += tr(" · past the model's %1-token training context: output past it is "
                   "unreliable")
                    .arg(trained);
        style = "color: #a05a00";
    } else if (ctx > 0) {
        const int room = shown - p.tokens();
        text += tr(" · room for %1 reply tokens").arg(room);
        if (room < settings_().max_tokens) style = "color: #a05a00";
    }
    meterLabel_->setText(text);
    meterLabel_->setStyleSheet(style);
    meterLabel_->setToolTip(conv_.usesTemplate()
                                ? tr("The conversation rendered by the chat template (%1) and "
                                     "tokenized with special tokens parsed, as it would be sent.")
                                      .arg(conv_.templateSource())
                                : tr("The conversation as plain text, tokenized as it would be "
                                     "sent."));
}

void ChatView::showPrompt() {
    if (!conv_.hasModel()) return;
    const ChatPromptText p = pendingPrompt();
    QDialog d(this);
    d.setWindowTitle(tr("Prompt of the next message"));
    auto* l = new QVBoxLayout(&d);
    auto* head = new QLabel(p.error.isEmpty()
                                ? tr("%1 tokens · %2").arg(p.tokens()).arg(conv_.templateSource())
                                : tr("Cannot be built: %1").arg(p.error));
    head->setWordWrap(true);
    l->addWidget(head);
    auto* text = new QPlainTextEdit(p.text);
    text->setReadOnly(true);
    text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    l->addWidget(text, 1);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(box, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    l->addWidget(box);
    d.resize(640, 420);
    d.exec();
}

void ChatView::onToken(const QString& id, int token, const QString& piece) {
    QList<Turn>& turns = conv_.turns();
    if (id != active_id_ || turns.isEmpty()) return;
    Turn& reply = turns.last();
    reply.token_ids.append(token);
    if (piece.isEmpty()) return;
    reply.text += piece;
    // Append at the end (the streaming reply is the last paragraph) rather
    // than re-rendering: O(piece) per token.
    QTextCursor c(transcript_->document());
    c.movePosition(QTextCursor::End);
    c.insertText(piece, QTextCharFormat());  // plain text, whatever precedes it
    QScrollBar* bar = transcript_->verticalScrollBar();
    bar->setValue(bar->maximum());
}

void ChatView::onFinished(const gui::RequestResult& r) {
    QList<Turn>& turns = conv_.turns();
    if (r.id != active_id_ || turns.isEmpty()) return;
    active_id_.clear();
    Turn& reply = turns.last();
    reply.text = r.output;  // the authoritative text (includes a flushed tail)
    reply.token_ids = r.token_ids;
    reply.finish_reason = r.finish_reason;
    // The scheduler's detail often starts with the reason itself
    // ("cancelled during decode"): show it once.
    const QString finish = r.error.isEmpty() ? r.finish_reason
                           : r.error.startsWith(r.finish_reason)
                               ? r.error
                               : r.finish_reason + " (" + r.error + ")";
    // The prompt's tokens the prefix cache held (the earlier turns) were
    // not computed again: what TTFT paid for is the rest.
    const QString cached = r.prompt_cached_tokens < 0
                               ? QString()
                               : QStringLiteral(" (%1 cached)").arg(r.prompt_cached_tokens);
    QString footer =
        QStringLiteral("%1 tokens · TTFT %2 · %3 tokens/s · prompt %4 tokens%5 · finish: %6")
            .arg(r.generated_tokens)
            .arg(r.ttft_ms >= 0 ? QString::number(r.ttft_ms, 'f', 1) + " ms" : "—")
            .arg(r.decode_tps, 0, 'f', 1)
            .arg(r.prompt_tokens)
            .arg(cached, finish);
    // Past the context the model was trained at, as llama.cpp warns.
    if (r.past_n_ctx_train)
        footer += tr(" · past the model's %1-token training context: output past it is unreliable")
                      .arg(r.n_ctx_train);
    if (!r.target_url.isEmpty()) {
        // A remote reply: client-side times; the token count is the
        // endpoint's, or counted from the stream's chunks (approximate).
        if (r.tokens_source != "usage") footer += tr(" · tokens approximate (no usage block)");
        // What was sent: the OpenAI fields (top-k, min-p and the repetition
        // penalty are not among them: the endpoint uses its own).
        const QString sent = tr("temp %1 · top-p %2 · %3 · max %4 tok")
                                 .arg(r.settings.temperature, 0, 'f', 2)
                                 .arg(r.settings.top_p, 0, 'f', 2)
                                 .arg(r.settings.fixed_seed ? tr("seed %1").arg(r.settings.seed)
                                                            : tr("no seed sent"))
                                 .arg(r.settings.max_tokens);
        footer += QStringLiteral(" · %1 at %2 · %3")
                      .arg(r.served_model.isEmpty() ? tr("remote model") : r.served_model,
                           r.target_url, sent);
    } else {
        footer +=
            QStringLiteral(" · %1 on %2 · %3")
                .arg(bridge_->modelInfo().fileName(), bridge_->backendName(), r.settings.summary());
    }
    footer += gui::speculation_footer(r.speculative_asked, r.speculative);
    reply.footer = footer;
    render();
    updateButtons();
    updateMeter();
    if (r.context_full)
        offerDrop();
    else if (r.finish_reason == "length")
        // Regenerating would stop at the same limit: the cure is a larger
        // limit for the next reply.
        setStatus(tr("The reply stopped at the max tokens limit (%1 tokens): raise Max tokens "
                     "in the settings for a longer reply.")
                      .arg(r.settings.max_tokens));
    else if (r.finish_reason == "error" || r.finish_reason == "rejected")
        setStatus(tr("The message was not answered: %1").arg(r.error));
    else if (r.past_n_ctx_train)
        setStatus(tr("The conversation (%1 tokens) went past the model's %2-token training "
                     "context: output past it is unreliable.")
                      .arg(r.prompt_tokens + r.generated_tokens)
                      .arg(r.n_ctx_train));
    emit replyFinished(r);
}

ChatView::DropPlan ChatView::dropPlan() const {
    DropPlan plan;
    const int n_ctx = bridge_->contextSize();
    const QList<Turn>& turns = conv_.turns();
    if (n_ctx <= 0 || turns.isEmpty() || !conv_.hasModel()) return plan;
    plan.tokens_before = conv_.prompt(turns).tokens();
    // Room for the next message's reply: max tokens, at most half the context.
    const int room = std::min(settings_().max_tokens, n_ctx / 2);
    qsizetype drop = 0;
    int left = plan.tokens_before;
    // Whole user + reply pairs from the front; the newest pair stays.
    while (left + room > n_ctx && drop + 2 < turns.size()) {
        drop += turns[drop].user && drop + 1 < turns.size() && !turns[drop + 1].user ? 2 : 1;
        left = conv_.prompt(turns.mid(drop)).tokens();
    }
    plan.turns = static_cast<int>(drop);
    plan.freed_tokens = plan.tokens_before - left;
    return plan;
}

int ChatView::dropOldestTurns() {
    if (isStreaming()) return 0;
    const DropPlan plan = dropPlan();
    if (plan.turns == 0) return 0;
    QList<Turn>& turns = conv_.turns();
    turns.erase(turns.begin(), turns.begin() + plan.turns);
    if (editing_ >= 0) cancelEdit();
    hideDropOffer();
    render();
    updateButtons();
    updateMeter();
    setStatus(
        tr("Dropped the oldest %1 turns (%2 tokens).").arg(plan.turns).arg(plan.freed_tokens));
    return plan.turns;
}

void ChatView::hideDropOffer() {
    contextNotice_->hide();
    dropTurns_->hide();
}

void ChatView::offerDrop() {
    const DropPlan plan = dropPlan();
    const int n_ctx = bridge_->contextSize();
    if (plan.turns == 0) {
        contextNotice_->setText(
            tr("This conversation (%1 tokens) fills the context of %2 tokens and has no older "
               "turn to drop: start a new chat, or raise the context size in the settings.")
                .arg(plan.tokens_before)
                .arg(n_ctx));
        dropTurns_->hide();
    } else {
        contextNotice_->setText(
            tr("This conversation (%1 tokens) no longer fits the context of %2 tokens. Dropping "
               "the oldest %3 turns frees %4 tokens; the rest stays.")
                .arg(plan.tokens_before)
                .arg(n_ctx)
                .arg(plan.turns)
                .arg(plan.freed_tokens));
        dropTurns_->show();
    }
    contextNotice_->show();
    setStatus(contextNotice_->text());
}

}  // namespace wb::ui
