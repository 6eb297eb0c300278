// The main window's tabs through their one list (ui/tabs.cpp): a busy tab
// is marked and named by the one close question (and a "No" keeps the
// window and the run), an idle window closes without asking, quitting
// stops each tab through its hooks with every run-log row written, and the
// tabs' saved state round-trips through QSettings. Also the small findings
// of a new user's first try: one name for the CPU backend, the Compare tab's and the
// quantize dialog's empty states. Real model (stories260K) on the CPU, a
// real SQLite run log, the real main window, offscreen.

#include <sqlite3.h>

#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <memory>

#include "common/data_dir.h"
#include "compare/compare.h"
#include "desktop/engine_bridge.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "loader/backend_choice.h"
#include "ui/batch_panel.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/compare_tab.h"
#include "ui/compare/report_table.h"
#include "ui/main_window.h"
#include "ui/model_bar.h"
#include "ui/tabs.h"
#include "ui/widgets/quantize_dialog.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

/// Answers the next modal message box with `button` and records its text
/// in `*seen` (appended, so a second question shows up as a second entry).
/// Polls every 20 ms while `watching` lives.
QTimer* answer_boxes(QObject* owner, QMessageBox::StandardButton button, QStringList* seen) {
    auto* t = new QTimer(owner);
    QObject::connect(t, &QTimer::timeout, [button, seen] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box) return;
        *seen << box->text();
        box->done(button);
    });
    t->start(20);
    return t;
}

/// One integer from `sql` on the SQLite file `db` (-1 on error).
qint64 query_int(const QString& db, const char* sql) {
    sqlite3* h = nullptr;
    qint64 v = -1;
    if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return v;
}

}  // namespace

class UiTabs : public QObject {
    Q_OBJECT
  private slots:
    void busyTabsAreNamedOnceAndStoppedOnQuit();
    void idleWindowClosesWithoutAsking();
    void savedStateRoundTrips();
    void cpuBackendHasOneName();
    void defaultDeviceFollowsFakedDevices();
    void defaultDeviceFollowsThisMachine();
    void compareShowsEmptyStateBeforeModels();
    void quantizeDialogShowsPlaceholderUntilStart();
    void everyListedTabIsInTabBarViewMenuAndShortcutHelp();
};

