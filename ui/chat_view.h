#pragma once
// The Chat tab: a multi-turn conversation with the loaded model, as a user
// of LM Studio or llama-server's web UI expects it.
//
// - The conversation is rendered with the model's own chat template
//   (tokenizer.chat_template) or a built-in format picked above the
//   transcript, by app/chat's build_prompt (ChatConversation), and tokenized
//   with special tokens parsed; a model without a template is completed as
//   plain text until a format is picked. A system prompt field sits beside
//   the template; both are kept per model file in the settings.
// - A token meter under the input counts the prompt the next message would
//   send (system prompt, turns, the text being typed) against the context
//   one request may hold, as the user types and after each turn.
// - Replies stream token by token (tokenArrived from the engine bridge,
//   queued on the GUI thread) and stop at the vocabulary's end-of-turn
//   tokens (<|im_end|>, <|eot_id|>, ...), which the engine does not emit as
//   text. Stop (Esc) cancels within one scheduler step.
// - Per message: Copy; Edit on a user message (its text goes back to the
//   input; sending replaces it and drops the turns after it); Regenerate on
//   a reply (a new seed; later turns are dropped). Under each reply: tokens,
//   TTFT, tokens/s, finish reason, model and settings.
// - Opening another model file starts a new chat (the status line says
//   so); reloading the same file (a new context size) keeps it.
// - "Send to" above the template picks the loaded model or a remote
//   OpenAI-compatible endpoint (TargetPicker): a remote reply streams the
//   same way, rendered by the endpoint's own template, timed on the client
//   and logged with the endpoint's URL and model id, never its key.
// - A conversation that no longer fits the context (a reply ended by the
//   context, or a prompt the scheduler refuses as longer than it) gets an
//   offer to drop its oldest turns, saying how many tokens that frees.

#include <QList>
#include <QWidget>
#include <functional>

#include "desktop/gen_settings.h"
#include "desktop/model_info.h"
#include "desktop/request_types.h"
#include "ui/chat_conversation.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTextBrowser;
class QTimer;
class QUrl;

namespace wb::gui {
class EngineBridge;
class RemoteClient;
class RunRecorder;
class SettingsStore;
}  // namespace wb::gui

namespace wb::ui {

class DraftPicker;
class TargetPicker;

/// Chat tab.
class ChatView : public QWidget {
    Q_OBJECT
  public:
    /// One turn of the conversation.
    using Turn = ChatTurn;

    /// `settings` gives the settings of the next request; `recorder` may
    /// be null (no logging).
    ChatView(gui::EngineBridge* bridge, gui::RunRecorder* recorder,
             std::function<gui::GenSettings()> settings, QWidget* parent = nullptr);

    /// Where the system prompt and template choice are kept per model file
    /// (null: not kept). Set before the first model loads.
    void setStore(gui::SettingsStore* store);

    /// Sends `text` as the next user message (what the Send button does;
    /// while editing a message, it replaces that message instead). Returns
    /// false when no model is loaded, a reply is streaming or the prompt
    /// cannot be built (the status line says why).
    bool send(const QString& text);
    /// Cancels the streaming reply (Esc).
    void stop();
    /// Drops the last reply and generates it again with the current
    /// settings and a newly drawn seed (also when the seed is fixed).
    void regenerate();
    /// Regenerates the reply at turn `index` (a new seed); the turns after
    /// it are dropped. Returns false when `index` is not a reply or a reply
    /// is streaming.
    bool regenerateAt(int index);
    /// Copies the last reply to the clipboard.
    void copyLastReply();
    /// Copies the text of turn `index` to the clipboard.
    void copyTurn(int index);
    /// Starts editing user turn `index`: its text goes to the input box and
    /// the next send replaces it. Returns false when it is not a user turn.
    bool editTurn(int index);
    /// Edits the last user message (Ctrl+E).
    void editLastMessage();
    /// Leaves editing without changes (Esc while editing).
    void cancelEdit();
    /// Index of the user turn being edited, -1 when none.
    int editingIndex() const { return editing_; }
    /// Replaces user turn `index` with `text`, drops the turns after it and
    /// sends it. Returns what send() returns; nothing changes on false.
    bool editAndResend(int index, const QString& text);
    /// Starts a new conversation (a new run in the run log).
    void newChat();
    /// Marks the conversation's run ended in the run log (the transcript
    /// stays; the next message starts a new run). Called when the app closes.
    void endRun();

    bool isStreaming() const { return !active_id_.isEmpty(); }
    const QList<Turn>& turns() const { return conv_.turns(); }
    /// The conversation: turns, system prompt, template (tests set turns
    /// through it; call refresh() afterwards).
    ChatConversation& conversation() { return conv_; }
    /// Re-renders the transcript and the meter after conversation() changed.
    void refresh();
    /// The plain-text form of `turns` (ChatConversation::plainText).
    static QString conversationText(const QList<Turn>& turns);
    /// The prompt of the last message sent (what went to the engine).
    const ChatPromptText& lastSentPrompt() const { return last_sent_; }
    /// The prompt the next send would submit (what the meter counts): the
    /// conversation plus the input box's text as a new user message, or,
    /// while user turn editingIndex() is edited, the turns before it plus
    /// the input box's text in its place (the turns after it are dropped).
    ChatPromptText pendingPrompt() const;
    /// Selects the template by choice name (ChatConversation::templateChoices()),
    /// as picking it in the box does. Returns false for an unknown name.
    bool setTemplate(const QString& choice);
    /// Sets the system prompt, as typing it does.
    void setSystemPrompt(const QString& text);

