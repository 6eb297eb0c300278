#pragma once
// The main window's tabs come from one list (tabs.cpp, tab_specs()): each
// entry gives the tab's key, title, shortcut, how to build its widget and,
// optionally, its hooks: whether it is busy, how it stops when the window
// closes, and what it keeps across restarts. The tab bar, the View menu,
// the shortcut help, the busy marks on the tab titles, the close question,
// the shutdown order and the saved state are generated from it, so adding
// a tab (a server, a load test) is one entry in that list and the tab's own
// files in ui/ (CMake compiles every .cpp there).

#include <QKeySequence>
#include <QString>
#include <QWidget>
#include <functional>
#include <vector>

#include "desktop/gen_settings.h"

class QSettings;

namespace wb::gui {
class EngineBridge;
class RunRecorder;
class SettingsStore;
}  // namespace wb::gui

namespace wb::ui {

class ModelBar;

/// What a tab may use when it is built: all owned by the main window or the
/// app and alive as long as the tab; `recorder` may be closed (no run log).
struct TabContext {
    gui::EngineBridge* bridge = nullptr;
    gui::RunRecorder* recorder = nullptr;
    gui::SettingsStore* store = nullptr;
    ModelBar* modelBar = nullptr;
    std::function<gui::GenSettings()> settings;  ///< the settings panel's current values
};

/// A tab's part in the window's life beyond being shown. Every member is
/// optional: a tab without hooks is never busy, stops with the window and
/// keeps nothing. Each is called on the GUI thread with the tab's own
/// widget (the one `make` built).
struct TabHooks {
    /// What the tab runs that closing would stop, as a phrase for the close
    /// question ("batch run, 3 of 20 prompts finished"); "" when idle. The
    /// window polls it (10 Hz) to mark the tab's title while busy and asks
    /// it when the window closes. Must be cheap and never throw.
    std::function<QString(QWidget*)> busy;
    /// Closing, step 1: stop what the tab runs: submit nothing more, cancel
    /// its requests, and wait for work of its own outside the engine (the
    /// Compare tab's worker threads). The window then drains the engine
    /// (EngineBridge::shutdown: every request's last event is delivered
    /// and logged) and calls `finish`.
    std::function<void(QWidget*)> stop;
    /// Closing, step 2, after the engine delivered every last event: close
    /// what the tab keeps open (its run in the run log).
    std::function<void(QWidget*)> finish;
    /// Writes the tab's choices (last inputs, column widths) to `s`, whose
    /// group is already the tab's key, so keys read "batch/concurrency".
    /// Called when the window closes.
    std::function<void(QWidget*, QSettings& s)> save;
    /// Reads what `save` wrote (same group); absent keys leave the tab's
    /// defaults. Called once, after every tab is built.
    std::function<void(QWidget*, const QSettings& s)> restore;
};

/// One tab of the main window.
struct TabSpec {
    /// `key` and `title` are string literals (the title is translated in
    /// context "tabs"; mark it with QT_TRANSLATE_NOOP).
    TabSpec(const char* key_, const char* title_, QKeySequence shortcut_,
            std::function<QWidget*(const TabContext&)> make_, TabHooks hooks_ = {})
        : key(key_),
          title(title_),
          shortcut(std::move(shortcut_)),
          make(std::move(make_)),
          hooks(std::move(hooks_)) {}

    const char* key;        ///< the widget's object name ("chat"), for lookups; settings group
    const char* title;      ///< on the tab and in the View menu (translated in context "tabs")
    QKeySequence shortcut;  ///< switches to it (View menu, shortcut help)
    std::function<QWidget*(const TabContext&)>
        make;        ///< builds its widget (parent set by the window)
    TabHooks hooks;  ///< busy state, shutdown, saved state
};

/// The tabs, in display order: the one list.
const std::vector<TabSpec>& tab_specs();

}  // namespace wb::ui
