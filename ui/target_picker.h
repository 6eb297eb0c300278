#pragma once
// "Send to": the loaded model or a remote OpenAI-compatible endpoint
// (gui::RemoteTarget), for the Chat tab (and any tab that can send to
// either). Endpoints are added with a dialog (base URL, model id, API key);
// the list and the choice persist in the settings under `group`, the keys
// in the desktop's secret store (gui::KeyStore), never in the settings.

#include <QList>
#include <QWidget>

#include "desktop/remote_target.h"

class QComboBox;
class QPushButton;

namespace wb::gui {
class SettingsStore;
}

namespace wb::ui {

/// A combo of "Loaded model" and the saved endpoints, with Add and Remove.
class TargetPicker : public QWidget {
    Q_OBJECT
  public:
    /// `group`: the settings group of this picker's choice ("chat", ...);
    /// the endpoint list itself is shared by every picker.
    explicit TargetPicker(const QString& group, QWidget* parent = nullptr);

    /// Reads the endpoint list and this picker's choice from `store`, and
    /// saves them there from now on (may be null: nothing persists).
    void setStore(gui::SettingsStore* store);
    /// Uses `keys` for the API keys (tests pass a store with their own
    /// service name); the default is the app's KeyStore.
    void setKeyStore(const gui::KeyStore& keys) { keys_ = keys; }

    /// A remote endpoint is chosen (else the loaded model).
    bool isRemote() const;
    /// The chosen endpoint (meaningful when isRemote()).
    gui::RemoteTarget remote() const;
    QList<gui::RemoteTarget> targets() const { return targets_; }
    /// Chooses the loaded model (index 0) or endpoint `index - 1`.
    void setCurrent(int index);
    int current() const;

    /// Adds (or updates, same base URL and model) `target` and chooses it.
    /// A non-empty `api_key` goes to the secret store first (has_key set);
    /// when the store refuses it, nothing is added and false is returned
    /// with the reason in `error`. An invalid base URL is refused likewise.
    bool addTarget(gui::RemoteTarget target, const QString& api_key, QString* error = nullptr);
    /// Removes the chosen endpoint and its key; the loaded model is chosen.
    void removeCurrent();
    /// The chosen endpoint's API key: "" when it has none; nullopt when the
    /// secret store cannot give it (the reason in `error`).
    std::optional<QString> apiKey(QString* error = nullptr) const;

    QComboBox* combo() const { return combo_; }

  protected:
    /// Re-reads the endpoint list (another tab's picker may have added one).
    void showEvent(QShowEvent* event) override;

  signals:
    /// The choice changed (by the user or a call above).
    void changed();

  private:
    void fill();
    /// Re-reads the list from the store, keeping the chosen endpoint.
    void reload();
    void save();
    void saveList();
    void addDialog();

    QString group_;
    gui::SettingsStore* store_ = nullptr;
    gui::KeyStore keys_;
    QList<gui::RemoteTarget> targets_;
    QComboBox* combo_ = nullptr;
    QPushButton* add_ = nullptr;
    QPushButton* remove_ = nullptr;
};

}  // namespace wb::ui
