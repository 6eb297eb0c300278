// What a new user runs into, each case found by driving the app by hand:
// a broken model file opened through the app (not only the classifier)
// names the file and what is wrong; the History tab's filter lists follow
// the run log as runs are added, and it says so when there is no run log;
// the History filter row and the batch results table keep their text
// columns readable at a normal window width, the results in arrival order;
// closing the window during a batch logs every request and ends the run;
// the chart window and batch options survive a restart; Help is the last
// menu; the model bar names the file. Real files: the bundled model (and a
// copy cut short), a text file named .gguf, real run logs, real engine (CPU
// reference) for the batch.

#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextEdit>
#include <QtTest>

#include "common/data_dir.h"
#include "desktop/engine_bridge.h"
#include "desktop/memory_plan_text.h"
#include "desktop/model_info.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "desktop/user_error.h"
#include "runlog/environment.h"
#include "runlog/run_log.h"
#include "ui/batch_panel.h"
#include "ui/batch_results_model.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_tab.h"
#include "ui/history_view.h"
#include "ui/live_charts.h"
#include "ui/main_window.h"
#include "ui/model_bar.h"
#include "ui/settings_panel.h"
#include "ui/widgets/quantize_dialog.h"
#include "ui/widgets/wrap_label.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

/// Writes the first 300000 of the model's 1185376 bytes to `path`: header
/// and tensor infos intact, tensor data cut short. False on an I/O error.
bool write_cut_model(const QString& path) {
    QFile src(kModel), dst(path);
    if (!src.open(QIODevice::ReadOnly) || !dst.open(QIODevice::WriteOnly)) return false;
    return dst.write(src.read(300000)) == 300000;
}

// Loads `path` on the CPU reference through the app's bridge and returns
// the error it reports (kind Unknown with an empty title if it loaded).
gui::UserError load_error(const QString& path) {
    gui::EngineBridge bridge;
    QSignalSpy failed(&bridge, &gui::EngineBridge::modelLoadFailed);
    QSignalSpy loaded(&bridge, &gui::EngineBridge::modelLoaded);
    gui::LoadRequest req;
    req.path = path;
    req.backend = "cpu";
    req.n_ctx = 256;
    bridge.loadModel(req);
    if (!QTest::qWaitFor([&] { return !failed.isEmpty() || !loaded.isEmpty(); }, 60000)) return {};
    if (failed.isEmpty()) return {};
    return failed.first().first().value<gui::UserError>();
}

// One value of a query on the SQLite file at `db` (its own connection).
QVariant sql_value(const QString& db, const QString& sql) {
    QVariant v;
    {
        QSqlDatabase c = QSqlDatabase::addDatabase("QSQLITE", "check");
        c.setDatabaseName(db);
        if (c.open()) {
            QSqlQuery q(c);
            if (q.exec(sql) && q.next()) v = q.value(0);
        }
    }
    QSqlDatabase::removeDatabase("check");
    return v;
}

QComboBox* combo_with_tip(QWidget* w, const QString& tip) {
    for (QComboBox* c : w->findChildren<QComboBox*>())
        if (c->toolTip() == tip) return c;
    return nullptr;
}

}  // namespace

class UiUsability : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void truncatedModelErrorNamesOffset();
    void textFileNamedGgufIsNotAGgufFile();
    void missingModelIsFileNotFound();
    void historyListsFollowNewRuns();
    void historySearchKeepsItsWidth();
    void historyWithoutRunLogSaysSo();
    void settingsDockKeepsItsWidth();
    void batchOutputColumnIsReadable();
    void closingDuringBatchLogsEveryRequest();
    void viewChoicesSurviveRestart();
    void helpIsTheLastMenu();
    void modelBarNamesTheFile();
    void pickingADeviceMovesTheModel();
    void chartExportIsNamedAndSharp();
    void compareHintFollowsModels();
    void requestTicksAreWholeNumbers();
    void compareSaysWhichModelFailed();
    void quantizedCopyGoesWhereItCanBeWritten();
    void statusMessageBelongsToItsTab();
    void loadedModelIsNamedByItsFile();
    void modelBarShowsItsWholeLine();
    void windowFitsSmallScreens();

  private:
    QTemporaryDir dir_;
};

