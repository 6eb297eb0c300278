// The real app against the real engine and the bundled default model
// (offscreen): the main window loads stories260K on the first Vulkan device
// (lavapipe here) or, without one, the CPU reference; chat replies stream
// and match workbench-cli's greedy output; Stop cancels; a 20-prompt batch
// at concurrency 4 fills the table and the run log while the charts take
// samples and a GUI-thread timer keeps ticking.

#include <qcustomplot.h>

#include <QClipboard>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProcess>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <cmath>
#include <set>
#include <sstream>

#include "common/data_dir.h"
#include "common/process.h"
#include "common/raw_sqlite.h"
#include "desktop/engine_bridge.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "runlog/exporter.h"
#include "runlog/run_log.h"
#include "tokenizer/vocab.h"
#include "ui/batch_panel.h"
#include "ui/batch_results_model.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/compare_tab.h"
#include "ui/live_charts.h"
#include "ui/main_window.h"
#include "ui/model_bar.h"
#include "ui/settings_panel.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

// workbench-cli generate --json on the same backend: the expected tokens.
QJsonObject cli_generate(const QString& backend, const QString& prompt, int n) {
    const wbtest::ProcessResult r =
        wbtest::run_process(WB_CLI,
                            {"generate", "-m", kModel, "-p", prompt, "-n", QString::number(n),
                             "--temp", "0", "--backend", backend, "--json"},
                            300000);
    if (r.code != 0) {
        qWarning() << "workbench-cli failed:" << r.err;
        return {};
    }
    return QJsonDocument::fromJson(r.out).object();
}

}  // namespace

class UiApp : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void cleanupTestCase();
    void chatStreamsGreedyReplyLikeCli();
    void chartThroughputMatchesReply();
    void settingsDockBackFromViewMenu();
    void regenerateDrawsNewSeed();
    void stopCancelsLongReply();
    void batchOfTwentyAtConcurrencyFour();
    void batchSummaryMatchesCli();
    void batchSameTokensAndSettingsAsCli();
    void timingFieldsMeanTheSameOnEverySurface();
    void loadWarningsAreInTheStatusBar();

  private:
    QTemporaryDir dir_;
    std::unique_ptr<gui::SettingsStore> store_;
    std::unique_ptr<gui::RunRecorder> recorder_;
    std::unique_ptr<ui::MainWindow> w_;
    QString backend_;
};

void UiApp::initTestCase() {
    QVERIFY(dir_.isValid());
    store_ = std::make_unique<gui::SettingsStore>(dir_.filePath("settings.ini"));
    // Vulkan as the user's choice: without one, a machine whose only Vulkan
    // device is lavapipe (a CPU device) defaults to the CPU backend.
    store_->setBackend("vulkan");
    recorder_ = std::make_unique<gui::RunRecorder>();
    QString notice;
    QVERIFY2(recorder_->open(dir_.filePath("runlog.sqlite"), &notice), qPrintable(notice));
    w_ = std::make_unique<ui::MainWindow>(store_.get(), recorder_.get());
    w_->setInteractive(false);
    w_->show();
    // The chosen backend: the first Vulkan device, else (none) the CPU.
    backend_ = w_->modelBar()->currentDevice().backend;
    qInfo() << "device:" << w_->modelBar()->currentDevice().name << "backend" << backend_;
    QSignalSpy ready(w_.get(), &ui::MainWindow::modelReady);
    QSignalSpy failed(w_.get(), &ui::MainWindow::loadFailed);
    w_->openModel(kModel);
    QVERIFY(QTest::qWaitFor([&] { return ready.count() + failed.count() > 0; }, 300000));
    if (failed.count() > 0) {
        const auto e = failed.first().first().value<gui::UserError>();
        QFAIL(qPrintable("load failed: " + e.title + ": " + e.what));
    }
    QVERIFY(w_->bridge()->hasModel());
    QCOMPARE(w_->engineStateText(), QString("idle"));
}

void UiApp::cleanupTestCase() {
    w_.reset();
    recorder_.reset();
}