void UiTabs::busyTabsAreNamedOnceAndStoppedOnQuit() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    gui::GenSettings g = store.gen();
    g.max_tokens = 2000;  // long enough that the run is still going when the window closes
    g.n_ctx = 4096;       // the chat's reply and a batch prompt fit side by side
    store.setGen(g);
    const QString db = d.filePath("runlog.sqlite");
    auto recorder = std::make_unique<gui::RunRecorder>();
    QString notice;
    QVERIFY(recorder->open(db, &notice));
    auto w = std::make_unique<ui::MainWindow>(&store, recorder.get());
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    QSignalSpy ready(w.get(), &ui::MainWindow::modelReady);
    w->openModel(kModel, true);
    QVERIFY(ready.wait(120000));
    QVERIFY(w->busyTabs().isEmpty());

    ui::BatchPanel* batch = w->batch();
    QVERIFY(batch->loadSampleSet());
    batch->setConcurrency(1);
    QVERIFY(batch->run());
    QVERIFY(w->chat()->send("Once upon a time"));
    const int total = batch->progress().total;
    QCOMPARE(total, 20);

    // Both busy tabs are named, in tab order, and marked on their titles.
    const QStringList busy = w->busyTabs();
    QCOMPARE(busy.size(), 2);
    QVERIFY2(busy[0].startsWith("Chat: "), qPrintable(busy[0]));
    QVERIFY2(busy[1].startsWith("Batch: batch run, "), qPrintable(busy[1]));
    QTRY_VERIFY2_WITH_TIMEOUT(
        w->tabs()->tabText(1).contains(QChar(0x25CF)),
        qPrintable(w->busyTabs().join(" / ") + " - tab: " + w->tabs()->tabText(1)), 3000);
    QVERIFY(!w->tabs()->tabText(3).contains(QChar(0x25CF)));  // History runs nothing

    // "No": one question naming both; the window and the run stay.
    QStringList seen;
    QTimer* no = answer_boxes(this, QMessageBox::No, &seen);
    QVERIFY(!w->close());
    delete no;
    QCOMPARE(seen.size(), 1);
    QVERIFY2(seen[0].contains("Chat: ") && seen[0].contains("Batch: batch run"),
             qPrintable(seen[0]));
    QVERIFY(w->isVisible());
    QVERIFY(batch->isRunning());

    // "Quit": asked once more, then each tab stops through its hooks.
    seen.clear();
    QTimer* yes = answer_boxes(this, QMessageBox::Yes, &seen);
    QVERIFY(w->close());
    delete yes;
    QCOMPARE(seen.size(), 1);
    w.reset();
    recorder.reset();
    // Every prompt of the batch has its row with a final finish reason
    // (cancelled ones as "cancelled"), the run is marked ended, and the
    // chat's reply was logged too.
    QCOMPARE(query_int(db,
                       "SELECT COUNT(*) FROM responses r JOIN runs u ON r.run_id = u.id "
                       "WHERE u.kind = 'batch'"),
             qint64(total));
    QCOMPARE(query_int(db,
                       "SELECT COUNT(*) FROM responses r JOIN runs u ON r.run_id = u.id "
                       "WHERE u.kind = 'batch' AND r.finish_reason = 'cancelled'") > 0,
             true);
    QCOMPARE(query_int(db,
                       "SELECT COUNT(*) FROM responses WHERE finish_reason = 'interrupted' "
                       "OR finished_ms IS NULL"),
             qint64(0));
    QCOMPARE(query_int(db, "SELECT COUNT(*) FROM runs WHERE ended_ms IS NULL"), qint64(0));
    QCOMPARE(query_int(db,
                       "SELECT COUNT(*) FROM responses r JOIN runs u ON r.run_id = u.id "
                       "WHERE u.kind = 'chat'"),
             qint64(1));
}

void UiTabs::idleWindowClosesWithoutAsking() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(w.busyTabs().isEmpty());
    QStringList seen;
    QTimer* any = answer_boxes(this, QMessageBox::No, &seen);
    QVERIFY(w.close());
    delete any;
    QVERIFY2(seen.isEmpty(), qPrintable(seen.join(" | ")));
}

void UiTabs::savedStateRoundTrips() {
    QTemporaryDir d;
    const QString ini = d.filePath("s.ini");
    {
        gui::SettingsStore store(ini);
        store.setBackend("cpu");
        ui::MainWindow w(&store, nullptr);
        w.batch()->setConcurrency(3);
        w.batch()->setMaxQueue(7);
        w.batch()->setTimeoutMs(1234);
        w.batch()->setSystemPrompt("Tell it in three lines.");
        auto* compare = w.findChild<ui::compare::CompareTab*>();
        QVERIFY(compare);
        compare->setPrompt("A dragon sat");
        compare->setMaxTokens(5);
        compare->setPerplexityContext(256);
        QVERIFY(w.close());
    }
    {
        // Written under each tab's key (the batch keys as earlier releases wrote them).
        const QSettings s(ini, QSettings::IniFormat);
        QCOMPARE(s.value("batch/concurrency").toInt(), 3);
        QCOMPARE(s.value("compare/prompt").toString(), QString("A dragon sat"));
    }
    gui::SettingsStore store(ini);
    ui::MainWindow w(&store, nullptr);
    QCOMPARE(w.batch()->concurrency(), 3);
    QCOMPARE(w.batch()->maxQueue(), 7);
    QCOMPARE(w.batch()->timeoutMs(), 1234);
    QCOMPARE(w.batch()->systemPrompt(), QString("Tell it in three lines."));
    auto* compare = w.findChild<ui::compare::CompareTab*>();
    QCOMPARE(compare->prompt(), QString("A dragon sat"));
    QCOMPARE(compare->maxTokens(), 5);
    QCOMPARE(compare->perplexityContext(), 256);
}