void UiUsability::initTestCase() {
    QVERIFY(dir_.isValid());
}

void UiUsability::truncatedModelErrorNamesOffset() {
    // The model cut inside its tensor data (header and tensor infos intact,
    // 300000 of 1185376 bytes): the reader rejects a tensor running past
    // the end, and the app must say so, not "std::exception".
    const QString path = dir_.filePath("cut.gguf");
    QVERIFY(write_cut_model(path));
    const gui::UserError e = load_error(path);
    QVERIFY2(e.what != "std::exception", "the engine's message was lost on the worker thread");
    QCOMPARE(e.kind, gui::UserError::Kind::CorruptFile);
    QVERIFY2(e.where.contains(path), qPrintable(e.where));
    QVERIFY2(e.where.contains("byte offset"), qPrintable(e.where));
    QVERIFY2(e.what.contains("runs past the end"), qPrintable(e.what));
}

void UiUsability::textFileNamedGgufIsNotAGgufFile() {
    const QString path = dir_.filePath("notes.gguf");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("hello, this is a text file and not a model\n");
    f.close();
    const gui::UserError e = load_error(path);
    QCOMPARE(e.kind, gui::UserError::Kind::CorruptFile);
    QVERIFY2(e.title.contains("not a GGUF file"), qPrintable(e.title));
    QVERIFY2(e.where.contains(path), qPrintable(e.where));
}

void UiUsability::missingModelIsFileNotFound() {
    // A recent-list entry whose file was deleted: FileNotFound, which makes
    // the main window drop it from the Recent menu.
    const gui::UserError e = load_error(dir_.filePath("deleted.gguf"));
    QCOMPARE(e.kind, gui::UserError::Kind::FileNotFound);
}

void UiUsability::historyListsFollowNewRuns() {
    // The run filter was filled once, when the log had its first run:
    // runs logged later (every batch after the first chat) never appeared.
    const QString db = dir_.filePath("lists.sqlite");
    runlog::RunLog log = runlog::RunLog::open(db.toStdString());
    const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
    const int64_t mv = log.ensure_model_version(kModel.toStdString());
    auto add_run = [&](const char* name) {
        runlog::ResponseRecord r;
        r.run_id = log.begin_run(runlog::RunKind::Batch, name, nlohmann::json::object());
        r.model_version_id = mv;
        r.environment_id = env;
        r.request_id = "p1";
        r.prompt = "Once upon a time";
        r.output = "there was";
        r.finish_reason = "length";
        log.log_response(r);
    };
    add_run("first.jsonl");
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db));
    QComboBox* runs = combo_with_tip(&v, "Only responses of this run");
    QVERIFY(runs);
    QCOMPARE(runs->count(), 2);  // "all runs" + run 1
    add_run("second.jsonl");
    add_run("third.jsonl");
    v.refresh();  // what a logged response triggers
    QCOMPARE(runs->count(), 4);
    QVERIFY2(runs->itemText(1).contains("third.jsonl"), qPrintable(runs->itemText(1)));
    QCOMPARE(v.rowCount(), 3);
}

