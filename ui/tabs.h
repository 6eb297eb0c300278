#pragma once
// The main window's tabs come from one list (tabs.cpp, tab_specs()): each
// entry gives the tab's key, title, shortcut and how to build its widget.
// The tab bar, the View menu and the shortcut help are generated from it,
// so adding a tab (a server, a load test) is one entry in that list plus
// the tab's own files.

#include <QKeySequence>
#include <QWidget>
#include <functional>
#include <vector>

#include "gen_settings.h"

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

/// One tab of the main window.
struct TabSpec {
    const char* key;        ///< the widget's object name ("chat"), for lookups
    const char* title;      ///< on the tab and in the View menu (translated in context "tabs")
    QKeySequence shortcut;  ///< switches to it (View menu, shortcut help)
    std::function<QWidget*(const TabContext&)>
        make;  ///< builds its widget (parent set by the window)
};

/// The tabs, in display order: the one list.
const std::vector<TabSpec>& tab_specs();

}  // namespace wb::ui
