#pragma once
// The settings panel: sampling parameters (temperature, top-k, top-p,
// min-p, repetition penalty, seed), max tokens, context size and
// n_parallel. Emits changed() on every edit; the main window persists the
// values with SettingsStore and applies them to the next request. Context
// size and n_parallel ask for a model reload when their editing finishes
// (Enter or focus out; keyboard tracking is off, so no reload per keystroke).

#include <QWidget>

#include "desktop/gen_settings.h"

class QDoubleSpinBox;
class QSpinBox;
class QLineEdit;
class QCheckBox;
class QComboBox;

namespace wb::ui {

/// Form over gui::GenSettings.
class SettingsPanel : public QWidget {
    Q_OBJECT
  public:
    explicit SettingsPanel(QWidget* parent = nullptr);

    gui::GenSettings settings() const;
    /// Shows `s` without emitting changed().
    void setSettings(const gui::GenSettings& s);

    /// The run log's privacy choices: "do not store prompts and answers"
    /// (no-text runs) and the days after which the app removes the text of
    /// logged responses at start (0 = keep). Shown without emitting.
    void setRunLogPrivacy(bool no_text, int retention_days);
    bool noText() const;
    int textRetentionDays() const;

  signals:
    /// Any field changed. `reload` is true when the user finished editing
    /// context size or n_parallel (editingFinished, or the Defaults button):
    /// these take effect only when the model is loaded again, and the values
    /// may equal the loaded ones (focus left without a change).
    void changed(const gui::GenSettings& s, bool reload);
    /// One of the run log's privacy choices changed (setRunLogPrivacy).
    void runLogPrivacyChanged(bool no_text, int retention_days);

  private:
    void emitChanged(bool reload);

    QDoubleSpinBox* temp_;
    QSpinBox* topK_;
    QDoubleSpinBox* topP_;
    QDoubleSpinBox* minP_;
    QDoubleSpinBox* repeat_;
    QLineEdit* seed_;
    QCheckBox* fixedSeed_;
    QSpinBox* maxTokens_;
    QSpinBox* nCtx_;
    QSpinBox* nParallel_;
    QComboBox* kvType_;  // GenSettings::kvTypeNames()
    QCheckBox* noText_;
    QSpinBox* retentionDays_;
    bool quiet_ = false;
};

}  // namespace wb::ui