void UiUsability::historySearchKeepsItsWidth() {
    // Long run and model names made the combos as wide as their longest
    // item, and the search box shrank to a few pixels ("S…").
    const QString db = dir_.filePath("names.sqlite");
    {
        runlog::RunLog log = runlog::RunLog::open(db.toStdString());
        for (int i = 0; i < 3; ++i)
            log.begin_run(
                runlog::RunKind::Batch,
                "a-prompt-set-with-a-rather-long-file-name-" + std::to_string(i) + ".jsonl",
                nlohmann::json::object());
        log.ensure_model_version(kModel.toStdString());
    }
    ui::HistoryView v;
    QVERIFY(v.setDatabase(db));
    v.resize(820, 500);  // the tab's width in a 1400 px window with the charts beside it
    v.show();
    QVERIFY(QTest::qWaitForWindowExposed(&v));
    auto* search = v.findChild<QLineEdit*>();
    QVERIFY(search);
    QVERIFY2(search->width() >= 150, qPrintable(QString::number(search->width())));
    // Ctrl+F from the table goes to the search box.
    QApplication::setActiveWindow(&v);
    QTableView* table = v.findChild<QTableView*>();
    QVERIFY(table);
    table->setFocus();
    QVERIFY(QTest::qWaitFor([&] { return table->hasFocus(); }, 2000));
    QTest::keyClick(table, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(search->hasFocus());
}

void UiUsability::settingsDockKeepsItsWidth() {
    // The tabs' minimum width (the History filter row in one line) left
    // the settings dock a sliver with its labels cut ("Temperatu").
    // A wider system font than this machine's (CI machines and desktops
    // differ) grows the tabs' minimum widths first: the dock must still
    // keep the settings' own width.
    for (const double scale : {1.0, 1.4}) {
        const QFont saved = QApplication::font();
        QFont f = saved;
        f.setPointSizeF(saved.pointSizeF() * scale);
        QApplication::setFont(f);
        QTemporaryDir d;
        gui::SettingsStore store(d.filePath("s.ini"));
        {
            ui::MainWindow w(&store, nullptr);
            w.resize(1400, 860);  // the first-start size
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            auto* dock = w.findChild<QDockWidget*>("settingsDock");
            QVERIFY(dock);
            QVERIFY2(dock->width() >= w.settingsPanel()->sizeHint().width(),
                     qPrintable(QString("font x%1: %2 < %3")
                                    .arg(scale)
                                    .arg(dock->width())
                                    .arg(w.settingsPanel()->sizeHint().width())));
        }
        QApplication::setFont(saved);
    }
}

void UiUsability::historyWithoutRunLogSaysSo() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    gui::RunRecorder closed;  // never opened: the run log could not be opened
    ui::MainWindow w(&store, &closed);
    w.setInteractive(false);
    bool said = false;
    for (QLabel* l : w.history()->findChildren<QLabel*>())
        said = said || l->text().contains("not being logged");
    QVERIFY(said);
    for (QPushButton* b : w.history()->findChildren<QPushButton*>())
        if (b->text().startsWith("Export")) QVERIFY(!b->isEnabled());
}

void UiUsability::batchOutputColumnIsReadable() {
    gui::EngineBridge bridge;
    ui::BatchPanel p(&bridge, nullptr, [] { return gui::GenSettings{}; });
    p.resize(820, 500);
    p.show();
    QVERIFY(QTest::qWaitForWindowExposed(&p));
    QTableView* t = p.table();
    QHeaderView* h = t->horizontalHeader();
    int sum = 0;
    for (int c = 0; c < h->count(); ++c) sum += h->sectionSize(c);
    // Every column fits (no hidden "tokens" column) and the output has room.
    QVERIFY2(sum <= t->viewport()->width(),
             qPrintable(QString("%1 > %2").arg(sum).arg(t->viewport()->width())));
    QString sizes;
    for (int c = 0; c < h->count(); ++c) sizes += QString::number(h->sectionSize(c)) + ' ';
    QVERIFY2(h->sectionSize(ui::BatchResultsModel::Output) >= 180, qPrintable(sizes));
    // Rows show in the order requests finish, not sorted by id backwards.
    gui::RequestResult a, b;
    a.id = "s01";
    b.id = "s02";
    p.results()->append(a);
    p.results()->append(b);
    QCOMPARE(t->model()->index(0, ui::BatchResultsModel::Id).data().toString(), QString("s01"));
    QCOMPARE(t->model()->index(1, ui::BatchResultsModel::Id).data().toString(), QString("s02"));
}