void UiTabs::cpuBackendHasOneName() {
    // Picker, status bar (EngineBridge::backendName after a CPU load) and
    // the Compare figures all say "CPU".
    const QList<gui::DeviceEntry> devices = gui::EngineBridge::devices();
    QVERIFY(!devices.isEmpty());
    // First when the CPU is the default (no Vulkan device is a GPU), else last.
    const int cpu_at = devices.first().backend == "cpu" ? 0 : static_cast<int>(devices.size()) - 1;
    QCOMPARE(devices[cpu_at].backend, QString("cpu"));
    QCOMPARE(devices[cpu_at].name, QString("CPU"));

    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    w.setInteractive(false);
    auto* picker = w.modelBar()->findChild<QComboBox*>();
    QVERIFY(picker);
    // The picker adds the threads it runs with (physical cores).
    QCOMPARE(picker->itemText(cpu_at),
             QString("CPU (%1 threads)").arg(model::physical_core_count()));
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);
    w.openModel(kModel, true);
    QVERIFY(ready.wait(120000));
    QCOMPARE(w.bridge()->backendName(), QString("CPU"));

    wb::compare::CompareReport r;
    r.models.resize(1);
    r.models[0].label = "A";
    r.models[0].backend = "cpu";  // Model::backend_name() of the CPU backends
    r.models[0].device.backend = "cpu";
    ui::compare::ReportTable table;
    table.setReport(r);
    const int row = table.rowOf("backend");
    QVERIFY(row >= 0);
    QVERIFY(table.item(row, 1));
    QCOMPARE(table.item(row, 1)->text(), QString("CPU"));
}

void UiTabs::defaultDeviceFollowsFakedDevices() {
    // With faked device lists: only lavapipe -> the CPU, listed
    // first, says why; a discrete GPU beside it -> Vulkan on the GPU.
    gui::DeviceEntry lavapipe;
    lavapipe.selector = "0";
    lavapipe.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
    lavapipe.type = "CPU";
    lavapipe.backend = "vulkan";
    gui::DeviceEntry rtx = lavapipe;
    rtx.selector = "1";
    rtx.name = "NVIDIA GeForce RTX 4090";
    rtx.type = "discrete GPU";

    const QList<gui::DeviceEntry> cpu_only = gui::arrange_devices(
        {lavapipe}, model::choose_default_backend({{lavapipe.name.toStdString(), "cpu"}}, 4));
    QCOMPARE(cpu_only.size(), 2);
    QCOMPARE(cpu_only[0].backend, QString("cpu"));
    QCOMPARE(cpu_only[0].threads, 4u);
    QVERIFY2(
        cpu_only[0].default_reason.startsWith("no GPU found: the only Vulkan device, llvmpipe"),
        qPrintable(cpu_only[0].default_reason));
    QVERIFY(cpu_only[1].default_reason.isEmpty());

    const QList<gui::DeviceEntry> with_gpu = gui::arrange_devices(
        {lavapipe, rtx},
        model::choose_default_backend(
            {{lavapipe.name.toStdString(), "cpu"}, {rtx.name.toStdString(), "discrete-gpu"}}, 4));
    QCOMPARE(with_gpu.size(), 3);
    QVERIFY(with_gpu[0].default_reason.isEmpty());
    QCOMPARE(with_gpu[1].name, rtx.name);
    QVERIFY2(with_gpu[1].default_reason.startsWith("GPU found: NVIDIA"),
             qPrintable(with_gpu[1].default_reason));
    QCOMPARE(with_gpu[2].backend, QString("cpu"));
    QVERIFY(with_gpu[2].default_reason.isEmpty());

    // The picker: "CPU (4 threads)" first, and why, in its tooltips.
    ui::ModelBar bar;
    bar.setDevices(cpu_only, {});
    auto* picker = bar.findChild<QComboBox*>();
    QVERIFY(picker);
    QCOMPARE(picker->itemText(0), QString("CPU (4 threads)"));
    QVERIFY2(picker->toolTip().contains("Default when none is picked: CPU (4 threads), because no "
                                        "GPU found"),
             qPrintable(picker->toolTip()));
    QVERIFY(picker->itemData(0, Qt::ToolTipRole).toString().contains(cpu_only[0].default_reason));
    bar.setDevices(with_gpu, {});
    QCOMPARE(picker->itemText(1), QString("1: NVIDIA GeForce RTX 4090"));
    QCOMPARE(picker->itemText(2), QString("CPU (4 threads)"));
    QVERIFY2(picker->toolTip().contains("Default when none is picked: 1: NVIDIA GeForce RTX 4090, "
                                        "because GPU found"),
             qPrintable(picker->toolTip()));
}

