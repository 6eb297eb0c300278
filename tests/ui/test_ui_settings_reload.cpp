// Settings panel, context size and n_parallel with a model loaded: a new
// user expected them to apply, not a note that they apply "when the model
// is loaded again". Typing a value reloads nothing per keystroke; Enter
// (editing finished) loads the same model again with the new context, and
// the status bar says so; while a request runs the reload waits for it to
// end and the status bar says that. Real model (stories260K) on the CPU
// reference, the real main window, offscreen.

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "desktop/engine_bridge.h"
#include "desktop/settings_store.h"
#include "ui/main_window.h"
#include "ui/settings_panel.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

// Types `text` into `spin` key by key as a user does, replacing its value,
// without pressing Enter.
void type_into(QSpinBox* spin, const QString& text) {
    spin->setFocus();
    spin->selectAll();
    QTest::keyClicks(spin, text);
}

/// Shows `w` (non-interactive) and loads `model` in it on the CPU; false
/// when the window is not exposed or the model does not load within 2
/// minutes.
bool show_and_load(ui::MainWindow& w, const QString& model = kModel) {
    w.setInteractive(false);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w)) return false;
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);
    w.openModel(model, true);
    return ready.wait(120000);
}

}  // namespace

class UiSettingsReload : public QObject {
    Q_OBJECT
  private slots:
    void contextSizeReloadsOnEnter();
    void reloadWaitsForTheRunningRequest();
    void kvTypeReloadsAndThePlanFollows();
};

void UiSettingsReload::contextSizeReloadsOnEnter() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    QVERIFY(show_and_load(w));
    // Context "auto" (the default): the model's training context per
    // request (stories260K: 2048) times n_parallel (4), as `workbench-cli
    // batch` and `plan` size the pool; the status bar says both numbers.
    QCOMPARE(gui::GenSettings{}.n_ctx, 0);
    QCOMPARE(w.bridge()->loadedRequest().n_ctx, 2048 * 4);
    QVERIFY2(w.statusBar()->currentMessage().contains("KV pool 8192 tokens"),
             qPrintable(w.statusBar()->currentMessage()));
    QVERIFY2(w.statusBar()->currentMessage().contains("trained context 2048 per request"),
             qPrintable(w.statusBar()->currentMessage()));
    // One memory figure: what the model bar's plan said the load needs is
    // what the status bar reports the engine holds once loaded (the CPU
    // backend's own accounting), written the same way.
    auto* planned = w.findChild<QLabel*>("modelBarMemory");
    auto* held = w.findChild<QLabel*>("statusMemory");
    QVERIFY(planned && held);
    QVERIFY(QTest::qWaitFor([&] { return !held->text().isEmpty(); }, 10000));
    QVERIFY2(planned->text().startsWith("model needs "), qPrintable(planned->text()));
    QCOMPARE(held->text().mid(QString("memory ").size()),
             planned->text().mid(QString("model needs ").size()));
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);

    auto* ctx = w.settingsPanel()->findChild<QSpinBox*>("nCtx");
    QVERIFY(ctx);
    type_into(ctx, "512");
    // Keystrokes "5", "51", "512": no load may start before editing ends.
    QVERIFY(!w.bridge()->isLoading());
    QCOMPARE(ready.count(), 0);
    QTest::keyClick(ctx, Qt::Key_Return);
    QVERIFY(w.bridge()->isLoading());
    QVERIFY2(w.statusBar()->currentMessage().contains("512"),
             qPrintable(w.statusBar()->currentMessage()));
    QVERIFY(ready.wait(120000));
    QCOMPARE(ready.count(), 1);
    QCOMPARE(w.bridge()->loadedRequest().n_ctx, 512);
    QCOMPARE(w.bridge()->loadedRequest().path, kModel);
    QCOMPARE(w.bridge()->loadedRequest().backend, QString("cpu"));
    QVERIFY2(w.statusBar()->currentMessage().contains("KV pool 512 tokens"),
             qPrintable(w.statusBar()->currentMessage()));
    QCOMPARE(store.gen().n_ctx, 512);

    // Enter again without a change: no second load.
    QTest::keyClick(ctx, Qt::Key_Return);
    QVERIFY(!w.bridge()->isLoading());
}