void UiUsability::closingDuringBatchLogsEveryRequest() {
    // Closing the window mid-run quit at once: the run was never marked
    // ended and the requests in flight were never logged.
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    gui::RunRecorder recorder;
    QString notice;
    const QString db = d.filePath("runlog.sqlite");
    QVERIFY2(recorder.open(db, &notice), qPrintable(notice));
    QString prompts;
    for (int i = 0; i < 20; ++i)
        prompts += QString(
                       "{\"id\": \"s%1\", \"prompt\": \"Once upon a time\", "
                       "\"max_tokens\": 300}\n")
                       .arg(i, 2, 10, QChar('0'));
    const QString set = d.filePath("long.jsonl");
    {
        QFile f(set);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(prompts.toUtf8());
    }
    {
        ui::MainWindow w(&store, &recorder);
        w.setInteractive(false);
        QSignalSpy ready(&w, &ui::MainWindow::modelReady);
        w.openModel(kModel);
        QVERIFY(ready.wait(120000));
        QVERIFY(w.batch()->loadPromptFile(set));
        w.batch()->setConcurrency(2);
        QVERIFY(w.batch()->run());
        QVERIFY(w.close());
    }
    recorder.waitForIdle();
    QCOMPARE(sql_value(db, "SELECT COUNT(*) FROM runs WHERE kind = 'batch'").toInt(), 1);
    QVERIFY(!sql_value(db, "SELECT ended_ms FROM runs WHERE kind = 'batch'").isNull());
    QCOMPARE(sql_value(db, "SELECT COUNT(*) FROM responses").toInt(), 20);
    QVERIFY(
        sql_value(db, "SELECT COUNT(*) FROM responses WHERE finish_reason = 'cancelled'").toInt() >
        0);
}

void UiUsability::viewChoicesSurviveRestart() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    {
        ui::MainWindow w(&store, nullptr);
        w.setInteractive(false);
        w.charts()->setWindowSeconds(300);
        w.batch()->setConcurrency(16);
        w.batch()->setMaxQueue(7);
        w.batch()->setTimeoutMs(5000);
        QVERIFY(w.close());
    }
    gui::SettingsStore again(d.filePath("s.ini"));
    ui::MainWindow w(&again, nullptr);
    QCOMPARE(w.charts()->windowSeconds(), 300.0);
    QCOMPARE(w.batch()->concurrency(), 16);
    QCOMPARE(w.batch()->maxQueue(), 7);
    QCOMPARE(w.batch()->timeoutMs(), 5000);
}

void UiUsability::helpIsTheLastMenu() {
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    ui::MainWindow w(&store, nullptr);
    const QList<QAction*> menus = w.menuBar()->actions();
    QVERIFY(!menus.isEmpty());
    QCOMPARE(menus.last()->text(), QString("&Help"));
    bool tools = false;
    for (QAction* a : menus) tools = tools || a->text() == "&Tools";
    QVERIFY(tools);
}

void UiUsability::modelBarNamesTheFile() {
    // A model and its Q4_0 copy share general.name ("llama"): only the
    // file name tells them apart.
    gui::ModelInfo info = gui::ModelInfo::probe(kModel);
    ui::ModelBar bar;
    bar.setModel(info);
    bool named = false;
    for (QLabel* l : bar.findChildren<QLabel*>())
        named = named || l->text().contains("stories260K.gguf");
    QVERIFY(named);
}

void UiUsability::pickingADeviceMovesTheModel() {
    // The picker showed the new device while the model kept running on
    // the old one until the user opened it again.
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    w.setInteractive(false);
    const QList<gui::DeviceEntry> devices = w.modelBar()->devices();
    int vulkan = -1;
    for (int i = 0; i < devices.size(); ++i)
        if (devices[i].backend == "vulkan" && vulkan < 0) vulkan = i;
    if (vulkan < 0) QSKIP("no Vulkan device: only the CPU reference to pick");
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);
    w.openModel(kModel);
    QVERIFY(ready.wait(120000));
    QCOMPARE(w.bridge()->backendName(), QString("CPU"));
    auto* picker = w.modelBar()->findChild<QComboBox*>();
    QVERIFY(picker);
    picker->setCurrentIndex(vulkan);
    QVERIFY(ready.wait(120000));
    QCOMPARE(w.bridge()->loadedRequest().backend, QString("vulkan"));
    QCOMPARE(w.bridge()->backendName(), devices[vulkan].name);
}