void UiApp::chatStreamsGreedyReplyLikeCli() {
    const QString prompt = "Once upon a time";
    const QJsonObject cli = cli_generate(backend_, prompt, 48);
    QVERIFY(!cli.isEmpty());
    QList<int> expected;
    for (const QJsonValue& v : cli["generated_token_ids"].toArray()) expected << v.toInt();
    QVERIFY(!expected.isEmpty());

    gui::GenSettings s = w_->settingsPanel()->settings();
    s.temperature = 0;
    s.max_tokens = 48;
    w_->settingsPanel()->setSettings(s);

    QList<int> streamed;
    int tokens_before_finish = -1;
    QSignalSpy done(w_->chat(), &ui::ChatView::replyFinished);
    auto c1 = connect(w_->bridge(), &gui::EngineBridge::tokenArrived, this,
                      [&](const QString& id, int tok, const QString&) {
                          if (id.startsWith("chat-")) streamed << tok;
                      });
    auto c2 = connect(w_->chat(), &ui::ChatView::replyFinished, this,
                      [&] { tokens_before_finish = static_cast<int>(streamed.size()); });
    // Type and press Ctrl+Enter, as a user does.
    w_->chat()->input()->setPlainText(prompt);
    QTest::keyClick(w_->chat()->input(), Qt::Key_Return, Qt::ControlModifier);
    QVERIFY(w_->chat()->isStreaming());
    QVERIFY(QTest::qWaitFor([&] { return done.count() == 1; }, 300000));
    disconnect(c1);
    disconnect(c2);

    const auto r = done.first().first().value<gui::RequestResult>();
    qInfo() << "reply:" << r.output;
    qInfo() << "finish" << r.finish_reason << "tokens" << r.generated_tokens << "TTFT ms"
            << r.ttft_ms << "decode tokens/s" << r.decode_tps;
    // Streamed one event per token, all before the finish.
    QCOMPARE(tokens_before_finish, static_cast<int>(expected.size()));
    QCOMPARE(streamed, expected);
    QCOMPARE(r.token_ids, expected);
    QCOMPARE(r.output, cli["text"].toString());
    QCOMPARE(r.finish_reason, cli["finish_reason"].toString());
    // The transcript shows the prompt and the reply.
    const auto& turns = w_->chat()->turns();
    QCOMPARE(turns.size(), 2);
    QCOMPARE(turns[0].text, prompt);
    QCOMPARE(turns[1].text, r.output);
    QVERIFY(turns[1].footer.contains("finish: " + r.finish_reason));
}

void UiApp::chartThroughputMatchesReply() {
    // A chat reply of about one second (shorter than the chart's 2 s
    // window): the decode-throughput chart's last sample of that turn must
    // read the reply's own tokens/s within 10% (it read half or less when it
    // divided by the whole window), and "This run" must fit that turn.
    ui::LiveCharts* charts = w_->findChild<ui::LiveCharts*>();
    QVERIFY(charts);
    charts->setWindowSeconds(ui::LiveCharts::kThisRun);
    gui::GenSettings s = w_->settingsPanel()->settings();
    s.temperature = 0;
    QSignalSpy done(w_->chat(), &ui::ChatView::replyFinished);
    // This device's speed first, from a short reply, to size a 1 s reply.
    // Greedy on this prompt runs without an EOS until the slot is full.
    const QString prompt = "Lily and Ben were friends. Every day";
    const int slot = w_->bridge()->loadedRequest().n_ctx / w_->bridge()->schedulerSlots();
    s.max_tokens = 32;
    w_->settingsPanel()->setSettings(s);
    w_->chat()->newChat();
    QVERIFY(w_->chat()->send(prompt));
    QVERIFY(QTest::qWaitFor([&] { return done.count() == 1; }, 300000));
    const double speed = done.at(0).first().value<gui::RequestResult>().decode_tps;
    // A long reply decodes slower than the 32-token one here (the KV
    // cache grows): half the measured speed gives about a second.
    s.max_tokens = std::clamp(static_cast<int>(speed * 0.5), 16, slot - 32);
    gui::RequestResult r;
    QSharedPointer<QCPGraphDataContainer> running, tps;
    double t_before = 0, last_busy_t = -1;
    int busy = 0;
    // A machine busier during the sizing reply than during this one makes
    // this one too short for two chart samples: then again, twice as long.
    for (int attempt = 0; attempt < 3 && busy < 2; ++attempt) {
        if (attempt > 0) s.max_tokens = std::min(2 * s.max_tokens, slot - 32);
        w_->settingsPanel()->setSettings(s);
        w_->chat()->newChat();
        // Idle for longer than the 2 s window, so it holds this turn only
        // (the active-time span runs from the first pass in the window, idle
        // gaps between turns included).
        QTest::qWait(2500);
        running = charts->plot(ui::LiveCharts::Queue)->graph(1)->data();
        tps = charts->plot(ui::LiveCharts::Throughput)->graph(0)->data();
        t_before = running->at(running->size() - 1)->key;
        const qsizetype before = done.count();
        QVERIFY(w_->chat()->send(prompt));
        QVERIFY(QTest::qWaitFor([&] { return done.count() == before + 1; }, 300000));
        QTest::qWait(300);  // a few idle samples after the turn
        r = done.at(before).first().value<gui::RequestResult>();
        // The chart's samples of this turn: the last one with a request running.
        last_busy_t = -1;
        busy = 0;
        for (auto it = running->constBegin(); it != running->constEnd(); ++it) {
            if (it->key > t_before && it->value > 0) {
                last_busy_t = it->key;
                ++busy;
            }
        }
        qInfo() << "reply" << r.generated_tokens << "tokens in" << r.e2e_ms << "ms at"
                << r.decode_tps << "tokens/s;" << busy << "chart samples while it ran";
    }
    QVERIFY2(busy >= 2, "the reply ended before the charts sampled it twice");
    const double chart = tps->findBegin(last_busy_t, false)->value;
    qInfo() << "chart at the turn's last sample" << chart << "tokens/s";
    QVERIFY2(std::abs(chart - r.decode_tps) <= 0.10 * r.decode_tps,
             qPrintable(QString("chart %1 vs reply %2 tokens/s").arg(chart).arg(r.decode_tps)));
    // "This run" fits the turn: it starts before the turn's first busy
    // sample, ends after its last, and spans about the turn (+1 s margin
    // and a sample or two either side, late on a loaded machine), not the
    // time since the model loaded.
    const auto range = charts->visibleRange();
    const auto run = charts->lastRun();
    QVERIFY(run.first >= t_before && run.first <= run.second);
    QVERIFY(run.second >= last_busy_t);
    QVERIFY2(range.second - range.first <= r.e2e_ms / 1000.0 + 3.0,
             qPrintable(QString("axis %1..%2 s for a %3 ms turn")
                            .arg(range.first)
                            .arg(range.second)
                            .arg(r.e2e_ms)));
}

