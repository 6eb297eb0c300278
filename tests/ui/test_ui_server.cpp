// The Server tab in the real main window, offscreen, on the real
// engine (stories260K, CPU) and a real SQLite run log: started from the
// tab, it answers real HTTP requests from QNetworkAccessManager on
// 127.0.0.1; its counters and chart series grow; the counts it shows equal
// what the HTTP answers said (usage blocks) and what an independent scrape
// of GET /metrics says; stopping it leaves one run of kind "server" with
// one response row per request and run_events server_start / server_stop.
// A port already taken and a public address without a key are refused
// with the reason. A canary rolled back by hand shows on the timeline and
// in run_events. Screenshots: <build>/ui_server.png, ui_server_canary.png.

#include <QApplication>
#include <QClipboard>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "ui/main_window.h"
#include "ui/server_charts.h"
#include "ui/server_tab.h"
#include "ui/tabs.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";

using wbtest::query_rows;

/// One HTTP exchange: the status and body (waits up to 60 s).
std::pair<int, QByteArray> http(QNetworkAccessManager& net, const QString& url,
                                const QByteArray& body = {}) {
    QNetworkRequest req{QUrl(url)};
    QNetworkReply* reply = nullptr;
    if (body.isEmpty()) {
        reply = net.get(req);
    } else {
        req.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        reply = net.post(req, body);
    }
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(60000, &loop, &QEventLoop::quit);
    loop.exec();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QByteArray data = reply->readAll();
    reply->deleteLater();
    return {status, data};
}

/// The sum of every sample of `metric` in Prometheus text `text` (all label sets).
double metric_sum(const QByteArray& text, const QByteArray& metric) {
    double sum = 0;
    for (const QByteArray& line : text.split('\n')) {
        if (!line.startsWith(metric + "{") && !line.startsWith(metric + " ")) continue;
        sum += line.mid(line.lastIndexOf(' ') + 1).toDouble();
    }
    return sum;
}

}  // namespace