void UiUsability::chartExportIsNamedAndSharp() {
    // Export PNG… proposed "chart-1.png" in the start directory and wrote
    // the chart at its on-screen size (about 300 x 170 px).
    ui::LiveCharts charts;
    charts.resize(320, 800);
    charts.show();
    QVERIFY(QTest::qWaitForWindowExposed(&charts));
    const QString proposed = charts.defaultExportPath(ui::LiveCharts::Latency);
    QVERIFY2(QFileInfo(proposed).isAbsolute(), qPrintable(proposed));
    QVERIFY2(QFileInfo(proposed).fileName().startsWith("workbench-latency-"), qPrintable(proposed));
    QVERIFY(proposed.endsWith(".png"));
    const QString png = dir_.filePath("lat.png");
    QVERIFY(charts.exportPng(ui::LiveCharts::Latency, png, 0, 0, 2.0));
    const QSize on_screen = charts.plot(ui::LiveCharts::Latency)->size();
    QCOMPARE(QImage(png).size(), on_screen * 2);
}

void UiUsability::compareHintFollowsModels() {
    ui::compare::CompareTab t;
    QVERIFY(t.statusText().contains("two or more"));
    t.addModel(kModel);
    QVERIFY(t.statusText().contains("two or more"));
    t.addModel(kModel);
    t.addModel(kModel);
    QVERIFY2(t.statusText().startsWith("3 models"), qPrintable(t.statusText()));
}

void UiUsability::requestTicksAreWholeNumbers() {
    ui::LiveCharts charts;
    charts.resize(320, 800);
    charts.show();
    QVERIFY(QTest::qWaitForWindowExposed(&charts));
    gui::LiveSnapshot s;
    for (int i = 0; i < 5; ++i) {
        s.t_s = i;
        s.queued = 16 - 4 * i;
        s.running = 4;
        charts.addSnapshot(s);
    }
    QCustomPlot* p = charts.plot(ui::LiveCharts::Queue);
    p->replot(QCustomPlot::rpImmediateRefresh);
    const QVector<double> ticks = p->yAxis->tickVector();
    QVERIFY(!ticks.isEmpty());
    for (double v : ticks) QVERIFY2(v == std::floor(v), qPrintable(QString::number(v)));
}

void UiUsability::compareSaysWhichModelFailed() {
    // A variant that cannot be loaded was reported in the per-token view as
    // "different vocabulary, token ids cannot be compared".
    const QString cut = dir_.filePath("cut-compare.gguf");
    QVERIFY(write_cut_model(cut));
    ui::compare::CompareTab t;
    t.setBackend("cpu", {});
    t.setMaxTokens(8);
    t.addModel(kModel);
    t.addModel(cut);
    QSignalSpy done(&t, &ui::compare::CompareTab::repliesFinished);
    t.runPrompt();
    QVERIFY(done.wait(60000));
    auto* diff = t.findChild<QTextEdit*>("tokenDiff");
    QVERIFY(diff);
    const QString text = diff->toPlainText();
    QVERIFY2(text.contains("B gave no reply"), qPrintable(text));
    QVERIFY2(!text.contains("vocabulary"), qPrintable(text));
}

void UiUsability::quantizedCopyGoesWhereItCanBeWritten() {
    // Beside a model in a writable folder; for the installed default model
    // (/usr/share/..., read-only) the user's Documents folder (else home).
    using ui::QuantizeDialog;
    QCOMPARE(QuantizeDialog::suggestedOutput("/data/models/tiny.gguf", "q4_0", true),
             QString("/data/models/tiny-q4_0.gguf"));
    const QString ro = QuantizeDialog::suggestedOutput(
        "/usr/share/inference-workbench/models/stories260K.gguf", "q8_0", false);
    QVERIFY2(!ro.startsWith("/usr/share"), qPrintable(ro));
    QCOMPARE(QFileInfo(ro).fileName(), QString("stories260K-q8_0.gguf"));
    const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    QVERIFY2(QFileInfo(ro).absolutePath() == QDir(docs).absolutePath() ||
                 QFileInfo(ro).absolutePath() == QDir::homePath(),
             qPrintable(ro));
}

