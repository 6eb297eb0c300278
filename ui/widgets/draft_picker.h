#pragma once
// The draft picker for speculative decoding (docs/speculative.md), in the
// Chat tab and in each Compare pane (compiled into wb_ui_compare):
// "Draft: none / n-gram / model file…" and k, the most draft tokens per
// target pass. n-gram (prompt lookup) needs nothing loaded; a draft model
// file is loaded with the model (gui::LoadRequest::draft_model), so picking
// one asks for a reload (draftFileChanged). What a request asks for and the
// reply footer's line are desktop/speculation_text.h.

#include <QString>
#include <QWidget>

#include "desktop/settings_store.h"

class QComboBox;
class QSpinBox;

namespace wb::ui {

/// Draft kind + k picker. Emits changed() whenever the choice changes (by
/// hand or setChoice), draftFileChanged() when the draft model file in use
/// changes (a new file, or switching between a file and none / n-gram).
class DraftPicker : public QWidget {
    Q_OBJECT
  public:
    explicit DraftPicker(QWidget* parent = nullptr);

    /// The current choice (kind "none", "ngram" or "model" + file, k).
    gui::SettingsStore::ChatDraft choice() const { return choice_; }
    /// Sets the choice as picking it does (kind "model" needs an existing
    /// file; an unknown kind, or a model whose file is missing or gone,
    /// means none; k is clamped to 1..64).
    void setChoice(const gui::SettingsStore::ChatDraft& c);
    /// The draft model file the session should load ("" unless kind "model").
    QString draftFile() const;

    QComboBox* kindBox() const { return kind_; }
    QSpinBox* kBox() const { return k_; }

  signals:
    void changed();
    void draftFileChanged(const QString& file);

  private:
    void fill();
    void onPicked(int row);

    gui::SettingsStore::ChatDraft choice_;
    QComboBox* kind_;
    QSpinBox* k_;
};

}  // namespace wb::ui
