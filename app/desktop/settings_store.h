#pragma once
// Persistence of what the user chose, with QSettings: generation settings,
// recent models, backend and device, window geometry and dock/splitter
// state. The GUI reads it at start and writes on every change, so a crash
// keeps the last settings.

#include <QByteArray>
#include <QSettings>
#include <QStringList>
#include <memory>

#include "desktop/gen_settings.h"

namespace wb::gui {

/// Typed access to the app's QSettings.
class SettingsStore {
  public:
    /// Most recent models kept in the list.
    static constexpr int kMaxRecent = 8;

    /// The user's settings (native format, organization
    /// "inference-workbench", application "workbench"); with `ini_path`,
    /// an INI file at that path instead (tests, screenshots).
    explicit SettingsStore(const QString& ini_path = {});

    GenSettings gen() const;
    void setGen(const GenSettings& s);

    /// Most recent first, existing entries moved to the front, at most kMaxRecent.
    QStringList recentModels() const;
    void addRecentModel(const QString& path);
    void removeRecentModel(const QString& path);

    /// The backend the user chose ("vulkan" or "cpu", from the device
    /// picker or --backend); empty when none was chosen, and then the
    /// default follows the hardware (EngineBridge::devices, default_reason).
    QString backend() const;
    void setBackend(const QString& b);
    /// Device selector (index or name substring); empty = engine default.
    QString device() const;
    void setDevice(const QString& d);

    /// The run log the user chose in place of the default (a salvaged or
    /// new log, ui/run_log_dialog); empty = the default path.
    QString runLogPath() const;
    void setRunLogPath(const QString& path);

    /// Days after which the app removes the prompt and answer text of logged
    /// responses when it starts (runlog::purge_text_older_than; rows and
    /// figures kept); 0 = keep the text (the default).
    int textRetentionDays() const;
    void setTextRetentionDays(int days);
    /// "Do not store text": the app's runs log responses without prompt
    /// and answer text (runs.no_text); default off.
    bool noText() const;
    void setNoText(bool on);

    /// The Chat tab's system prompt for the model file named `model` (its
    /// file name, so a model keeps its prompt wherever the file moves); ""
    /// when none was set.
    QString chatSystemPrompt(const QString& model) const;
    void setChatSystemPrompt(const QString& model, const QString& text);
    /// The chat template chosen for `model` ("model", a built-in short name
    /// or "none"); "" = the model's default.
    QString chatTemplate(const QString& model) const;
    void setChatTemplate(const QString& model, const QString& choice);

    /// The Chat tab's draft for speculative decoding (ui::DraftPicker):
    /// kind "none", "ngram" or "model" (the draft model `file`), most draft
    /// tokens `k` (1..64). Kept for every model, not per file.
    struct ChatDraft {
        QString kind = QStringLiteral("none");
        int k = 5;
        QString file;
        bool operator==(const ChatDraft&) const = default;
    };
    ChatDraft chatDraft() const;
    void setChatDraft(const ChatDraft& d);

    QByteArray windowGeometry() const;
    QByteArray windowState() const;
    void setWindow(const QByteArray& geometry, const QByteArray& state);
    QByteArray splitterState() const;
    void setSplitterState(const QByteArray& s);

    /// True until a model has been loaded once (first start loads the default model).
    bool firstStart() const;
    void setStarted();

    QSettings& raw() { return *s_; }
    void sync() { s_->sync(); }

  private:
    std::unique_ptr<QSettings> s_;
};

}  // namespace wb::gui
