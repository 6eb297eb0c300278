#pragma once
// The model bar across the top of the main window: the loaded model, an
// Open button (file dialog, Ctrl+O), a Recent menu, the device picker and,
// while a model loads, a progress bar with Cancel. GGUF files dropped on
// the main window arrive here too.

#include <QWidget>

#include "desktop/engine_bridge.h"
#include "desktop/memory_plan_text.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QToolButton;
class QMenu;

namespace wb::ui {

namespace detail {
class ElidedLabel;
}

/// Model bar with device picker.
class ModelBar : public QWidget {
    Q_OBJECT
  public:
    explicit ModelBar(QWidget* parent = nullptr);

    /// Fills the device picker, in the order given: the CPU entry reads
    /// "CPU (N threads)"; the entry with a default_reason says why it is the
    /// default in its own tooltip and the picker's; `vulkan_error` (if any)
    /// is shown in the picker's tooltip.
    void setDevices(const QList<gui::DeviceEntry>& devices, const QString& vulkan_error);
    /// Selects the entry with this backend and selector (falls back to the first).
    void selectDevice(const QString& backend, const QString& selector);
    /// The chosen entry.
    gui::DeviceEntry currentDevice() const;
    const QList<gui::DeviceEntry>& devices() const { return devices_; }

    void setRecent(const QStringList& paths);
    /// Shows the loaded model (or "No model loaded" for an empty info).
    void setModel(const gui::ModelInfo& info);
    /// Shows the memory plan of the model being opened or loaded (what it
    /// needs on the chosen device, whether it fits, the largest context).
    void setPlan(const gui::PlanText& plan);
    /// Puts the loaded model's cold start (phases, first token) in the
    /// model name's tooltip, under its path.
    void setColdStart(const gui::ColdStart& cold);
    /// The model name's label (tests read its tooltip).
    QLabel* modelLabel() const { return model_; }
    /// Shown when the model's own chat template cannot be used (tests read it).
    QLabel* templateNoteLabel() const { return templateNote_; }
    /// Shows progress (0..1) and the step; fraction < 0 hides the bar.
    void setLoading(double fraction, const QString& step);

  public slots:
    /// Opens the file dialog (Ctrl+O).
    void openDialog();

  signals:
    void openRequested(const QString& path);
    void cancelLoadRequested();
    void deviceChanged(const wb::gui::DeviceEntry& device);

  private:
    /// Fills the two memory lines from plan_ and the chosen device.
    void showMemory();

    QList<gui::DeviceEntry> devices_;
    QLabel* model_;                 ///< the file name
    detail::ElidedLabel* summary_;  ///< "· llama · F32, 32.00 bpw · 293K params"
    QLabel* templateNote_;          ///< why the model's chat template is not used
    QString pathTip_;               ///< the loaded model's file and tensor types, "" = none
    QPushButton* open_;
    QToolButton* recent_;
    QMenu* recentMenu_;
    QComboBox* device_;
    QLabel* deviceMem_;
    QLabel* planLabel_;   ///< the context part of the plan
    gui::PlanText plan_;  ///< of the model being opened or loaded
    QProgressBar* progress_;
    QPushButton* cancel_;
};

}  // namespace wb::ui