void UiApp::settingsDockBackFromViewMenu() {
    // Closed with its title-bar button, the Settings dock comes back from
    // View > Settings panel (a checked action while it shows).
    auto* dock = w_->findChild<QDockWidget*>("settingsDock");
    QVERIFY(dock);
    QAction* toggle = nullptr;
    for (QAction* menu : w_->menuBar()->actions()) {
        if (menu->text().remove('&') != "View") continue;
        for (QAction* a : menu->menu()->actions())
            if (a->text().remove('&') == "Settings panel") toggle = a;
    }
    QVERIFY2(toggle, "View menu has a Settings panel entry");
    QVERIFY(toggle->isCheckable() && toggle->isChecked());
    dock->close();
    QVERIFY(!dock->isVisible());
    QVERIFY(!toggle->isChecked());
    toggle->trigger();
    QVERIFY(dock->isVisible());
    QVERIFY(toggle->isChecked());
}

void UiApp::regenerateDrawsNewSeed() {
    // Default settings (temperature 0.8, random seed): Regenerate gives
    // another reply, each with its own seed, shown in its footer.
    w_->chat()->newChat();
    gui::GenSettings s;
    s.max_tokens = 32;
    w_->settingsPanel()->setSettings(s);
    QSignalSpy done(w_->chat(), &ui::ChatView::replyFinished);
    QVERIFY(w_->chat()->send("Once upon a time"));
    QVERIFY(QTest::qWaitFor([&] { return done.count() == 1; }, 300000));
    // Two seeds can draw the same 32 tokens from a small model at 0.8
    // (it happened): regenerate until one differs, at most four times.
    const auto r1 = done.at(0).first().value<gui::RequestResult>();
    qInfo() << "seed" << r1.settings.seed << r1.output;
    std::set<decltype(r1.settings.seed)> seeds{r1.settings.seed};
    gui::RequestResult r2;
    for (int i = 0; i < 4 && (i == 0 || r2.output == r1.output); ++i) {
        w_->chat()->regenerate();
        QVERIFY(QTest::qWaitFor([&] { return done.count() == i + 2; }, 300000));
        r2 = done.at(i + 1).first().value<gui::RequestResult>();
        qInfo() << "seed" << r2.settings.seed << r2.output;
        QVERIFY2(!seeds.contains(r2.settings.seed), "a regenerated reply reused a seed");
        seeds.insert(r2.settings.seed);
    }
    QVERIFY(r1.output != r2.output);
    QCOMPARE(w_->chat()->turns().size(), 2);  // the reply was replaced
    QVERIFY2(w_->chat()->turns().last().footer.contains(QString("seed %1").arg(r2.settings.seed)),
             qPrintable(w_->chat()->turns().last().footer));
}

void UiApp::stopCancelsLongReply() {
    w_->chat()->newChat();
    gui::GenSettings s = w_->settingsPanel()->settings();
    s.temperature = 0;
    s.max_tokens = 100000;  // the context (n_ctx) ends it first
    w_->settingsPanel()->setSettings(s);
    QSignalSpy done(w_->chat(), &ui::ChatView::replyFinished);
    int seen = 0;
    // Press Esc in the input as soon as the third token is on screen.
    auto c = connect(w_->bridge(), &gui::EngineBridge::tokenArrived, this, [&](const QString& id) {
        if (id.startsWith("chat-") && ++seen == 3)
            QTest::keyClick(w_->chat()->input(), Qt::Key_Escape);
    });
    // Greedy on this prompt runs far past 100 tokens without an EOS (the
    // story repeats), so only the cancel can end it early.
    QVERIFY(w_->chat()->send("Lily and Ben were friends. Every day"));
    QVERIFY(QTest::qWaitFor([&] { return done.count() == 1; }, 300000));
    disconnect(c);
    const auto r = done.first().first().value<gui::RequestResult>();
    qInfo() << "stopped after" << r.generated_tokens << "tokens (Esc at the 3rd shown), context"
            << w_->bridge()->loadedRequest().n_ctx;
    QCOMPARE(r.finish_reason, QString("cancelled"));
    // The footer names the reason once, with the scheduler's detail.
    const QString footer = w_->chat()->turns().last().footer;
    QVERIFY2(footer.count("cancelled") == 1, qPrintable(footer));
    QVERIFY(r.generated_tokens >= 3);
    QVERIFY(r.generated_tokens < w_->bridge()->loadedRequest().n_ctx);
    QVERIFY(!w_->chat()->isStreaming());
}

