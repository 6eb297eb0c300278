#pragma once
// The Chat tab: a multi-turn conversation with the loaded model. Replies
// stream token by token (tokenArrived from the engine bridge, queued on the
// GUI thread); Stop cancels within one scheduler step; Regenerate, Copy and
// New chat. Under each reply: tokens, TTFT, tokens/s, finish reason, model
// and settings. Models without a chat template get plain completion of the
// conversation text; with tokenizer.chat_template present the tab says that
// templates arrive in a later version (and still completes raw text).

#include <QList>
#include <QWidget>
#include <functional>

#include "gen_settings.h"
#include "request_types.h"

class QTextBrowser;
class QPlainTextEdit;
class QPushButton;
class QLabel;

namespace wb::gui {
class EngineBridge;
class RunRecorder;
}  // namespace wb::gui

namespace wb::ui {

/// Chat tab.
class ChatView : public QWidget {
    Q_OBJECT
  public:
    /// One turn of the conversation.
    struct Turn {
        bool user = true;
        QString text;
        QString footer;         ///< reply facts once finished
        QList<int> token_ids;   ///< reply tokens (replies only)
        QString finish_reason;  ///< "" while streaming
    };

    /// `settings` gives the settings of the next request; `recorder` may
    /// be null (no logging).
    ChatView(gui::EngineBridge* bridge, gui::RunRecorder* recorder,
             std::function<gui::GenSettings()> settings, QWidget* parent = nullptr);

    /// Sends `text` as the next user message (what the Send button does).
    /// Returns false when no model is loaded or a reply is streaming.
    bool send(const QString& text);
    /// Cancels the streaming reply (Esc).
    void stop();
    /// Drops the last reply and generates it again with the current
    /// settings and a newly drawn seed (also when the seed is fixed).
    void regenerate();
    /// Copies the last reply to the clipboard.
    void copyLastReply();
    /// Starts a new conversation (a new run in the run log).
    void newChat();
    /// Marks the conversation's run ended in the run log (the transcript
    /// stays; the next message starts a new run). Called when the app closes.
    void endRun();

    bool isStreaming() const { return !active_id_.isEmpty(); }
    const QList<Turn>& turns() const { return turns_; }
    /// The text the model completes for the conversation so far: turns
    /// joined, each later user message on a new line (plain completion).
    static QString conversationText(const QList<Turn>& turns);
    /// Shows or hides the "chat templates arrive later" notice.
    void setChatTemplateNotice(bool model_has_template);
    /// The input box (tests type into it; Ctrl+Enter sends).
    QPlainTextEdit* input() const { return input_; }

  signals:
    /// A reply finished (any reason).
    void replyFinished(const wb::gui::RequestResult& r);

  protected:
    bool eventFilter(QObject* obj, QEvent* ev) override;

  private:
    /// send(), drawing a new seed when `new_seed` even if the seed is fixed.
    bool sendTurn(const QString& text, bool new_seed);
    void submitCurrent();
    void render();
    void updateButtons();
    void onToken(const QString& id, int token, const QString& piece);
    void onFinished(const gui::RequestResult& r);

    gui::EngineBridge* bridge_;
    gui::RunRecorder* recorder_;
    std::function<gui::GenSettings()> settings_;
    QList<Turn> turns_;
    QString active_id_;
    qint64 run_id_ = 0;
    int counter_ = 0;

    QTextBrowser* transcript_;
    QPlainTextEdit* input_;
    QLabel* notice_;
    QPushButton* send_;
    QPushButton* stop_;
    QPushButton* regen_;
    QPushButton* copy_;
    QPushButton* newChat_;
};

}  // namespace wb::ui
