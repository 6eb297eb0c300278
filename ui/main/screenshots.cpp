#include "ui/main/screenshots.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <exception>
#include <functional>

#include "quantize/quantize_job.h"
#include "ui/batch_panel.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_tab.h"
#include "ui/history_view.h"
#include "ui/live_charts.h"
#include "ui/main_window.h"
#include "ui/settings_panel.h"

namespace wb::gui {

bool wait_until(const std::function<bool()>& pred, int timeout_ms) {
    QElapsedTimer t;
    t.start();
    while (!pred()) {
        if (t.elapsed() > timeout_ms) return false;
        QEventLoop loop;
        QTimer::singleShot(10, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return true;
}

namespace {

bool save(QWidget* w, const QString& path) {
    QApplication::processEvents();
    const bool ok = w->grab().save(path, "PNG");
    std::fprintf(stderr, "screenshots: %s %s\n", ok ? "wrote" : "FAILED to write",
                 qPrintable(path));
    return ok;
}

int fail(const char* what) {
    std::fprintf(stderr, "screenshots: %s\n", what);
    return 1;
}

}  // namespace

int take_screenshots(ui::MainWindow& w, const QString& dir, const QString& model_path) {
    QDir().mkpath(dir);
    w.setInteractive(false);
    w.resize(1600, 980);
    // The charts' default window, "This run": what a user sees after a
    // chat turn or a batch (the latest run fills the axis).
    w.charts()->setWindowSeconds(ui::LiveCharts::kThisRun);

    // Settings chosen for a readable session: sampled chat, longer replies
    // for the batch so the charts have a run to show.
    GenSettings s = w.settingsPanel()->settings();
    s.temperature = 0.8;
    s.seed = 7;
    s.fixed_seed = true;  // the same pictures every time
    s.max_tokens = 96;
    w.settingsPanel()->setSettings(s);

    if (!w.bridge()->hasModel() || w.bridge()->modelInfo().path != model_path)
        w.openModel(model_path);
    if (!wait_until([&] { return w.bridge()->hasModel() && !w.bridge()->isLoading(); }, 120000))
        return fail("the model did not load");

    // Chat: two turns.
    w.tabs()->setCurrentWidget(w.chat());
    for (const char* msg : {"Once upon a time, a little fox", "The next morning"}) {
        if (!w.chat()->send(QString::fromUtf8(msg))) return fail("chat send failed");
        if (!wait_until([&] { return !w.chat()->isStreaming(); }, 120000))
            return fail("chat reply timed out");
        // A reply on the CPU backend takes tens of ms, less than a chart
        // tick: idle a few ticks so the charts hold each turn.
        wait_until([] { return false; }, 700);
    }
    w.chat()->input()->setPlainText("What did the fox find?");
    if (!save(&w, dir + "/chat.png")) return 1;

    // Batch: the 20 sample prompts, 96 tokens each, concurrency 4.
    QTemporaryDir tmp;
    QFile in(":/prompts/stories20.jsonl");
    in.open(QIODevice::ReadOnly);
    const QByteArray sample = in.readAll();
    QByteArray set;
    int n = 0;
    for (const QByteArray& line : sample.split('\n')) {
        if (line.trimmed().isEmpty()) continue;
        // One prompt per line (plain text) so the panel's max tokens applies.
        const int from = line.indexOf("\"prompt\": \"") + 11;
        const int to = line.indexOf("\", \"max_tokens\"");
        set += line.mid(from, to - from).replace("\\\"", "\"") + "\n";
        ++n;
    }
    const QString set_path = tmp.filePath("stories20.txt");
    QFile out(set_path);
    out.open(QIODevice::WriteOnly);
    out.write(set);
    out.close();
    s.max_tokens = 96;
    w.settingsPanel()->setSettings(s);
    w.tabs()->setCurrentWidget(w.batch());
    if (!w.batch()->loadPromptFile(set_path)) return fail("cannot load the prompt set");
    w.batch()->setConcurrency(4);
    if (!w.batch()->run()) return fail("batch did not start");
    // Mid-run: live charts.
    wait_until([&] { return w.batch()->progress().done >= n / 2 || !w.batch()->isRunning(); },
               300000);
    if (!save(&w, dir + "/batch-running.png")) return 1;
    if (!wait_until([&] { return !w.batch()->isRunning(); }, 600000))
        return fail("batch timed out");
    wait_until([] { return false; }, 600);  // let the charts take a few more samples
    if (!save(&w, dir + "/batch.png")) return 1;
    if (!w.charts()->exportPng(ui::LiveCharts::Latency, dir + "/chart-latency.png", 800, 320))
        return fail("chart export failed");

    // Compare: the bundled model (A) against its Q8_0 copy (B), one prompt.
    auto* compare = w.findChild<ui::compare::CompareTab*>();
    if (!compare) return fail("no Compare tab");
    const QString q8 = tmp.filePath("stories260K-q8_0.gguf");
    try {
        quantize::QuantizeJob job(
            {model_path.toStdString(), q8.toStdString(), quant::Target::Q8_0, {}});
        job.run();
    } catch (const std::exception& e) {
        return fail(e.what());
    }
    w.tabs()->setCurrentWidget(compare);
    compare->addModel(model_path);
    compare->addModel(q8);
    compare->setPrompt(QStringLiteral("Once upon a time, a little fox"));
    compare->setMaxTokens(48);
    bool compared = false;
    QString compare_error;
    QObject::connect(compare, &ui::compare::CompareTab::reportReady, [&] { compared = true; });
    QObject::connect(compare, &ui::compare::CompareTab::comparisonFailed,
                     [&](const QString& m) { compare_error = m; });
    compare->runPrompt();
    if (!wait_until([&] { return compared || !compare_error.isEmpty(); }, 300000))
        return fail("compare timed out");
    if (!compared) return fail(qPrintable(compare_error));
    wait_until([] { return false; }, 300);  // a few ticks: the tab's busy mark goes
    if (!save(&w, dir + "/compare.png")) return 1;

    // History.
    w.tabs()->setCurrentWidget(w.history());
    wait_until([] { return false; }, 1500);  // the run log writes on its own thread
    w.history()->refresh();
    if (!save(&w, dir + "/history.png")) return 1;
    return 0;
}

}  // namespace wb::gui