void UiApp::batchOfTwentyAtConcurrencyFour() {
    ui::BatchPanel* b = w_->batch();
    gui::GenSettings s = w_->settingsPanel()->settings();
    s.temperature = 0.8;
    s.seed = 1;
    s.fixed_seed = true;
    s.max_tokens = 128;
    w_->settingsPanel()->setSettings(s);
    QVERIFY(b->loadSampleSet());
    QCOMPARE(b->promptSet().items.size(), 20);
    b->setConcurrency(4);
    b->setMaxQueue(8);  // fewer than the set: the panel must feed the queue as slots free

    // A GUI-thread timer at 10 ms: if the engine ever blocked this thread,
    // the gap between its ticks would show it.
    // It also samples how many of the batch's requests run at once.
    QElapsedTimer clock;
    qint64 last = -1, longest = 0;
    int ticks = 0;
    int max_running = 0;
    QTimer probe;
    probe.setInterval(10);
    connect(&probe, &QTimer::timeout, this, [&] {
        const qint64 now = clock.elapsed();
        if (last >= 0) longest = std::max(longest, now - last);
        last = now;
        ++ticks;
        max_running = std::max(max_running, b->progress().running);
    });
    const int points_before = w_->charts()->pointCount();
    recorder_->waitForIdle();  // the chat replies' rows are written by now
    const qint64 logged_before = recorder_->loggedCount();
    QSignalSpy finished(b, &ui::BatchPanel::runFinished);
    clock.start();
    probe.start();
    QVERIFY(b->run());
    QVERIFY(b->isRunning());
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 600000));
    probe.stop();
    const qint64 run_ms = clock.elapsed();

    const ui::BatchPanel::Progress p = b->progress();
    qInfo() << "batch: done" << p.done << "failed" << p.failed << "in" << run_ms << "ms;" << ticks
            << "timer ticks, longest gap between ticks" << longest
            << "ms; chart samples during the run" << w_->charts()->busyPointCount()
            << "; most running at once" << max_running;
    for (int i = 0; i < b->results()->rowCount(); ++i) {
        const gui::RequestResult& r = b->results()->result(i);
        if (r.finish_reason != "length" && r.finish_reason != "stop")
            qWarning() << r.id << r.finish_reason << r.error;
    }
    QCOMPARE(p.total, 20);
    QCOMPARE(p.done, 20);
    QCOMPARE(p.failed, 0);
    QCOMPARE(b->results()->rowCount(), 20);
    QCOMPARE(b->table()->model()->rowCount(), 20);
    QVERIFY(max_running <= 4);
    for (int i = 0; i < 20; ++i) {
        const gui::RequestResult& r = b->results()->result(i);
        QVERIFY(r.generated_tokens > 0);
        QVERIFY(r.ttft_ms >= 0);
        QVERIFY(r.e2e_ms >= r.ttft_ms);
    }
    // The charts took samples while requests were running.
    QVERIFY(w_->charts()->pointCount() > points_before);
    QVERIFY(w_->charts()->busyPointCount() > 0);
    QVERIFY(ticks > 0);
    // The charts compute their figures from the requests' own samples,
    // which the bridge hands them: once they have a sample after the run,
    // "This run"'s prefix-cache rate is the batch's own (the panel's cached /
    // prompt tokens of its 20 results) and its TTFT median is a number.
    QVERIFY(p.prompt_tokens > 0);
    w_->charts()->setWindowSeconds(ui::LiveCharts::kThisRun);
    const int points_after = w_->charts()->pointCount();
    QVERIFY(QTest::qWaitFor([&] { return w_->charts()->pointCount() > points_after + 1; }, 10000));
    const double rate =
        (w_->charts()->plot(ui::LiveCharts::PrefixCache)->graph(0)->data()->constEnd() - 1)->value;
    const double want = static_cast<double>(p.cached_tokens) / static_cast<double>(p.prompt_tokens);
    QVERIFY2(std::abs(rate - want) < 1e-9, qPrintable(QString("chart %1, batch %2 / %3")
                                                          .arg(rate)
                                                          .arg(p.cached_tokens)
                                                          .arg(p.prompt_tokens)));
    QVERIFY(std::isfinite(
        (w_->charts()->plot(ui::LiveCharts::Latency)->graph(0)->data()->constEnd() - 1)->value));

    // The run log: 20 responses of this batch run (read back through the
    // run log's own export, filtered by the run).
    recorder_->waitForIdle();
    QCOMPARE(recorder_->loggedCount() - logged_before, qint64(20));
    runlog::RunLog log = runlog::RunLog::open(dir_.filePath("runlog.sqlite").toStdString());
    runlog::ExportFilter all;
    std::ostringstream sink;
    const int64_t total = runlog::export_responses(log, all, runlog::ExportFormat::Jsonl, sink);
    // The chat replies of the tests before this one and 20 batch responses.
    QCOMPARE(total, int64_t(logged_before + 20));
    int batch_rows = 0;
    std::istringstream lines(sink.str());
    for (std::string line; std::getline(lines, line);) {
        const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
        if (o["run_kind"].toString() == "batch") ++batch_rows;
    }
    QCOMPARE(batch_rows, 20);
}