void UiTabs::defaultDeviceFollowsThisMachine() {
    // The main window with nothing chosen takes the default the devices
    // carry: on a machine whose only Vulkan device is lavapipe, the CPU.
    const QList<gui::DeviceEntry> devices = gui::EngineBridge::devices();
    bool gpu = false;
    for (const gui::DeviceEntry& d : devices)
        gpu = gpu || (d.backend == "vulkan" && d.type != "CPU");
    const QString expected = gpu ? "vulkan" : "cpu";
    QTemporaryDir d;
    const QString ini = d.filePath("s.ini");
    {
        gui::SettingsStore store(ini);
        QCOMPARE(store.backend(), QString());  // nothing chosen
        ui::MainWindow w(&store, nullptr);
        w.setInteractive(false);
        QCOMPARE(w.modelBar()->currentDevice().backend, expected);
        QVERIFY(!w.modelBar()->currentDevice().default_reason.isEmpty());
        auto* picker = w.modelBar()->findChild<QComboBox*>();
        QVERIFY(picker);
        if (!gpu) {
            QCOMPARE(picker->currentIndex(), 0);
            QCOMPARE(picker->itemText(0),
                     QString("CPU (%1 threads)").arg(model::physical_core_count()));
            QVERIFY2(picker->toolTip().contains("because no GPU found"),
                     qPrintable(picker->toolTip()));
        }
        QCOMPARE(store.backend(), QString());  // the default is not a choice
        // Picking a device is a choice, remembered for the next start.
        int other = -1;
        for (int i = 0; i < w.modelBar()->devices().size(); ++i)
            if (w.modelBar()->devices()[i].backend != expected && other < 0) other = i;
        if (other < 0) QSKIP("only one backend to pick here");
        picker->setCurrentIndex(other);
        QCOMPARE(store.backend(), w.modelBar()->devices()[other].backend);
    }
    gui::SettingsStore again(ini);
    QVERIFY(!again.backend().isEmpty());
    QVERIFY(again.backend() != expected);
    ui::MainWindow w(&again, nullptr);
    w.setInteractive(false);
    QCOMPARE(w.modelBar()->currentDevice().backend, again.backend());
}

void UiTabs::compareShowsEmptyStateBeforeModels() {
    ui::compare::CompareTab tab;
    auto* empty = tab.findChild<QLabel*>("compareEmptyState");
    auto* bar = tab.findChild<QProgressBar*>("compareProgress");
    QVERIFY(empty && bar);
    QVERIFY(empty->isVisibleTo(&tab));
    QVERIFY(empty->text().contains("Choose models to compare"));
    QVERIFY(!bar->isVisibleTo(&tab));  // no 0% bar before any run
    QVERIFY(!tab.table()->isVisibleTo(&tab));
    tab.addModel(kModel);
    QVERIFY(!empty->isVisibleTo(&tab));
    QVERIFY(tab.panes().front()->isVisibleTo(&tab));
    QVERIFY(tab.table()->isVisibleTo(&tab));
    QVERIFY(!bar->isVisibleTo(&tab));  // still no run
    tab.removeModel(tab.panes().front());
    QVERIFY(empty->isVisibleTo(&tab));
}