void UiUsability::statusMessageBelongsToItsTab() {
    // The Chat tab's "No model loaded: …" stayed in the status bar after
    // the user had moved to the Batch tab, as if it were about the batch.
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    ui::MainWindow w(&store, nullptr);
    w.setInteractive(false);
    w.tabs()->setCurrentWidget(w.chat());
    QVERIFY(!w.chat()->send("hello"));  // no model loaded
    const QString chat_msg = w.statusBar()->currentMessage();
    QVERIFY2(chat_msg.startsWith("No model loaded"), qPrintable(chat_msg));
    w.tabs()->setCurrentWidget(w.batch());
    QCOMPARE(w.statusBar()->currentMessage(), QString());
    // A chat message raised while another tab is shown stays in the Chat tab.
    QVERIFY(!w.chat()->send("hello"));
    QCOMPARE(w.statusBar()->currentMessage(), QString());
    QVERIFY(w.chat()->statusLabel()->text().startsWith("No model loaded"));
    // A message about the whole app (model, device, run log) outlives a tab switch.
    w.tabs()->setCurrentWidget(w.chat());
    QVERIFY(!w.chat()->send("hello"));
    w.statusBar()->showMessage("Device X is used for the next model load.");
    w.tabs()->setCurrentWidget(w.batch());
    QCOMPARE(w.statusBar()->currentMessage(), QString("Device X is used for the next model load."));
}

void UiUsability::loadedModelIsNamedByItsFile() {
    // The status bar read "model llama" and a reply's footer "llama on
    // llvmpipe": general.name, which the model and its quantized copies share.
    QTemporaryDir d;
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    w.setInteractive(false);
    gui::GenSettings s = w.settingsPanel()->settings();
    s.max_tokens = 4;
    w.settingsPanel()->setSettings(s);
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);
    w.openModel(kModel, true);
    QVERIFY(ready.wait(120000));
    QStringList fields;
    for (QLabel* l : w.statusBar()->findChildren<QLabel*>()) fields << l->text();
    QVERIFY2(fields.contains("stories260K.gguf"), qPrintable(fields.join(" | ")));
    QVERIFY2(!fields.join(" | ").contains("model llama"), qPrintable(fields.join(" | ")));
    w.tabs()->setCurrentWidget(w.chat());
    QVERIFY(w.chat()->send("Once upon a time"));
    QVERIFY(QTest::qWaitFor([&] { return !w.chat()->isStreaming(); }, 120000));
    const QString transcript = w.chat()->transcript()->toPlainText();
    QVERIFY2(transcript.contains("stories260K.gguf on "), qPrintable(transcript));
}

void UiUsability::modelBarShowsItsWholeLine() {
    // With a Vulkan device picked, the bar read "stories260K.gguf · llama ·
    // llama · F32, 32.00 bpw · 2" (the parameter count cut off) next to
    // "2.0 GiB device memory · needs 0.01 GiB of 2.00 GiB · …": the name
    // and the device size were each said twice. The bar's width here is the
    // main window's at its default 1400 px less the settings dock.
    const QLocale before;
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    ui::ModelBar bar;
    gui::DeviceEntry dev;
    dev.selector = "0";
    dev.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
    dev.type = "cpu";
    dev.backend = "vulkan";
    dev.memory_bytes = qint64{2} << 30;
    bar.setDevices({dev}, {});
    bar.selectDevice("vulkan", "0");
    bar.setModel(gui::ModelInfo::probe(kModel));
    bar.setPlan(gui::plan_text(kModel, 2048, 4, dev.memory_bytes, true));
    bar.resize(1100, bar.sizeHint().height());
    bar.show();
    QVERIFY(QTest::qWaitForWindowExposed(&bar));
    QString all;
    for (QLabel* l : bar.findChildren<QLabel*>()) {
        all += l->text() + " | ";
        if (!l->isVisible()) continue;
        QVERIFY2(l->width() >= l->sizeHint().width(),
                 qPrintable(QString("\"%1\" %2 px wide, needs %3")
                                .arg(l->text())
                                .arg(l->width())
                                .arg(l->sizeHint().width())));
    }
    QVERIFY2(all.contains("293K params"), qPrintable(all));
    QVERIFY2(all.count("2.00 GiB") == 1, qPrintable(all));
    // Narrower, the summary ends in "…" (whole in its tooltip), not mid-letter.
    bar.resize(700, bar.height());
    QTest::qWait(20);
    auto* summary = bar.findChild<QLabel*>("modelSummary");
    QVERIFY(summary);
    QVERIFY2(summary->text().endsWith(QChar(0x2026)), qPrintable(summary->text()));
    QVERIFY2(summary->toolTip().endsWith("293K params"), qPrintable(summary->toolTip()));
    QLocale::setDefault(before);
}

