// The Load tab in the real main window, offscreen: the Server
// tab serves stories260K (CPU) on an ephemeral 127.0.0.1 port, the Load tab
// (its URL left empty: the Server tab's) runs a short rate sweep with real
// HTTP requests through app/load, and the test checks the step table, the
// charts' points, goodput <= throughput per step, the run log's load_test
// run (one row per request) and the JSON / CSV exports; it saves
// screenshots of the curves (<build>/ui_load_curves.png, ui_load.png).
// A port nobody listens on gives the actionable error and leaves the tab
// usable; Stop ends a long test; the settings keep the key variable's name,
// never the key.

#include <qcustomplot.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <memory>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "ui/load_charts.h"
#include "ui/load_tab.h"
#include "ui/main_window.h"
#include "ui/server_tab.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

using wbtest::query_rows;

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then closed).
quint16 free_port() {
    QTcpServer s;
    if (!s.listen(QHostAddress::LocalHost, 0)) return 0;
    const quint16 p = s.serverPort();
    s.close();
    return p;
}

}  // namespace

class UiLoad : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<gui::SettingsStore> store_;
    std::unique_ptr<gui::RunRecorder> recorder_;
    std::unique_ptr<ui::MainWindow> window_;
    QString db_;
    QString serverUrl_;

    ui::LoadTab* tab() { return window_->findChild<ui::LoadTab*>(); }

    // Runs the tab's test and waits for it to end.
    bool run(ui::LoadTab* t) {
        QSignalSpy done(t, &ui::LoadTab::runFinished);
        if (!t->start()) return false;
        return done.wait(600000);
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        store_ = std::make_unique<gui::SettingsStore>(dir_.filePath("s.ini"));
        store_->setBackend("cpu");
        db_ = dir_.filePath("runlog.sqlite");
        recorder_ = std::make_unique<gui::RunRecorder>();
        QString notice;
        QVERIFY(recorder_->open(db_, &notice));
        window_ = std::make_unique<ui::MainWindow>(store_.get(), recorder_.get());
        window_->resize(1280, 900);
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        QVERIFY(tab());
        // Our server, from the Server tab, on a free port.
        auto* server = window_->findChild<ui::ServerTab*>();
        QVERIFY(server);
        server->setModelPath(kModel);
        server->setPort(0);
        server->setParallel(4);
        QSignalSpy up(server, &ui::ServerTab::listeningAt);
        QVERIFY2(server->start(), qPrintable(server->statusText()));
        QVERIFY2(up.wait(120000), qPrintable(server->statusText()));
        serverUrl_ = server->baseUrl();
        QVERIFY(serverUrl_.startsWith("http://127.0.0.1:"));
    }

    void cleanupTestCase() {
        window_.reset();
        recorder_.reset();
    }

    // A short sweep against our server: table, charts, run log, exports.
    void sweepShowsCurvesAndLogsEveryRequest() {
        ui::LoadTab* t = tab();
        window_->tabs()->setCurrentWidget(t);
        t->setTargetUrl({});  // empty: the Server tab's URL
        QCOMPARE(t->effectiveUrl(), serverUrl_ + "/v1");
        const int steps = 3;
        const int requests = 20;
        t->setSweepSteps(steps);
        t->setSweepConcurrency(8);
        t->setRequests(requests);
        t->setMaxTokens(8);
        t->setSynthetic(16, 4, 0.25);
        // Generous SLOs (every step meets them on any machine): a best step.
        t->setSlo(20000, 10000, 60000);
        t->setLogEnabled(true);
        t->setPrice(0, 1, 2);  // 1 USD per M input tokens, 2 per M output
        QVERIFY2(run(t), qPrintable(t->statusText()));
        QVERIFY2(t->statusText().startsWith("Done"), qPrintable(t->statusText()));
        QVERIFY(!t->isRunning());

        // A synchronous and a throughput step, then the rate steps.
        const load::Report rep = t->report();
        const int n = steps + 2;
        QCOMPARE(int(rep.steps.size()), n);
        QTableWidget* table = t->table();
        QCOMPARE(table->rowCount(), n);
        QVERIFY(table->item(0, ui::LoadTab::ColStep)->text().startsWith("synchronous"));
        QVERIFY(table->item(1, ui::LoadTab::ColStep)->text().startsWith("throughput"));
        for (int i = 0; i < n; ++i) {
            const load::StepStats& s = rep.steps[size_t(i)].stats;
            QCOMPARE(s.requests, size_t(requests));
            QCOMPARE(s.errors, size_t(0));
            QCOMPARE(s.completed, size_t(requests));
            QVERIFY2(s.goodput <= s.request_throughput,
                     qPrintable(QString("step %1: goodput %2 > %3")
                                    .arg(i)
                                    .arg(s.goodput)
                                    .arg(s.request_throughput)));
            QCOMPARE(table->item(i, ui::LoadTab::ColDone)->text(), QString::number(requests));
            QCOMPARE(table->item(i, ui::LoadTab::ColGoodput)->text(),
                     QString::number(s.goodput, 'f', 2));
            auto* bar = qobject_cast<QProgressBar*>(table->cellWidget(i, ui::LoadTab::ColProgress));
            QVERIFY(bar);
            QCOMPARE(bar->value(), bar->maximum());
            QCOMPARE(bar->maximum(), requests);
            if (i >= 2) QVERIFY(s.offered_rate && *s.offered_rate > 0);
            // Our server reports each request's queue wait: shown per step.
            QCOMPARE(s.queue_wait.count, size_t(requests));
            QCOMPARE(table->item(i, ui::LoadTab::ColQueueP99)->text(),
                     QString::number(s.queue_wait.p99, 'f', 1));
        }
        // The rate steps lie between the synchronous and throughput rates.
        const double sync = rep.steps[0].stats.request_throughput;
        const double max = rep.steps[1].stats.request_throughput;
        for (int k = 1; k <= steps; ++k) {
            QCOMPARE(*rep.steps[size_t(k + 1)].stats.offered_rate,
                     sync + k * (max - sync) / (steps + 1));
        }

        // Charts: one point per step on every curve, two per SLO line.
        ui::LoadCharts* charts = t->charts();
        for (const char* g : {"TTFT p50", "TTFT p99", "ITL p99", "e2e p99", "requests/s", "goodput",
                              "output tokens/s"}) {
            QVERIFY2(charts->points(g) == n, g);
        }
        for (const char* g : {"SLO TTFT p99", "SLO ITL p99", "SLO e2e p99"}) {
            QVERIFY2(charts->points(g) == 2, g);
        }
        // The queue wait p99 curve: a point per step whose p99 is above 0 ms.
        const int queued =
            int(std::count_if(rep.steps.begin(), rep.steps.end(),
                              [](const auto& st) { return st.stats.queue_wait.p99 > 0; }));
        QCOMPARE(charts->points("queue wait p99"), queued);
        // The best step: named in the label, on the chart and in the table.
        QVERIFY(rep.best >= 0);
        QVERIFY2(t->bestText().contains(QString::fromStdString(rep.steps[size_t(rep.best)].label)),
                 qPrintable(t->bestText()));
        QVERIFY(charts->bestMark().startsWith("best within SLOs"));
        QVERIFY(table->item(rep.best, ui::LoadTab::ColStep)->text().contains("best within SLOs"));

        // The run log: one load_test run with one row per request.
        QVERIFY(rep.run_id);
        const QString run = QString::number(*rep.run_id);
        QCOMPARE(query_rows(db_, "SELECT kind, ended_ms IS NOT NULL FROM runs WHERE id = " + run),
                 (QList<QStringList>{{"load_test", "1"}}));
        QCOMPARE(query_rows(db_, "SELECT COUNT(*) FROM responses WHERE run_id = " + run),
                 (QList<QStringList>{{QString::number(n * requests)}}));
        QCOMPARE(query_rows(db_, "SELECT COUNT(*) FROM responses WHERE run_id = " + run +
                                     " AND json_extract(settings, '$.step') = 'throughput'"),
                 (QList<QStringList>{{QString::number(requests)}}));

        // Exports: the CLI's JSON and CSV.
        const QString json_path = dir_.filePath("load.json");
        const QString csv_path = dir_.filePath("load.csv");
        QVERIFY2(t->exportJson(json_path), qPrintable(t->statusText()));
        QVERIFY2(t->exportCsv(csv_path), qPrintable(t->statusText()));
        QFile jf(json_path);
        QVERIFY(jf.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(jf.readAll()).object();
        QCOMPARE(doc["steps"].toArray().size(), n);
        QCOMPARE(doc["best_step"].toInt(), rep.best);
        QCOMPARE(doc["run_id"].toInteger(), *rep.run_id);
        QCOMPARE(doc["target"].toString(), serverUrl_ + "/v1");
        QCOMPARE(doc["steps"][2]["completed"].toInt(), requests);
        // Cost per step: (input tokens + 2 x output tokens) / 1e6, the tokens
        // from the step's own throughput x duration; one line per step.
        QCOMPARE(doc["price"]["basis"].toString(), QString("per_m_tokens"));
        for (int i = 0; i < n; ++i) {
            const QJsonObject st = doc["steps"][i].toObject();
            const double d = st["duration_s"].toDouble();
            const double want = (st["input_throughput"].toDouble() * d +
                                 2 * st["output_throughput"].toDouble() * d) /
                                1e6;
            const double got = st["cost"]["total"].toDouble();
            QVERIFY2(want > 0 && std::abs(got - want) <= 1e-9 * want,
                     qPrintable(QString("step %1: cost %2, want %3").arg(i).arg(got).arg(want)));
        }
        QCOMPARE(t->costText().count("Cost of "), n);
        const QString formulas = t->findChild<QLabel*>("loadCost")->toolTip();
        QVERIFY2(formulas.count("USD/M x") == 2 * n, qPrintable(formulas));
        QFile cf(csv_path);
        QVERIFY(cf.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = cf.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), n + 1);
        QVERIFY(lines[0].startsWith("step,offered_rate,concurrency,requests,completed"));
        QVERIFY(lines[1].startsWith("synchronous,,1,20,20,0,0,"));
        QVERIFY(lines[0].endsWith("cost_per_m_output_tokens"));

        // Scheduler telemetry of the Server tab's engine: charted, per step
        // in the JSON (its decode tokens are the step's output tokens by
        // usage: the server served nothing else), and exported as CSV.
        const std::vector<load::TelemetryRow> passes = t->runnerTelemetry();
        QVERIFY(!passes.empty());
        QVERIFY(charts->schedulerPlot()->isVisible());
        QCOMPARE(charts->points("batch size"), int(passes.size()));
        QCOMPARE(charts->points("KV blocks used"), int(passes.size()));
        QVERIFY(doc["telemetry"]["available"].toBool());
        // Over the whole sweep: a pass that ends within a clock offset's
        // error of a step boundary may be counted in the next step, so the
        // per-step sums are compared in total.
        qint64 decode = 0, out_tokens = 0;
        for (int i = 0; i < n; ++i) {
            const QJsonObject st = doc["steps"][i].toObject();
            const QJsonObject sc = st["scheduler"].toObject();
            out_tokens +=
                std::llround(st["output_throughput"].toDouble() * st["duration_s"].toDouble());
            QVERIFY(sc["batch_max"].toInt() >= 1);
            decode += sc["decode_tokens"].toInteger();
        }
        QCOMPARE(decode, out_tokens);
        const QString tel_path = dir_.filePath("telemetry.csv");
        QVERIFY2(t->exportTelemetryCsv(tel_path), qPrintable(t->statusText()));
        QFile tf(tel_path);
        QVERIFY(tf.open(QIODevice::ReadOnly));
        const QList<QByteArray> tl = tf.readAll().trimmed().split('\n');
        QCOMPARE(tl.size(), int(passes.size()) + 1);
        QVERIFY(tl[0].startsWith("step,t_s,index,duration_ms,batch,"));
        qint64 csv_decode = 0;
        for (int i = 1; i < tl.size(); ++i) {
            const QList<QByteArray> f = tl[i].split(',');
            if (!f[0].isEmpty()) csv_decode += f[6].toLongLong();  // passes within a step
        }
        QCOMPARE(csv_decode, decode);

        QVERIFY(charts->grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_load_curves.png"));
        QVERIFY(window_->grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_load.png"));
    }

    // Compare under load: the Server tab's server against itself, a sweep of
    // one rate step. B's steps follow A's in the table, at A's rates; both
    // are on the charts (B dashed) and in the JSON and CSV exports; each
    // target is its own load_test run.
    void compareUnderLoadDrawsBothTargets() {
        ui::LoadTab* t = tab();
        t->setTargetUrl({});
        t->setCompareTarget(serverUrl_ + "/v1");
        t->setSweepSteps(1);
        t->setSweepConcurrency(4);
        t->setRequests(8);
        t->setMaxTokens(4);
        t->setLogEnabled(true);
        t->setPrice(0, 0, 0);
        QVERIFY2(run(t), qPrintable(t->statusText()));
        t->setCompareTarget({});  // the other tests run one target
        QVERIFY2(t->statusText().startsWith("Done"), qPrintable(t->statusText()));
        const load::Report a = t->report();
        const std::optional<load::Report> b = t->compareReport();
        QVERIFY(b);
        QCOMPARE(a.steps.size(), size_t(3));
        QCOMPARE(b->steps.size(), size_t(3));
        QCOMPARE(*b->steps[2].stats.offered_rate, *a.steps[2].stats.offered_rate);
        for (const auto& st : b->steps) QCOMPARE(st.stats.completed, size_t(8));
        QTableWidget* table = t->table();
        QCOMPARE(table->rowCount(), 6);
        QVERIFY(table->item(3, ui::LoadTab::ColStep)->text().startsWith("B: synchronous"));
        QCOMPARE(table->item(5, ui::LoadTab::ColDone)->text(), QString("8"));
        for (const char* g : {"B TTFT p99", "B e2e p99", "B requests/s", "B goodput"})
            QVERIFY2(t->charts()->points(g) == 3, g);
        QVERIFY(a.run_id && b->run_id && *a.run_id != *b->run_id);
        QCOMPARE(query_rows(db_, "SELECT COUNT(*) FROM responses WHERE run_id = " +
                                     QString::number(*b->run_id)),
                 (QList<QStringList>{{"24"}}));

        const QString json_path = dir_.filePath("compare.json");
        const QString csv_path = dir_.filePath("compare.csv");
        QVERIFY2(t->exportJson(json_path), qPrintable(t->statusText()));
        QVERIFY2(t->exportCsv(csv_path), qPrintable(t->statusText()));
        QFile jf(json_path);
        QVERIFY(jf.open(QIODevice::ReadOnly));
        const QJsonObject doc = QJsonDocument::fromJson(jf.readAll()).object();
        QCOMPARE(doc["compare"]["steps"].toArray().size(), 3);
        QCOMPARE(doc["compare"]["run_id"].toInteger(), *b->run_id);
        QFile cf(csv_path);
        QVERIFY(cf.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = cf.readAll().trimmed().split('\n');
        QCOMPARE(lines.size(), 7);
        QVERIFY(lines[1].startsWith("A: synchronous,"));
        QVERIFY(lines[4].startsWith("B: synchronous,"));
        QVERIFY(t->charts()->grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_load_compare.png"));
    }

    // Nothing listening: the actionable error; the tab stays usable.
    void refusedConnectionIsActionable() {
        ui::LoadTab* t = tab();
        const quint16 port = free_port();
        QVERIFY(port != 0);
        const QString url = QString("http://127.0.0.1:%1/v1").arg(port);
        t->setTargetUrl(url);
        t->setSweepSteps(0);
        t->setArrival("poisson");
        t->setRate(2);
        t->setRequests(1000);  // stops after the first refusals, not after 1000
        t->setLogEnabled(false);
        QVERIFY(run(t));
        QVERIFY2(t->statusText().startsWith(QString("Nothing is listening at %1: start the server "
                                                    "(Server tab) or check the address")
                                                .arg(url)),
                 qPrintable(t->statusText()));
        QVERIFY(!t->isRunning());
        QVERIFY(t->findChild<QPushButton*>() != nullptr);
        // Usable: the same tab runs against the server next.
        t->setTargetUrl(serverUrl_);
        t->setRequests(5);
        t->setRate(5);
        t->setSlo(0, 0, 0);
        QVERIFY(run(t));
        QVERIFY2(t->statusText().startsWith("Done"), qPrintable(t->statusText()));
        QCOMPARE(t->report().steps.at(0).stats.completed, size_t(5));
        QCOMPARE(t->table()->rowCount(), 1);
        QVERIFY(t->bestText().isEmpty());  // no SLO, no best step
    }

    // Stop ends a long test; the rows of the requests sent are logged.
    void stopEndsALongTest() {
        ui::LoadTab* t = tab();
        t->setTargetUrl(serverUrl_);
        t->setSweepSteps(0);
        t->setArrival("constant");
        t->setRate(4);
        t->setRequests(100000);
        t->setLogEnabled(true);
        QSignalSpy done(t, &ui::LoadTab::runFinished);
        QVERIFY(t->start());
        QTRY_VERIFY_WITH_TIMEOUT(t->progressText().contains("3 of"), 60000);
        QVERIFY(window_->busyTabs().join(" ").contains("load test"));
        t->stop();
        QVERIFY(done.wait(120000));
        QVERIFY2(t->statusText().startsWith("Stopped"), qPrintable(t->statusText()));
        const load::Report rep = t->report();
        QCOMPARE(int(rep.steps.size()), 1);
        const size_t sent = rep.steps[0].stats.requests;
        QVERIFY(sent >= 3 && sent < 100000);
        QCOMPARE(query_rows(db_, "SELECT COUNT(*) FROM responses WHERE run_id = " +
                                     QString::number(*rep.run_id)),
                 (QList<QStringList>{{QString::number(sent)}}));
    }

    // Settings keep every field and the key variable's name, never the key.
    void settingsKeepTheVariableNotTheKey() {
        qputenv("WB_UI_LOAD_TEST_KEY", "sk-never-in-settings-123");
        const QString ini = dir_.filePath("load.ini");
        {
            ui::LoadTab a(nullptr);
            a.setTargetUrl("http://gpu-box:8000/v1");
            a.setApiKeyEnv("WB_UI_LOAD_TEST_KEY");
            a.setArrival("gamma");
            a.setBurstiness(0.5);
            a.setRate(7.5);
            a.setSweepSteps(4);
            a.setSlo(500, 50, 0);
            a.setLogEnabled(false);
            a.setPrice(2.5, 0, 0);
            QSettings s(ini, QSettings::IniFormat);
            s.beginGroup("load");
            a.saveSettings(s);
        }
        QFile f(ini);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray bytes = f.readAll();
        QVERIFY(bytes.contains("WB_UI_LOAD_TEST_KEY"));
        QVERIFY(!bytes.contains("sk-never-in-settings"));
        ui::LoadTab b(nullptr);
        QSettings s(ini, QSettings::IniFormat);
        s.beginGroup("load");
        b.restoreSettings(s);
        QSettings out(dir_.filePath("again.ini"), QSettings::IniFormat);
        b.saveSettings(out);
        QCOMPARE(out.value("url").toString(), QStringLiteral("http://gpu-box:8000/v1"));
        QCOMPARE(out.value("arrival").toString(), QStringLiteral("gamma"));
        QCOMPARE(out.value("burstiness").toDouble(), 0.5);
        QCOMPARE(out.value("rate").toDouble(), 7.5);
        QCOMPARE(out.value("sweep").toInt(), 4);
        QCOMPARE(out.value("slo_ttft_p99_ms").toDouble(), 500.0);
        QCOMPARE(out.value("slo_itl_p99_ms").toDouble(), 50.0);
        QCOMPARE(out.value("log").toBool(), false);
        QCOMPARE(out.value("price_per_hour").toDouble(), 2.5);
        // Both kinds of price: refused with the reason, nothing started.
        b.setPrice(2.5, 1, 0);
        QVERIFY(!b.start());
        QVERIFY2(b.statusText().contains("by the hour or by the token"),
                 qPrintable(b.statusText()));
        b.setPrice(0, 0, 0);
        // An unset variable: refused with the reason, nothing started.
        b.setApiKeyEnv("WB_UI_LOAD_TEST_UNSET");
        QVERIFY(!b.start());
        QVERIFY2(
            b.statusText().contains("WB_UI_LOAD_TEST_UNSET") && b.statusText().contains("not set"),
            qPrintable(b.statusText()));
    }
};

QTEST_MAIN(UiLoad)
#include "test_ui_load.moc"
