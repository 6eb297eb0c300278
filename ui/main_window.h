#pragma once
// The main window of `workbench`: model bar with device picker on top,
// settings panel (dock, left), tabs Chat / Batch / Compare / History in the
// middle, live charts beside them (right), status bar (model, quantization,
// device, memory in use, engine state). Owns the engine bridge; polls its
// metrics snapshot on a 10 Hz GUI-thread timer for the charts.

#include <QMainWindow>
#include <QPointer>
#include <QTabWidget>

#include "desktop/engine_bridge.h"
#include "desktop/gen_settings.h"

class QLabel;
class QMenu;
class QSplitter;
class QTabWidget;
class QTimer;

namespace wb::gui {
class RunRecorder;
class SettingsStore;
}  // namespace wb::gui

namespace wb::ui {

class BatchPanel;
class ChatView;
class HistoryView;
class LiveCharts;
class ModelBar;
class SettingsPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
  public:
    /// `store` persists settings and layout; `recorder` (may be closed)
    /// logs responses. Both must outlive the window.
    MainWindow(gui::SettingsStore* store, gui::RunRecorder* recorder, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads `path` on the device chosen in the model bar (or the CPU
    /// reference when `force_cpu`), with the context size and n_parallel
    /// from the settings panel.
    void openModel(const QString& path, bool force_cpu = false);
    /// At start: the last model used, else the bundled default model.
    void openStartupModel();
    /// When false, load errors go to the status bar and loadFailed() only
    /// (tests, screenshots); when true (default) a dialog offers actions.
    void setInteractive(bool on) { interactive_ = on; }

    gui::EngineBridge* bridge() const { return bridge_; }
    ChatView* chat() const { return chat_; }
    BatchPanel* batch() const { return batch_; }
    HistoryView* history() const { return history_; }
    LiveCharts* charts() const { return charts_; }
    SettingsPanel* settingsPanel() const { return settingsPanel_; }
    QTabWidget* tabs() const { return tabs_; }
    ModelBar* modelBar() const { return modelBar_; }
    /// Text of the status bar's engine-state label.
    QString engineStateText() const;
    /// Ticks of the metrics timer so far.
    int metricTicks() const { return ticks_; }
    /// The tabs that run something closing would stop, as "Title: what"
    /// (from each tab's TabHooks::busy, in tab order); empty when none.
    /// Closing asks once, naming these, when the window is interactive.
    QStringList busyTabs() const;

  signals:
    void modelReady(const wb::gui::ModelInfo& info);
    void loadFailed(const wb::gui::UserError& error);

  protected:
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

  private:
    /// The tab built from the entry `key` of tab_specs(), as T.
    template <typename T>
    T* tab(const char* key) const {
        for (int i = 0; i < tabs_->count(); ++i)
            if (tabs_->widget(i)->property("tabKey").toString() == QLatin1String(key))
                return qobject_cast<T*>(tabs_->widget(i));
        return nullptr;
    }
    void buildMenus();
    void onModelLoaded(const gui::ModelInfo& info);
    void onLoadFailed(const gui::UserError& e, const gui::LoadRequest& req);
    void onSettingsChanged(const gui::GenSettings& s, bool reload);
    /// True while a load, a request or a batch run is going: a reload for
    /// new context size / n_parallel then waits (it would drop the run's KV
    /// cache and its slots).
    bool runGoing() const;
    /// Loads the loaded model again, same file and device, with the settings
    /// panel's context size and n_parallel, when they differ from the loaded
    /// ones and nothing runs; else marks the reload pending (retried when
    /// the engine goes idle or the batch run ends). Says so in the status bar.
    void applyContextSettings();
    void tick();
    /// Marks busy tabs' titles (a dot) with what they run as the tooltip;
    /// every tick of the metrics timer (10 Hz).
    void updateBusyMarks();
    void updateStatus();
    void showShortcuts();
    /// Chart window and each tab's saved state (TabHooks::save/restore,
    /// under the tab's key), kept in the settings store across restarts.
    void restoreViewChoices();
    void saveViewChoices();
    /// Shows `text` from `tab` in the status bar for `timeout_ms` when that
    /// tab is the current one; it is cleared when the user switches tabs.
    void showTabMessage(QWidget* tab, const QString& text, int timeout_ms);

    gui::SettingsStore* store_;
    gui::RunRecorder* recorder_;
    gui::EngineBridge* bridge_;
    ModelBar* modelBar_;
    SettingsPanel* settingsPanel_;
    QTabWidget* tabs_;
    ChatView* chat_;
    BatchPanel* batch_;
    HistoryView* history_;
    LiveCharts* charts_;
    QSplitter* split_;
    QTimer* timer_;
    int ticks_ = 0;
    /// The per-request samples of the loaded model the charts already got:
    /// each snapshot carries the ones after it (a new cursor per load).
    metrics::EventCursor eventCursor_;
    bool interactive_ = true;
    bool reloadPending_ = false;  ///< context size / n_parallel wait for the current run
    QMenu* helpMenu_ = nullptr;
    QWidget* tabMessageOwner_ = nullptr;  ///< tab whose message the status bar shows, if any
    QString tabMessage_;

    QLabel* stModel_;
    QLabel* stQuant_;
    QLabel* stDevice_;
    QLabel* stMemory_;
    QLabel* stState_;
};

}  // namespace wb::ui