    /// The input box (tests type into it; Ctrl+Enter sends).
    QPlainTextEdit* input() const { return input_; }
    QPlainTextEdit* systemPromptEdit() const { return system_; }
    QComboBox* templateBox() const { return templateBox_; }
    /// "template in use · where it came from" line.
    QLabel* templateInfo() const { return templateInfo_; }
    /// Why the chosen template is not the one used (a model template that
    /// does not parse or hits a limit); hidden when there is nothing to say.
    QLabel* templateNotice() const { return notice_; }
    /// Token meter text: "Prompt 123 / 512 tokens ...".
    QLabel* meterLabel() const { return meterLabel_; }
    QProgressBar* meter() const { return meter_; }
    /// The last status message (what to do next), also emitted as statusMessage.
    QLabel* statusLabel() const { return status_; }
    /// The draft picker for speculative decoding (kept in the store).
    DraftPicker* draftPicker() const { return draft_; }
    /// The draft model file the session should be loaded with ("" = none).
    QString draftFile() const;
    /// Where messages go: the loaded model or a remote endpoint.
    TargetPicker* targetPicker() const { return picker_; }
    /// The remote endpoints' client (its requests in flight).
    gui::RemoteClient* remoteClient() const { return remote_; }
    /// The transcript (its per-message links: copy:N, edit:N, regen:N).
    QTextBrowser* transcript() const { return transcript_; }

    /// What dropping the oldest turns would do: `turns` turns (whole
    /// user + reply pairs, oldest first) leave, freeing `freed_tokens`
    /// prompt tokens, so the rest plus room for a reply (max tokens, at most
    /// half the context) fits the context. The system prompt always stays;
    /// the newest pair always stays. turns = 0 when nothing can be dropped.
    struct DropPlan {
        int turns = 0;
        int freed_tokens = 0;
        int tokens_before = 0;  ///< prompt tokens of the whole conversation
    };
    /// The plan for the current conversation (tokens of the prompt as
    /// ChatConversation builds it); turns = 0 without a model.
    DropPlan dropPlan() const;
    /// Drops the turns dropPlan() names (what the notice's button does);
    /// returns how many turns left. Does nothing while a reply streams.
    int dropOldestTurns();
    /// The "conversation does not fit" notice (tests read its text).
    QLabel* contextNotice() const { return contextNotice_; }

  signals:
    /// A reply finished (any reason).
    void replyFinished(const wb::gui::RequestResult& r);
    /// Something the user should know or do (for the window's status bar).
    void statusMessage(const QString& text);
    /// The draft model file picked changed ("" = none): the model should be
    /// loaded again with it (gui::LoadRequest::draft_model).
    void draftFileChanged(const QString& file);

  protected:
    bool eventFilter(QObject* obj, QEvent* ev) override;

  private:
    /// Appends `text` as a user turn and submits the conversation, drawing
    /// a new seed when `new_seed` even if the seed is fixed.
    bool sendTurn(const QString& text, bool new_seed);
    /// sendTurn() to the remote endpoint the picker has chosen.
    bool sendRemote(const QString& text, bool new_seed);
    /// Takes back the user turn and empty reply a send appended, when the
    /// request was not taken, and says `status`.
    void withdrawTurn(const QString& status);
    /// Stops the reply being generated, wherever it runs.
    void cancelActive();
    void submitCurrent();
    void render();
    void updateButtons();
    void updateMeter();
    void scheduleMeter();
    void setStatus(const QString& text);
    void onModelLoaded(const gui::ModelInfo& info);
    void onToken(const QString& id, int token, const QString& piece);
    void onFinished(const gui::RequestResult& r);
    void onLink(const QUrl& url);
    void onTemplatePicked(int row);
    void fillTemplateBox();
    void showPrompt();
    /// Shows the drop-turns offer for the current conversation.
    void offerDrop();
    void hideDropOffer();
    QString modelKey() const;

    gui::EngineBridge* bridge_;
    gui::RunRecorder* recorder_;
    gui::SettingsStore* store_ = nullptr;
    std::function<gui::GenSettings()> settings_;
    ChatConversation conv_;
    QString active_id_;
    qint64 run_id_ = 0;
    int counter_ = 0;
    int editing_ = -1;
    QString model_path_;
    ChatPromptText last_sent_;

    TargetPicker* picker_;
    gui::RemoteClient* remote_;
    QComboBox* templateBox_;
    QLabel* templateInfo_;
    QLabel* notice_;
    QPlainTextEdit* system_;
    QLabel* contextNotice_;
    QPushButton* dropTurns_;
    QTextBrowser* transcript_;
    QLabel* editBanner_;
    QPlainTextEdit* input_;
    QProgressBar* meter_;
    QLabel* meterLabel_;
    QTimer* meterTimer_;
    QLabel* status_;
    QPushButton* send_;
    QPushButton* stop_;
    QPushButton* regen_;
    QPushButton* copy_;
    QPushButton* newChat_;
    QPushButton* promptButton_;
    DraftPicker* draft_;
};

}  // namespace wb::ui
