// The main window's tabs, in display order (see tabs.h). To add a tab,
// write its widget and add one entry here.

#include "tabs.h"

#include <QCoreApplication>

#include "batch_panel.h"
#include "chat_view.h"
#include "compare/compare_tab.h"
#include "history_view.h"
#include "model_bar.h"
#include "run_recorder.h"
#include "settings_store.h"

namespace wb::ui {

namespace {

QWidget* make_chat(const TabContext& c) {
    auto* chat = new ChatView(c.bridge, c.recorder, c.settings);
    chat->setStore(c.store);  // template choice per model, system prompt
    return chat;
}

// The Compare tab loads its own models on the device chosen in the model
// bar and logs comparisons to the app's run log.
QWidget* make_compare(const TabContext& c) {
    auto* compare = new compare::CompareTab;
    compare->setBackend(c.store->backend(), c.store->device());
    if (c.recorder && c.recorder->isOpen()) compare->setRunLogPath(c.recorder->path());
    QObject::connect(
        c.modelBar, &ModelBar::deviceChanged, compare, [compare](const gui::DeviceEntry& d) {
            compare->setBackend(d.backend, d.backend == "cpu" ? QString() : d.selector);
        });
    return compare;
}

}  // namespace

const std::vector<TabSpec>& tab_specs() {
    // clang-format off
    static const std::vector<TabSpec> specs = {
        {"chat", QT_TRANSLATE_NOOP("tabs", "Chat"), QKeySequence(Qt::CTRL | Qt::Key_1), &make_chat},
        {"batch", QT_TRANSLATE_NOOP("tabs", "Batch"), QKeySequence(Qt::CTRL | Qt::Key_2), [](const TabContext& c) -> QWidget* { return new BatchPanel(c.bridge, c.recorder, c.settings); }},
        {"compare", QT_TRANSLATE_NOOP("tabs", "Compare"), QKeySequence(Qt::CTRL | Qt::Key_3), &make_compare},
        {"history", QT_TRANSLATE_NOOP("tabs", "History"), QKeySequence(Qt::CTRL | Qt::Key_4), [](const TabContext&) -> QWidget* { return new HistoryView; }},
    };
    // clang-format on
    return specs;
}

}  // namespace wb::ui