void UiUsability::windowFitsSmallScreens() {
    // A 1366x768 laptop and a 1600x1000 screen hold the window with every
    // tab current, a model with a long file name loaded, a batch summary
    // shown, and long texts in the labels that change at run time; the
    // window does not widen itself when they change (they end in "…").
    QTemporaryDir d;
    const QString name = "stories260K-" +
                         QString("with-a-long-file-name-as-downloads-have-").repeated(4) +
                         "q8.gguf";
    QVERIFY(QFile::copy(kModel, d.filePath(name)));
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setBackend("cpu");
    ui::MainWindow w(&store, nullptr);
    w.setInteractive(false);
    gui::GenSettings s = w.settingsPanel()->settings();
    s.max_tokens = 2;
    w.settingsPanel()->setSettings(s);
    QSignalSpy ready(&w, &ui::MainWindow::modelReady);
    w.openModel(d.filePath(name), true);
    QVERIFY(ready.wait(120000));
    QVERIFY(w.batch()->loadSampleSet());
    QSignalSpy finished(w.batch(), &ui::BatchPanel::runFinished);
    QVERIFY(w.batch()->run());
    QVERIFY(finished.wait(120000));
    QVERIFY(w.batch()->findChild<QWidget*>("batchSummary")->isVisibleTo(w.batch()));

    const QString long_text = QString("a long text that changes at run time, ").repeated(12);
    QList<QLabel*> changing = w.statusBar()->findChildren<QLabel*>();
    changing << w.modelBar()->modelLabel() << w.modelBar()->findChild<QLabel*>("memoryPlan")
             << w.chat()->meterLabel() << w.batch()->findChild<QLabel*>("batchFile")
             << w.batch()->findChild<QLabel*>("batchStatus");
    for (QLabel* l : changing) QVERIFY(l);
    for (const QSize screen : {QSize(1366, 768), QSize(1600, 1000)}) {
        w.resize(screen);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        for (int t = 0; t < w.tabs()->count(); ++t) {
            w.tabs()->setCurrentIndex(t);
            QTest::qWait(20);
            const QString where = QString("%1x%2, tab %3")
                                      .arg(screen.width())
                                      .arg(screen.height())
                                      .arg(w.tabs()->tabText(t));
            QCOMPARE(w.size(), screen);
            for (QLabel* l : changing) l->setText(long_text + where);
            w.statusBar()->showMessage(long_text);
            QTest::qWait(50);
            const QSize min = w.minimumSizeHint();
            QVERIFY2(
                min.width() <= screen.width() && min.height() <= screen.height(),
                qPrintable(
                    QString("%1: minimum %2x%3").arg(where).arg(min.width()).arg(min.height())));
            QVERIFY2(w.size() == screen, qPrintable(QString("%1: the window became %2x%3")
                                                        .arg(where)
                                                        .arg(w.width())
                                                        .arg(w.height())));
            // The model's name is cut, whole in the tooltip.
            auto* name_label = qobject_cast<ui::ElideLabel*>(w.modelBar()->modelLabel());
            QVERIFY(name_label);
            QVERIFY(name_label->isElided());
            QVERIFY(name_label->shownText().endsWith(QChar(0x2026)));
        }
    }
}

QTEST_MAIN(UiUsability)

#include "test_ui_usability.moc"