void UiApp::batchSameTokensAndSettingsAsCli() {
    // The one request path: the same prompt file, settings and seed run
    // through the Batch tab and through `workbench-cli batch` give the same
    // token ids per prompt, the same settings JSON in the run log, and, run
    // on one machine and device, the same environment row.
    ui::BatchPanel* b = w_->batch();
    const gui::LoadRequest& loaded = w_->bridge()->loadedRequest();
    const int n_slots = w_->bridge()->schedulerSlots();
    gui::GenSettings s = w_->settingsPanel()->settings();
    s.temperature = 0.8;  // sampled, so the seeds matter
    s.top_k = 40;
    s.top_p = 0.95;
    s.min_p = 0.05;
    s.repeat_penalty = 1.1;
    s.repeat_last_n = 64;
    s.seed = 7;
    s.fixed_seed = true;
    s.max_tokens = 12;
    w_->settingsPanel()->setSettings(s);
    // Six prompts, one with its own stop string and max_tokens.
    const QString prompts = dir_.filePath("same.jsonl");
    {
        QFile f(prompts);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "{\"id\": \"a\", \"prompt\": \"Once upon a time\"}\n"
            "{\"id\": \"b\", \"prompt\": \"The little dog\", \"max_tokens\": 5}\n"
            "{\"id\": \"c\", \"prompt\": \"Lily wanted to\", \"stop\": [\".\"]}\n"
            "{\"prompt\": \"One day, a bird\"}\n"
            "{\"id\": 5, \"prompt\": \"Tom and Sue\"}\n"
            "{\"id\": \"f\", \"prompt\": \"The sun was\"}\n");
    }
    QVERIFY(b->loadPromptFile(prompts));
    b->setConcurrency(n_slots);
    b->setMaxQueue(64);
    b->setTimeoutMs(0);
    QSignalSpy finished(b, &ui::BatchPanel::runFinished);
    QVERIFY(b->run());
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 600000));
    recorder_->waitForIdle();
    QMap<QString, QList<int>> gui_ids;
    for (int i = 0; i < b->results()->rowCount(); ++i)
        gui_ids[b->results()->result(i).id] = b->results()->result(i).token_ids;
    QCOMPARE(gui_ids.size(), 6);

    // The CLI on the same file, logging into the same run log.
    const QString db = dir_.filePath("runlog.sqlite");
    const QString out = dir_.filePath("same-cli.jsonl");
    QStringList args = {"batch",
                        "-m",
                        kModel,
                        "--prompts",
                        prompts,
                        "--concurrency",
                        QString::number(n_slots),
                        "-c",
                        QString::number(loaded.n_ctx),
                        "-n",
                        "12",
                        "--temp",
                        "0.8",
                        "--top-k",
                        "40",
                        "--top-p",
                        "0.95",
                        "--min-p",
                        "0.05",
                        "--repeat-penalty",
                        "1.1",
                        "--repeat-last-n",
                        "64",
                        "--seed",
                        "7",
                        "--backend",
                        backend_,
                        "--db",
                        db,
                        "-q",
                        "-o",
                        out};
    if (backend_ == "vulkan" && !loaded.device.isEmpty() && loaded.device != "cpu")
        args << "--device" << loaded.device;
    const wbtest::ProcessResult cli = wbtest::run_process(WB_CLI, args, 600000);
    QVERIFY2(cli.code == 0, cli.err.constData());
    QFile of(out);
    QVERIFY(of.open(QIODevice::ReadOnly));
    int records = 0;
    for (const QByteArray& line : of.readAll().trimmed().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        QList<int> ids;
        for (const QJsonValue v : o["token_ids"].toArray()) ids << v.toInt();
        const QString id = o["id"].toString();
        QVERIFY2(gui_ids.contains(id), qPrintable(id));
        QVERIFY2(!ids.isEmpty(), qPrintable(id));
        QCOMPARE(ids, gui_ids[id]);
        ++records;
    }
    QCOMPARE(records, 6);

    // The run log: the last two batch runs are the tab's and the CLI's.
    const wbtest::RawSqlite raw(db);
    const auto runs = raw.rows("SELECT id FROM runs WHERE kind = 'batch' ORDER BY id DESC LIMIT 2");
    QCOMPARE(runs.size(), size_t(2));
    const std::string cli_run = runs[0][0], gui_run = runs[1][0];
    auto rows_of = [&](const std::string& run) {
        std::map<std::string, std::vector<std::string>> m;
        for (const auto& r : raw.rows("SELECT request_id, settings, environment_id, "
                                      "model_version_id, finish_reason FROM responses "
                                      "WHERE run_id = " +
                                      run))
            m[r[0]] = r;
        return m;
    };
    const auto gui_rows = rows_of(gui_run), cli_rows = rows_of(cli_run);
    QCOMPARE(gui_rows.size(), size_t(6));
    QCOMPARE(cli_rows.size(), size_t(6));
    for (const auto& [id, g] : gui_rows) {
        const auto c = cli_rows.find(id);
        QVERIFY2(c != cli_rows.end(), id.c_str());
        // The settings JSON: equal as JSON (numbers as numbers, same keys).
        const QJsonObject gs = QJsonDocument::fromJson(QByteArray::fromStdString(g[1])).object();
        const QJsonObject cs =
            QJsonDocument::fromJson(QByteArray::fromStdString(c->second[1])).object();
        QVERIFY2(!gs.isEmpty() && gs == cs, (g[1] + "\n" + c->second[1]).c_str());
        QVERIFY2(gs["seed"].isDouble(), g[1].c_str());
        QCOMPARE(g[2], c->second[2]);  // one environment row for both surfaces
        QCOMPARE(g[3], c->second[3]);  // one model version
        QCOMPARE(g[4], c->second[4]);  // the same finish reason
    }
    // Seeds are the base + the prompt's index, as the CLI documents.
    QCOMPARE(QJsonDocument::fromJson(QByteArray::fromStdString(gui_rows.at("f")[1]))
                 .object()["seed"]
                 .toInteger(),
             qint64(7 + 5));
    // One machine, one device: every row of the log, chat included, shares
    // one environment.
    QCOMPARE(raw.rows("SELECT COUNT(DISTINCT environment_id) FROM responses")[0][0],
             std::string("1"));
}