void UiTabs::quantizeDialogShowsPlaceholderUntilStart() {
    QTemporaryDir d;
    ui::QuantizeDialog dlg(kModel);
    auto* hint = dlg.findChild<QLabel*>("quantizePlaceholder");
    auto* bar = dlg.findChild<QProgressBar*>();
    QVERIFY(hint && bar);
    QVERIFY(hint->isVisibleTo(&dlg));
    QVERIFY(!bar->isVisibleTo(&dlg));
    QVERIFY(!dlg.tensorTable()->isVisibleTo(&dlg));
    dlg.setTarget("q8_0");
    dlg.setOutputPath(d.filePath("copy-q8_0.gguf"));
    QSignalSpy done(&dlg, &ui::QuantizeDialog::finished);
    dlg.start();
    QVERIFY(!hint->isVisibleTo(&dlg));
    QVERIFY(dlg.tensorTable()->isVisibleTo(&dlg));
    QVERIFY(done.wait(120000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(dlg.tensorTable()->rowCount(), 48);
    auto* warn = dlg.findChild<QLabel*>("quantizeFallbackWarning");
    QVERIFY(warn);
    QVERIFY(!warn->isVisibleTo(&dlg));  // Q8_0 divides every row of stories260K
    // At least ten tensor rows on screen at the dialog's own size.
    dlg.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dlg));
    QVERIFY2(dlg.tensorTable()->viewport()->height() >= 10 * dlg.tensorTable()->rowHeight(0),
             qPrintable(QString::number(dlg.tensorTable()->viewport()->height())));

    // Q4_K_M on stories260K: its 64-wide rows take no 256-element K-quant
    // block, so every tensor falls back. That is said on its own line, and
    // the summary names a few tensors, not all 48.
    dlg.setTarget("q4_k_m");
    dlg.setOutputPath(d.filePath("copy-q4_k_m.gguf"));
    QSignalSpy done2(&dlg, &ui::QuantizeDialog::finished);
    dlg.start();
    QVERIFY(done2.wait(120000));
    QVERIFY2(done2.at(0).at(0).toBool(), qPrintable(done2.at(0).at(1).toString()));
    QVERIFY(warn->isVisibleTo(&dlg));
    QVERIFY2(warn->text().startsWith("No tensor was written as Q4_K"), qPrintable(warn->text()));
    QVERIFY2(dlg.summaryText().contains("more (highlighted in the table)"),
             qPrintable(dlg.summaryText()));
}

// Adding a tab is one entry in ui::tab_specs(): the tab bar, the View menu
// (title and shortcut) and the shortcut help all come from that list.
void UiTabs::everyListedTabIsInTabBarViewMenuAndShortcutHelp() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    w.setInteractive(false);
    const std::vector<ui::TabSpec>& specs = ui::tab_specs();
    QCOMPARE(w.tabs()->count(), int(specs.size()));
    QMenu* view = nullptr;
    QAction* help = nullptr;
    for (QAction* a : w.menuBar()->actions()) {
        QMenu* m = a->menu();
        if (!m) continue;
        if (m->title().remove('&') == "View") view = m;
        for (QAction* b : m->actions())
            if (b->text().remove('&') == "Keyboard shortcuts") help = b;
    }
    QVERIFY(view);
    QVERIFY(help);
    QStringList seen;
    QTimer* ok = answer_boxes(this, QMessageBox::Ok, &seen);
    help->trigger();  // a modal box, answered by the timer
    delete ok;
    QCOMPARE(seen.size(), 1);
    for (size_t i = 0; i < specs.size(); ++i) {
        const QString title = QCoreApplication::translate("tabs", specs[i].title);
        QCOMPARE(w.tabs()->tabText(int(i)), title);
        bool in_menu = false;
        for (QAction* a : view->actions())
            in_menu = in_menu || (a->text() == title && a->shortcut() == specs[i].shortcut);
        QVERIFY2(in_menu, qPrintable(title + " is not in the View menu with its shortcut"));
        const QString line = specs[i].shortcut.toString(QKeySequence::NativeText) + "  " + title;
        QVERIFY2(seen[0].contains(line), qPrintable(line + " missing from: " + seen[0]));
    }
}

QTEST_MAIN(UiTabs)
#include "test_ui_tabs.moc"