class UiServer : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<gui::SettingsStore> store_;
    std::unique_ptr<gui::RunRecorder> recorder_;
    std::unique_ptr<ui::MainWindow> window_;
    QString db_;

    ui::ServerTab* tab() { return window_->findChild<ui::ServerTab*>(); }

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
        QSignalSpy ready(window_.get(), &ui::MainWindow::modelReady);
        window_->openModel(kModel, true);
        QVERIFY(ready.wait(120000));
        QVERIFY(tab());
    }

    void cleanupTestCase() {
        window_.reset();
        recorder_.reset();
    }

    // Serving the loaded model: requests, counters, charts, run log.
    void servesLoadedModelAndLogsIt() {
        ui::ServerTab* t = tab();
        window_->tabs()->setCurrentWidget(t);
        t->setModelPath({});  // the app's loaded model
        t->setPort(0);
        t->setParallel(2);
        QSignalSpy up(t, &ui::ServerTab::listeningAt);
        QVERIFY2(t->start(), qPrintable(t->statusText()));
        QVERIFY2(up.wait(120000), qPrintable(t->statusText()));
        const QString url = t->baseUrl();
        QVERIFY2(url.startsWith("http://127.0.0.1:"), qPrintable(url));
        QVERIFY(t->statusText().contains(url));
        // Copy URL gives what OpenAI clients take as base_url.
        auto* copy = t->findChild<QPushButton*>("copyUrl");
        QVERIFY(copy && copy->isEnabled());
        copy->click();
        QCOMPARE(QApplication::clipboard()->text(), url + "/v1");
        QVERIFY(window_->busyTabs().join(" ").contains(url));

        QNetworkAccessManager net;
        const auto [models_status, models] = http(net, url + "/v1/models");
        QCOMPARE(models_status, 200);
        QCOMPARE(QJsonDocument::fromJson(models)["data"][0]["id"].toString(),
                 QStringLiteral("stories260K"));
        double completion_tokens = 0;
        const int n = 4;
        for (int i = 0; i < n; ++i) {
            const QByteArray body = QJsonDocument(QJsonObject{{"model", "stories260K"},
                                                              {"prompt", "Once upon a time"},
                                                              {"max_tokens", 8 + i},
                                                              {"temperature", 0}})
                                        .toJson();
            const auto [status, answer] = http(net, url + "/v1/completions", body);
            QCOMPARE(status, 200);
            completion_tokens +=
                QJsonDocument::fromJson(answer)["usage"]["completion_tokens"].toDouble();
        }
        QVERIFY(completion_tokens > 0);

        // The tab's counters and charts catch up (sampled 4 times a second).
        ui::ServerCharts* charts = t->charts();
        const QString want = QStringLiteral("%1 requests, %1 answered 200, %2 tokens generated")
                                 .arg(n)
                                 .arg(completion_tokens);
        QTRY_VERIFY2_WITH_TIMEOUT(t->countersText().contains(want),
                                  qPrintable(t->countersText() + " / want " + want), 10000);
        const int before = charts->points(ui::ServerCharts::Ttft, "stable p99");
        QVERIFY(before > 0);
        QTRY_VERIFY_WITH_TIMEOUT(charts->points(ui::ServerCharts::Ttft, "stable p99") > before,
                                 5000);
        QVERIFY(charts->lastValue(ui::ServerCharts::Ttft, "stable p99") > 0);
        QVERIFY(charts->lastValue(ui::ServerCharts::Itl, "stable p50") > 0);
        QVERIFY(charts->lastValue(ui::ServerCharts::E2e, "stable p99") > 0);
        QVERIFY(charts->points(ui::ServerCharts::QueueWait, "stable p99") > 0);
        const double busy = charts->lastValue(ui::ServerCharts::Busy, "stable busy share");
        QVERIFY2(busy > 0 && busy <= 1, qPrintable(QString::number(busy)));
        QVERIFY(charts->lastValue(ui::ServerCharts::KvBlocks, "stable free") > 0);
        QVERIFY(charts->lastValue(ui::ServerCharts::Memory, "stable host") > 0);
        QVERIFY(charts->points(ui::ServerCharts::Throughput, "stable tokens/s") > 0);
        QCOMPARE(charts->points(ui::ServerCharts::Ttft, "canary p99"), -1);  // no canary

        // The same figures as an HTTP scrape of /metrics (a separate reading).
        const auto [metrics_status, metrics] = http(net, url + "/metrics");
        QCOMPARE(metrics_status, 200);
        QCOMPARE(metric_sum(metrics, "workbench_generation_tokens_total"), completion_tokens);
        QCOMPARE(metric_sum(metrics, "workbench_time_to_first_token_seconds_count"), double(n));

        QVERIFY(window_->grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_server.png"));

        QSignalSpy down(t, &ui::ServerTab::serverStopped);
        t->stop();
        QVERIFY(down.wait(60000));
        QVERIFY(!t->isServing());
        QVERIFY2(t->statusText().startsWith("Stopped"), qPrintable(t->statusText()));

        // One run of kind "server", one row per request, its start and stop.
        const QString run = QString::number(t->runId());
        QVERIFY(t->runId() > 0);
        QCOMPARE(query_rows(db_, "SELECT kind, ended_ms IS NOT NULL FROM runs WHERE id = " + run),
                 (QList<QStringList>{{"server", "1"}}));
        const auto rows =
            query_rows(db_,
                       "SELECT json_extract(settings, '$.http_status'), "
                       "json_extract(settings, '$.api_route'), output_tokens FROM responses "
                       "WHERE run_id = " +
                           run + " ORDER BY id");
        QCOMPARE(rows.size(), n);
        double logged_tokens = 0;
        for (const QStringList& r : rows) {
            QCOMPARE(r[0], QStringLiteral("200"));
            QCOMPARE(r[1], QStringLiteral("/v1/completions"));
            logged_tokens += r[2].toDouble();
        }
        QCOMPARE(logged_tokens, completion_tokens);
        const auto events = query_rows(
            db_,
            "SELECT kind, json_extract(details, '$.url'), "
            "json_extract(details, '$.versions[0].requests') FROM run_events WHERE run_id = " +
                run + " ORDER BY t_ms, id");
        QCOMPARE(events.size(), 2);
        QCOMPARE(events[0][0], QStringLiteral("server_start"));
        QCOMPARE(events[0][1], url);
        QCOMPARE(events[1][0], QStringLiteral("server_stop"));
        QCOMPARE(events[1][2].toDouble(), double(n));
    }

    // A taken port and a public address without a key: refused with a reason.
    void refusesWithAReason() {
        ui::ServerTab* t = tab();
        QTcpServer taken;
        QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
        t->setPort(taken.serverPort());
        QSignalSpy down(t, &ui::ServerTab::serverStopped);
        QVERIFY(t->start());
        QVERIFY(down.wait(120000));
        QVERIFY2(t->statusText().contains("port is in use") &&
                     t->statusText().contains(QString::number(taken.serverPort())),
                 qPrintable(t->statusText()));
        QVERIFY(!t->isServing());

        t->setHost("0.0.0.0");
        t->setPort(0);
        QVERIFY(!t->start());
        QVERIFY2(t->statusText().contains("API key"), qPrintable(t->statusText()));
        t->setHost("127.0.0.1");
    }

    // The tab's choices round-trip through QSettings (its hooks in
    // tabs.cpp); the API key is never written.
    void choicesPersistButNotTheKey() {
        ui::ServerTab* t = tab();
        const ui::TabSpec* spec = nullptr;
        for (const ui::TabSpec& s : ui::tab_specs())
            if (QByteArray(s.key) == "server") spec = &s;
        QVERIFY(spec && spec->hooks.save && spec->hooks.restore);
        t->setPort(9123);
        t->setParallel(3);
        t->setNoText(true);
        t->setApiKey("do-not-store-me");
        t->setCanarySteps("10,100");
        rollout::Limits l = t->canaryLimits();
        l.max_mean_kld = 0.125;
        t->setCanaryLimits(l);
        const QString ini = dir_.filePath("tab.ini");
        {
            QSettings s(ini, QSettings::IniFormat);
            s.beginGroup("server");
            spec->hooks.save(t, s);
        }
        QFile f(ini);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY2(!text.contains("do-not-store-me"), text.constData());
        t->setPort(8080);
        t->setParallel(4);
        t->setNoText(false);
        t->setCanarySteps("5,10,25,50,100");
        t->setCanaryLimits(rollout::Limits{});
        {
            QSettings s(ini, QSettings::IniFormat);
            s.beginGroup("server");
            spec->hooks.restore(t, s);
        }
        QCOMPARE(t->port(), 9123);
        QCOMPARE(t->parallel(), 3);
        QVERIFY(t->noText());
        QCOMPARE(t->canarySteps(), QStringLiteral("10,100"));
        QCOMPARE(t->canaryLimits().max_mean_kld, 0.125);
        t->setNoText(false);
        t->setParallel(2);
        t->setApiKey({});
    }

    // A canary (the same file) rolled back by hand: on the timeline, in run_events.
    void canaryRolledBackByHand() {
        ui::ServerTab* t = tab();
        t->setPort(0);
        t->setCanaryEnabled(true);
        t->setCanaryPath(kModel);
        t->setCanarySteps("50,100");
        t->setCanaryStepSeconds(3600);  // no decision by the clock
        QSignalSpy up(t, &ui::ServerTab::listeningAt);
        QVERIFY2(t->start(), qPrintable(t->statusText()));
        QVERIFY2(up.wait(120000), qPrintable(t->statusText()));
        QNetworkAccessManager net;
        for (int i = 0; i < 4; ++i) {
            const QByteArray body =
                QJsonDocument(QJsonObject{{"model", "stories260K"},
                                          {"prompt", "Once upon a time"},
                                          {"max_tokens", 4},
                                          {"user", QStringLiteral("user-%1").arg(i)}})
                    .toJson();
            QCOMPARE(http(net, t->baseUrl() + "/v1/completions", body).first, 200);
        }
        // Both versions have their own series.
        QTRY_VERIFY_WITH_TIMEOUT(
            t->charts()->points(ui::ServerCharts::Requests, "canary running") > 0 &&
                t->charts()->points(ui::ServerCharts::Requests, "stable running") > 0,
            5000);
        // The same file as its own canary keeps its own label (and counts).
        QTRY_VERIFY2_WITH_TIMEOUT(t->countersText().contains("+canary): "),
                                  qPrintable(t->countersText()), 5000);
        QSignalSpy decided(t, &ui::ServerTab::decisionAdded);
        QVERIFY(t->rollBack());
        QVERIFY(decided.wait(10000));
        QCOMPARE(t->timeline()->rowCount(), 1);
        QCOMPARE(t->timeline()->item(0, 3)->text(), QStringLiteral("rollback (by hand)"));
        QVERIFY(t->timeline()->item(0, 2)->text().endsWith(QStringLiteral("→ 0%")));
        QVERIFY(!t->rollBack());  // it ended
        QVERIFY(window_->grab().save(QStringLiteral(WB_BINARY_DIR) + "/ui_server_canary.png"));
        QSignalSpy down(t, &ui::ServerTab::serverStopped);
        t->stop();
        QVERIFY(down.wait(60000));
        const QString run = QString::number(t->runId());
        const auto events = query_rows(
            db_,
            "SELECT kind, json_extract(details, '$.manual'), "
            "json_extract(details, '$.share_after'), json_extract(details, '$.n_stable') + "
            "json_extract(details, '$.n_canary') FROM run_events WHERE run_id = " +
                run + " ORDER BY t_ms, id");
        QCOMPARE(events.size(), 3);
        QCOMPARE(events[1], (QStringList{"rollback", "1", "0.0", "4"}));
        QCOMPARE(events[2][0], QStringLiteral("server_stop"));
        t->setCanaryEnabled(false);
    }
};

QTEST_MAIN(UiServer)
#include "test_ui_server.moc"