void UiApp::timingFieldsMeanTheSameOnEverySurface() {
    // A response's TTFT, queue wait and prefill mean the same
    // from chat, batch, compare and generate, checked on the stored rows of
    // one run log. By now it holds the Chat tab's replies and the Batch
    // tab's and `workbench-cli batch`'s runs (the tests above); add a
    // comparison from the Compare tab and a `workbench-cli generate`.
    const QString db = dir_.filePath("runlog.sqlite");
    auto* compare = w_->findChild<ui::compare::CompareTab*>();
    QVERIFY(compare);
    const gui::LoadRequest& loaded = w_->bridge()->loadedRequest();
    const QString device = backend_ == "vulkan" && loaded.device != "cpu" ? loaded.device : "";
    compare->setBackend(backend_, device);
    compare->addModel(kModel);
    compare->addModel(kModel);
    compare->setMaxTokens(6);
    compare->setPrompt("Once upon a time");
    compare->setPrice(0, 1.0, 2.0);  // per M input / output tokens
    QSignalSpy compared(compare, &ui::compare::CompareTab::runLogged);
    compare->runPrompt();
    QVERIFY(compared.wait(300000));
    QCOMPARE(compared.at(0).at(1).toInt(), 2);  // one response per model

    QStringList args = {"generate", "-m", kModel,      "-p",     "The little dog", "-n", "8",
                        "--temp",   "0",  "--backend", backend_, "--db",           db};
    if (!device.isEmpty()) args << "--device" << device;
    const wbtest::ProcessResult cli = wbtest::run_process(WB_CLI, args, 300000);
    QVERIFY2(cli.code == 0, cli.err.constData());
    recorder_->waitForIdle();

    const wbtest::RawSqlite raw(db);
    // Each pane's cost of one pass of the prompt, by hand from its logged
    // response's token counts (greedy: every timed pass has the same):
    // (prompt tokens x 1 + output tokens x 2) / 1e6 a request.
    const auto priced = raw.rows(
        "SELECT r.prompt_tokens, r.output_tokens FROM responses r JOIN runs u ON u.id = r.run_id "
        "WHERE u.id = " +
        std::to_string(compared.at(0).at(0).toLongLong()) + " ORDER BY r.id");
    QCOMPARE(priced.size(), size_t(2));
    for (size_t i = 0; i < 2; ++i) {
        const double want = (std::stod(priced[i][0]) + 2 * std::stod(priced[i][1])) / 1e6;
        const QString cost = compare->panes()[i]->costText();
        QVERIFY2(cost.startsWith(QString("cost %1 USD a request").arg(want, 0, 'g', 4)),
                 qPrintable(cost + " want " + QString::number(want, 'g', 4)));
    }
    // Every finished response that produced a token (a row still streaming
    // says "interrupted" and has no end yet), with its surface: the run kind,
    // and for batch the run (the tab's and the CLI's are two runs).
    const auto rows = raw.rows(
        "SELECT u.kind, r.run_id, r.request_id, quote(r.queue_wait_ms), quote(r.prefill_ms), "
        "quote(r.ttft_ms), quote(r.e2e_ms), r.started_ms, quote(r.finished_ms), r.finish_reason "
        "FROM responses r JOIN runs u ON u.id = r.run_id WHERE r.output_tokens > 0 AND "
        "r.finish_reason <> 'interrupted' "
        "ORDER BY r.id");
    std::map<std::string, int> per_kind;
    std::set<std::string> batch_runs;
    for (const auto& r : rows) {
        const std::string what = r[0] + " run " + r[1] + " " + r[2];
        // All three stored, as numbers.
        for (int c : {3, 4, 5, 6}) QVERIFY2(r[c] != "NULL", (what + ": a NULL timing").c_str());
        const double queue = std::stod(r[3]), prefill = std::stod(r[4]), ttft = std::stod(r[5]),
                     e2e = std::stod(r[6]);
        // TTFT counts from submit: queue wait + prefill, to the rounding of
        // the stored doubles (not prefill alone, not from admission).
        QVERIFY2(std::abs(ttft - (queue + prefill)) <= 1e-9 * std::max(1.0, ttft),
                 (what + ": ttft " + r[5] + " != queue " + r[3] + " + prefill " + r[4]).c_str());
        QVERIFY2(queue >= 0.0, (what + ": queue wait " + r[3]).c_str());
        QVERIFY2(prefill > 0.0, (what + ": prefill " + r[4]).c_str());
        QVERIFY2(ttft <= e2e, (what + ": ttft " + r[5] + " > e2e " + r[6]).c_str());
        // Submit and finish times (UTC ms, rounded) agree with e2e.
        QVERIFY2(r[8] != "NULL", (what + ": no finish time").c_str());
        const double span = std::stod(r[8]) - std::stod(r[7]);
        QVERIFY2(
            span >= 0.0 && std::abs(span - e2e) <= 2.0,
            (what + ": finished - started " + std::to_string(span) + " vs e2e " + r[6]).c_str());
        ++per_kind[r[0]];
        if (r[0] == "batch") batch_runs.insert(r[1]);
    }
    for (const char* kind : {"chat", "batch", "compare", "generate"})
        QVERIFY2(per_kind[kind] > 0, kind);
    QVERIFY(batch_runs.size() >= 2);  // the Batch tab's and the CLI's
    // Some responses waited in the queue (the batch at full concurrency),
    // so a TTFT measured from admission would have shown above.
    QVERIFY(std::stoi(
                raw.rows("SELECT count(*) FROM responses WHERE queue_wait_ms > 0.001")[0][0]) > 0);
    // One machine, one device: one environment row across all surfaces.
    QCOMPARE(raw.rows("SELECT COUNT(DISTINCT environment_id) FROM responses")[0][0],
             std::string("1"));
    QCOMPARE(raw.rows("SELECT COUNT(*) FROM environments")[0][0], std::string("1"));

    // The cold starts: the app's load and the CLI's, each with the model and
    // the environment of the responses, completed by its first token.
    const auto loads = raw.rows(
        "SELECT surface, quote(run_id), ready_ms, quote(first_token_ms), quote(first_ttft_ms), "
        "environment_id, pipeline_cache FROM model_loads ORDER BY id");
    std::set<std::string> surfaces;
    for (const auto& l : loads) {
        surfaces.insert(l[0]);
        QVERIFY2(l[3] != "NULL" && l[4] != "NULL", (l[0] + ": no first token").c_str());
        QVERIFY2(std::stod(l[3]) >= std::stod(l[2]), (l[0] + ": first token before ready").c_str());
        QCOMPARE(l[5], raw.rows("SELECT environment_id FROM responses LIMIT 1")[0][0]);
        QVERIFY2(backend_ == "vulkan" ? l[6] != "none" : l[6] == "none", l[6].c_str());
    }
    QVERIFY(surfaces.count("app") == 1);
    QVERIFY(surfaces.count("batch") == 1);
    QVERIFY(surfaces.count("generate") == 1);
    QCOMPARE(loads.front()[1], std::string("NULL"));  // the app's load serves many runs
}