void UiSettingsReload::reloadWaitsForTheRunningRequest() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    QVERIFY(show_and_load(w));
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);

    // A request that runs until the context is full.
    gui::RequestSpec spec;
    spec.id = "long";
    spec.prompt = "Once upon a time";
    spec.settings.max_tokens = 1 << 20;
    QSignalSpy finished(w.bridge(), &gui::EngineBridge::requestFinished);
    QVERIFY(w.bridge()->submit(spec));

    auto* par = w.settingsPanel()->findChild<QSpinBox*>("nParallel");
    QVERIFY(par);
    type_into(par, "2");
    QTest::keyClick(par, Qt::Key_Return);
    QVERIFY(!w.bridge()->isLoading());  // the request keeps its model
    QVERIFY2(w.statusBar()->currentMessage().contains("after the current run"),
             qPrintable(w.statusBar()->currentMessage()));

    w.bridge()->cancelAll();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 120000);  // applied once the engine went idle
    QCOMPARE(w.bridge()->loadedRequest().n_parallel, 2);
    QCOMPARE(w.bridge()->schedulerSlots(), 2);
    QVERIFY2(w.statusBar()->currentMessage().contains("n_parallel 2"),
             qPrintable(w.statusBar()->currentMessage()));
}

QTEST_MAIN(UiSettingsReload)
#include "test_ui_settings_reload.moc"

// The KV cache type picker (llama.cpp's -ctk/-ctv): choosing q8_0 loads the
// model again with a q8_0 cache, the status bar names it, the model bar's
// plan is what the engine then holds (smaller than with f16), and the
// choice is saved. A model whose head dimension (stories260K: 8) is not a
// multiple of 32 cannot have one: the load fails saying so.
void UiSettingsReload::kvTypeReloadsAndThePlanFollows() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    // golden2's tiny Llama 3 model: head_dim 64.
    QVERIFY(show_and_load(
        w, QString::fromStdString(wbtest::data_dir()) + "/golden2/llama3/llama3-f16.gguf"));
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);
    QCOMPARE(w.bridge()->loadedRequest().kv_type, QString("f16"));
    auto* planned = w.findChild<QLabel*>("modelBarMemory");
    auto* held = w.findChild<QLabel*>("statusMemory");
    QVERIFY(planned && held);
    QVERIFY(QTest::qWaitFor([&] { return !held->text().isEmpty(); }, 10000));
    const QString f16_plan = planned->text();

    auto* kv = w.settingsPanel()->findChild<QComboBox*>("kvType");
    QVERIFY(kv);
    QCOMPARE(kv->currentText(), QString("f16"));
    kv->setCurrentText("q8_0");
    emit kv->activated(kv->currentIndex());  // as a user's pick
    QVERIFY(w.bridge()->isLoading());
    QVERIFY(ready.wait(120000));
    QCOMPARE(w.bridge()->loadedRequest().kv_type, QString("q8_0"));
    QVERIFY2(w.statusBar()->currentMessage().contains("q8_0 KV cache"),
             qPrintable(w.statusBar()->currentMessage()));
    QCOMPARE(store.gen().kv_type, QString("q8_0"));
    QVERIFY(QTest::qWaitFor(
        [&] {
            return held->text().mid(QString("memory ").size()) ==
                   planned->text().mid(QString("model needs ").size());
        },
        10000));
    QVERIFY2(planned->text() != f16_plan, qPrintable(planned->text()));

    QSignalSpy failed(&w, &ui::MainWindow::loadFailed);
    w.openModel(kModel, true);
    QVERIFY(failed.wait(120000));
    QVERIFY2(w.statusBar()->currentMessage().contains("multiple of 32"),
             qPrintable(w.statusBar()->currentMessage()));
}