void UiApp::batchSummaryMatchesCli() {
    // After a run the panel shows the CLI's summary (metrics table and
    // finish reasons) and exports it. Greedy, so `workbench-cli batch` on
    // the same prompts, concurrency and limit gives the same requests,
    // finish reasons and tokens; its --summary-json is the reference.
    ui::BatchPanel* b = w_->batch();
    gui::GenSettings s = w_->settingsPanel()->settings();
    s.temperature = 0;
    s.max_tokens = 24;
    w_->settingsPanel()->setSettings(s);
    QVERIFY(b->loadSampleSet());
    b->setConcurrency(4);
    b->setMaxQueue(64);
    b->setPrice(0, 1, 2);  // 1 USD per M input tokens, 2 per M output
    QSignalSpy finished(b, &ui::BatchPanel::runFinished);
    QVERIFY(b->run());
    QVERIFY(QTest::qWaitFor([&] { return finished.count() == 1; }, 600000));
    const gui::BatchSummary& sum = b->summary();
    qInfo().noquote() << b->summaryText();
    QVERIFY(!b->findChild<QWidget*>("batchSummary")->isHidden());  // shown (its tab may not be)
    QVERIFY(b->summaryText().contains("TTFT (ms)") && b->summaryText().contains("ITL (ms)") &&
            b->summaryText().contains("TPOT (ms)") && b->summaryText().contains("e2e (ms)") &&
            b->summaryText().contains("over the run: input") &&
            b->summaryText().contains("requests/s"));
    // The summary counts what the table holds.
    int tokens = 0;
    QMap<QString, int> reasons;
    for (int i = 0; i < b->results()->rowCount(); ++i) {
        tokens += b->results()->result(i).generated_tokens;
        ++reasons[b->results()->result(i).finish_reason];
    }
    QCOMPARE(sum.stats.requests_finished, quint64(20));
    QCOMPARE(sum.stats.ttft_ms.count, size_t(20));
    QCOMPARE(qRound(sum.stats.generated_tokens.mean * sum.stats.generated_tokens.count), tokens);

    // The CLI on the same prompts (written out from the panel's set).
    const QString prompts = dir_.filePath("prompts.jsonl");
    {
        QFile f(prompts);
        QVERIFY(f.open(QIODevice::WriteOnly));
        for (const gui::PromptItem& it : b->promptSet().items) {
            QJsonObject o{{"id", it.id}, {"prompt", it.prompt}};
            if (it.max_tokens > 0) o["max_tokens"] = it.max_tokens;
            f.write(QJsonDocument(o).toJson(QJsonDocument::Compact) + "\n");
        }
    }
    const QString cli_json = dir_.filePath("cli-summary.json");
    const wbtest::ProcessResult cli = wbtest::run_process(WB_CLI,
                                                          {"batch",
                                                           "-m",
                                                           kModel,
                                                           "--prompts",
                                                           prompts,
                                                           "--concurrency",
                                                           "4",
                                                           "-n",
                                                           "24",
                                                           "--temp",
                                                           "0",
                                                           "--backend",
                                                           backend_,
                                                           "--summary-json",
                                                           cli_json,
                                                           "--no-log",
                                                           "-q",
                                                           "-o",
                                                           dir_.filePath("cli-out.jsonl"),
                                                           "--price-per-m-input",
                                                           "1",
                                                           "--price-per-m-output",
                                                           "2"},
                                                          600000);
    QVERIFY2(cli.code == 0, cli.err.constData());
    QFile cf(cli_json);
    QVERIFY(cf.open(QIODevice::ReadOnly));
    const QJsonObject want = QJsonDocument::fromJson(cf.readAll()).object();
    const QJsonObject got = sum.json();
    for (const char* k : {"requests_finished", "requests_completed", "finish_reasons"})
        QVERIFY2(got[k] == want[k], k);
    for (const char* k : {"ttft_ms", "tpot_ms", "e2e_ms", "output_tokens", "prompt_tokens"})
        QVERIFY2(got[k].toObject()["count"] == want[k].toObject()["count"], k);
    QCOMPARE(got["output_tokens"].toObject()["mean"].toDouble(),
             want["output_tokens"].toObject()["mean"].toDouble());
    QCOMPARE(got["prompt_tokens"].toObject()["mean"].toDouble(),
             want["prompt_tokens"].toObject()["mean"].toDouble());
    for (auto it = reasons.constBegin(); it != reasons.constEnd(); ++it)
        QCOMPARE(got["finish_reasons"].toObject()[it.key()].toInt(), it.value());
    // The same requests and tokens: the same cost at a per-token price as
    // the CLI's (whose figure batch_cli checks against its records' tokens).
    QCOMPARE(got["cost"].toObject()["total"].toDouble(),
             want["cost"].toObject()["total"].toDouble());
    QCOMPARE(got["price"], want["price"]);
    QVERIFY(b->summaryText().contains("\ncost: "));

    // Export: JSON and CSV read back.
    const QString jpath = dir_.filePath("summary.json"), cpath = dir_.filePath("summary.csv");
    QVERIFY(b->exportSummary(jpath));
    QVERIFY(b->exportSummary(cpath));
    QFile jf(jpath);
    QVERIFY(jf.open(QIODevice::ReadOnly));
    const QJsonObject exported = QJsonDocument::fromJson(jf.readAll()).object();
    QCOMPARE(exported["requests_finished"].toInt(), 20);
    // Rates over the run under vLLM's names, as the CLI writes them (docs/metrics.md).
    for (const char* k : {"input_throughput", "output_throughput", "request_throughput"})
        QVERIFY2(exported[k].isDouble() && want[k].isDouble(), k);
    QVERIFY(!exported.contains("prefill_tokens_per_s"));
    QFile csvf(cpath);
    QVERIFY(csvf.open(QIODevice::ReadOnly));
    const QString csv = QString::fromUtf8(csvf.readAll());
    QVERIFY2(csv.startsWith("metric,count,mean,p50,p90,p95,p99,max\n"), qPrintable(csv));
    QVERIFY(csv.contains("\nTTFT (ms),20,"));
    QVERIFY(csv.contains("\nrequests_finished,20\n"));
    QVERIFY(csv.contains("\ninput_throughput,") && csv.contains("\nrequest_throughput,"));
    QVERIFY(csv.contains("\ncost_total,") && csv.contains("\ncost_per_m_output_tokens,"));
    b->copySummary();
    QCOMPARE(QApplication::clipboard()->text(), b->summaryText());
    b->setPrice(0, 0, 0);
}

// Last: it replaces the model the other tests use. A BOS id one past the
// vocabulary used to be read as the kind default (token 11 before every
// prompt) without a word; now the load's warning, naming the key, is in
// the "Loaded ..." status message and the vocabulary adds no BOS.
void UiApp::loadWarningsAreInTheStatusBar() {
    const QString bad =
        QString::fromStdString(wbtest::data_dir()) + "/repro/bos-out-of-range-llama3.gguf";
    QSignalSpy ready(w_.get(), &ui::MainWindow::modelReady);
    QSignalSpy failed(w_.get(), &ui::MainWindow::loadFailed);
    w_->openModel(bad);
    QVERIFY(QTest::qWaitFor([&] { return ready.count() + failed.count() > 0; }, 300000));
    QCOMPARE(failed.count(), 0);
    const QString msg = w_->statusBar()->currentMessage();
    QVERIFY2(msg.startsWith("Loaded bos-out-of-range-llama3.gguf") &&
                 msg.contains(" Warning: " + bad +
                              ": tokenizer.ggml.bos_token_id = 2304 is not a token id of this "
                              "vocabulary"),
             qPrintable(msg));
    QVERIFY(!w_->bridge()->vocab()->add_bos());
}

QTEST_MAIN(UiApp)
#include "test_ui_app.moc"
