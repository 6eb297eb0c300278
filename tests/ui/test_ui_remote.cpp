// The Chat tab sending to a remote OpenAI-compatible endpoint, in the real
// main window, offscreen: the Server tab serves stories260K (CPU) on an
// ephemeral 127.0.0.1 port behind an API key, and the Chat tab's "Send to"
// names it as a remote target. The key goes to a real Secret Service (a
// private GNOME Keyring, tests/ui/keyring_session.sh) and never into the
// settings file or the run log; the reply streams into the transcript, is
// the text the server logged for that request, and is logged on the
// client's side with the endpoint's URL; a wrong key is an HTTP 401 the
// status line names; a restarted picker finds the endpoint and its key.
// The Batch tab runs the sample set against the same endpoint: every row is
// the text the server logged, each logged with its seed (base + index), and
// the summary counts every request from the client's times. The Compare
// tab puts the endpoint beside the same model run locally: the endpoint's
// greedy text is the local one's (up to where it stopped), and both rows
// are logged under one compare run.

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>
#include <cmath>
#include <memory>
#include <sstream>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "compare/compare.h"
#include "desktop/remote_client.h"
#include "desktop/remote_target.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "runlog/exporter.h"
#include "ui/batch_panel.h"
#include "ui/batch_results_model.h"
#include "ui/chat_view.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/compare_tab.h"
#include "ui/load_tab.h"
#include "ui/main_window.h"
#include "ui/server_tab.h"
#include "ui/target_picker.h"

using namespace wb;

namespace {

const QString kModel = QString::fromStdString(wbtest::data_dir()) + "/models/stories260K.gguf";
const QString kKey = QStringLiteral("sk-wb-remote-4f1c9a7e");

// The batch run's id (the one batch run of the log).
int64_t rows_run_id(const QString& db) {
    return wbtest::query_rows(db, "SELECT id FROM runs WHERE kind = 'batch'")
        .value(0)
        .value(0)
        .toLongLong();
}

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class UiRemote : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<gui::SettingsStore> store_;
    std::unique_ptr<gui::RunRecorder> recorder_;
    std::unique_ptr<ui::MainWindow> window_;
    QString db_;
    QString ini_;
    QString url_;  // "http://127.0.0.1:PORT/v1"

    ui::ChatView* chat() { return window_->chat(); }

    // Sends `text` from the Chat tab and waits for its reply.
    gui::RequestResult send(const QString& text, QStringList* pieces = nullptr) {
        QSignalSpy done(chat(), &ui::ChatView::replyFinished);
        QSignalSpy tokens(chat()->remoteClient(), &gui::RemoteClient::tokenArrived);
        if (!chat()->send(text)) return {};
        if (!done.wait(120000)) return {};
        if (pieces)
            for (const QList<QVariant>& t : tokens) *pieces << t.at(2).toString();
        return done.first().first().value<gui::RequestResult>();
    }

  private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        ini_ = dir_.filePath("s.ini");
        store_ = std::make_unique<gui::SettingsStore>(ini_);
        store_->setBackend("cpu");
        db_ = dir_.filePath("runlog.sqlite");
        recorder_ = std::make_unique<gui::RunRecorder>();
        QString notice;
        QVERIFY(recorder_->open(db_, &notice));
        window_ = std::make_unique<ui::MainWindow>(store_.get(), recorder_.get());
        window_->resize(1200, 860);
        window_->show();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        auto* server = window_->findChild<ui::ServerTab*>();
        QVERIFY(server);
        server->setModelPath(kModel);
        server->setPort(0);
        server->setParallel(2);
        server->setApiKey(kKey);
        QSignalSpy up(server, &ui::ServerTab::listeningAt);
        QVERIFY2(server->start(), qPrintable(server->statusText()));
        QVERIFY2(up.wait(120000), qPrintable(server->statusText()));
        url_ = server->baseUrl() + "/v1";
    }

    void cleanupTestCase() {
        window_.reset();
        recorder_.reset();
    }

    // Adding the endpoint stores its key in the Secret Service, not in the
    // settings file.
    void keyGoesToTheSecretStore() {
        ui::TargetPicker* picker = chat()->targetPicker();
        QVERIFY(!picker->isRemote());
        QString err;
        QVERIFY2(picker->addTarget({url_, QString(), false}, kKey, &err), qPrintable(err));
        QVERIFY(picker->isRemote());
        QCOMPARE(picker->remote().base_url, url_);
        QVERIFY(picker->remote().has_key);
        // Read back through the real store, as another process would.
        QCOMPARE(gui::KeyStore().read(gui::key_account(url_), &err).value_or(QString()), kKey);
        QCOMPARE(gui::key_account(url_ + "/"), gui::key_account(url_.chopped(3)));
        store_->sync();
        const QByteArray ini = file_bytes(ini_);
        QVERIFY(ini.contains(url_.toUtf8()));
        QVERIFY(!ini.contains(kKey.toUtf8()));
        // A URL that is not one is refused before anything is stored.
        QVERIFY(!picker->addTarget({"ftp://x", QString(), false}, "k", &err));
        QVERIFY2(err.contains("ftp://x"), qPrintable(err));
    }

    // A reply from the endpoint streams into the transcript; it is the text
    // the server generated and logged for that request; the client's row
    // names the endpoint, and no byte of the run log holds the key.
    void remoteReplyStreamsAndIsLogged() {
        QStringList pieces;
        const gui::RequestResult r = send("Once upon a time", &pieces);
        QVERIFY2(r.finish_reason == "stop" || r.finish_reason == "length",
                 qPrintable(r.finish_reason + " " + r.error));
        QVERIFY(!r.output.isEmpty());
        QCOMPARE(r.target_url, url_);
        QVERIFY(pieces.size() >= 2);  // streamed, not one body
        QCOMPARE(pieces.join(QString()), r.output);
        QCOMPARE(chat()->turns().last().text, r.output);
        QVERIFY(r.ttft_ms >= 0 && r.ttft_ms <= r.e2e_ms);
        QCOMPARE(r.tokens_source, QStringLiteral("usage"));
        QVERIFY(chat()->transcript()->toPlainText().contains(url_));
        window_->grab().save(QStringLiteral(WB_BINARY_DIR "/ui_remote_chat.png"));
        recorder_->waitForIdle();

        // The server's own row for this request: its output is the reply.
        const auto server_rows = wbtest::query_rows(
            db_,
            "SELECT r.output, r.output_tokens FROM responses r JOIN runs u ON r.run_id = u.id "
            "WHERE u.kind = 'server' ORDER BY r.id");
        QCOMPARE(server_rows.size(), 1);
        QCOMPARE(server_rows[0][0], r.output);
        QCOMPARE(server_rows[0][1].toInt(), r.generated_tokens);
        // The client's row: a chat run on the remote model version.
        const auto chat_rows = wbtest::query_rows(
            db_,
            "SELECT r.output, m.architecture, m.path, json_extract(r.settings, '$.target'), "
            "r.finish_reason FROM responses r JOIN runs u ON r.run_id = u.id JOIN model_versions "
            "m ON r.model_version_id = m.id WHERE u.kind = 'chat'");
        QCOMPARE(chat_rows.size(), 1);
        QCOMPARE(chat_rows[0][0], r.output);
        QCOMPARE(chat_rows[0][1], QStringLiteral("remote"));
        QCOMPARE(chat_rows[0][2], url_);
        QCOMPARE(chat_rows[0][3], url_);
        QCOMPARE(chat_rows[0][4], r.finish_reason);
        for (const QString& f : {db_, db_ + "-wal"})
            QVERIFY2(!file_bytes(f).contains(kKey.toUtf8()), qPrintable(f));

        // A second turn sends the whole conversation: the server's prompt
        // holds the first reply.
        const gui::RequestResult r2 = send("And then?");
        QVERIFY2(r2.finish_reason == "stop" || r2.finish_reason == "length", qPrintable(r2.error));
        recorder_->waitForIdle();
        const auto sent = wbtest::query_rows(
            db_,
            "SELECT r.prompt FROM responses r JOIN runs u ON r.run_id = u.id WHERE u.kind = "
            "'chat' ORDER BY r.id");
        QCOMPARE(sent.size(), 2);
        QVERIFY2(sent[1][0].contains(r.output.left(20)), qPrintable(sent[1][0]));
        QVERIFY(sent[1][0].contains("And then?"));
    }

    // A wrong key: HTTP 401 from the server, named in the status line; the
    // turn is kept with its error, nothing crashes.
    void wrongKeyIsNamed() {
        ui::TargetPicker* picker = chat()->targetPicker();
        // Another account of the same server: "localhost" for "127.0.0.1".
        QString other = url_;
        other.replace("127.0.0.1", "localhost");
        QString err;
        QVERIFY2(picker->addTarget({other, QString(), false}, "sk-wrong", &err), qPrintable(err));
        const gui::RequestResult r = send("Hello");
        QCOMPARE(r.finish_reason, QStringLiteral("error"));
        QVERIFY2(r.error.contains("401"), qPrintable(r.error));
        QVERIFY2(chat()->statusLabel()->text().contains("401"),
                 qPrintable(chat()->statusLabel()->text()));
    }

    // The Batch tab's "Send to" sees the endpoint the Chat tab added; the
    // sample set runs against it two at a time.
    void batchRunsAgainstTheEndpoint() {
        auto* batch = window_->findChild<ui::BatchPanel*>();
        QVERIFY(batch);
        window_->tabs()->setCurrentWidget(batch);  // its picker re-reads the list
        ui::TargetPicker* picker = batch->targetPicker();
        QCOMPARE(picker->targets().size(), 2);
        picker->setCurrent(1);
        QCOMPARE(picker->remote().base_url, url_);
        QVERIFY(batch->loadSampleSet());
        const int n = int(batch->promptSet().entries.size());
        QVERIFY(n >= 10);
        batch->setConcurrency(2);
        batch->setPrice(0, 1, 2);
        QSignalSpy done(batch, &ui::BatchPanel::runFinished);
        QVERIFY2(batch->run(), qPrintable(batch->statusLabel()->text()));
        QVERIFY(done.wait(300000));
        const ui::BatchPanel::Progress p = batch->progress();
        QCOMPARE(p.done, n);
        QCOMPARE(p.failed, 0);
        recorder_->waitForIdle();

        // Each row's text is what the server generated and logged for it.
        QStringList client, server;
        for (int i = 0; i < batch->results()->rowCount(); ++i)
            client << batch->results()->result(i).output;
        for (const QStringList& row : wbtest::query_rows(
                 db_,
                 "SELECT r.output FROM responses r JOIN runs u ON r.run_id = u.id WHERE u.kind = "
                 "'server' ORDER BY r.id"))
            server << row[0];
        QCOMPARE(server.size(), 2 + n);  // the two chat turns, then the batch
        server = server.mid(2);
        client.sort();
        server.sort();
        QCOMPARE(client, server);

        // The client's rows: one batch run on the remote model version,
        // seeds base + index in the set's order.
        const auto rows = wbtest::query_rows(
            db_,
            "SELECT r.request_id, json_extract(r.settings, '$.seed'), m.architecture, "
            "json_extract(u.settings, '$.seed') FROM responses r JOIN runs u ON r.run_id = u.id "
            "JOIN model_versions m ON r.model_version_id = m.id WHERE u.kind = 'batch'");
        QCOMPARE(rows.size(), n);
        const qulonglong base = rows[0][3].toULongLong();
        QHash<QString, int> index;
        for (int i = 0; i < n; ++i)
            index.insert(QString::fromStdString(batch->promptSet().entries[size_t(i)].id), i);
        for (const QStringList& r : rows) {
            QVERIFY2(index.contains(r[0]), qPrintable(r[0]));
            QCOMPARE(r[1].toULongLong(), base + qulonglong(index[r[0]]));
            QCOMPARE(r[2], QStringLiteral("remote"));
        }

        // The summary: every request, with the client's TTFT of each, and
        // the token prices worked from the logged token counts.
        const gui::BatchSummary& sum = batch->summary();
        QCOMPARE(int(sum.stats.requests_completed), n);
        QCOMPARE(int(sum.stats.ttft_ms.count), n);
        const auto tokens = wbtest::query_rows(
            db_,
            "SELECT sum(r.prompt_tokens), sum(r.output_tokens) FROM responses r JOIN runs u ON "
            "r.run_id = u.id WHERE u.kind = 'batch'");
        const std::optional<cost::Figures> cost = sum.cost();
        QVERIFY(cost.has_value());
        const double expected =
            (tokens[0][0].toDouble() * 1.0 + tokens[0][1].toDouble() * 2.0) / 1e6;
        QVERIFY2(std::abs(cost->total - expected) < 1e-12,
                 qPrintable(QString::number(cost->total, 'g', 17)));
        // The run log's export prices each row by the run's price, worked
        // here from the row's own token counts.
        std::ostringstream out;
        wb::runlog::ExportFilter f;
        f.run_id = rows_run_id(db_);
        QCOMPARE(wb::runlog::export_responses_readonly(db_.toStdString(), f,
                                                       wb::runlog::ExportFormat::Jsonl, out),
                 qint64(n));
        std::istringstream lines(out.str());
        int priced = 0;
        for (std::string line; std::getline(lines, line);) {
            const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
            QCOMPARE(o["price"].toObject()["basis"].toString(), QStringLiteral("per_m_tokens"));
            const double want =
                (o["prompt_tokens"].toDouble() * 1.0 + o["output_tokens"].toDouble() * 2.0) / 1e6;
            QVERIFY2(std::abs(o["cost"].toDouble() - want) < 1e-15,
                     qPrintable(QString::number(o["cost"].toDouble(), 'g', 17)));
            ++priced;
        }
        QCOMPARE(priced, n);
        batch->setPrice(0, 0, 0);
        picker->setCurrent(0);
    }

    // The Load tab with no key variable named takes the key the secret
    // store holds for its URL: every request of a short test is answered
    // by the key-protected server (without the key each is a 401).
    void loadTabTakesTheStoredKey() {
        auto* load_tab = window_->findChild<ui::LoadTab*>();
        QVERIFY(load_tab);
        window_->tabs()->setCurrentWidget(load_tab);
        load_tab->setTargetUrl(url_.chopped(3));  // the same account without "/v1"
        load_tab->setApiKeyEnv(QString());
        load_tab->setSweepSteps(0);
        load_tab->setArrival("concurrency");
        load_tab->setConcurrency(2);
        load_tab->setRequests(4);
        load_tab->setMaxTokens(4);
        load_tab->setSynthetic(8, 0, 0);
        load_tab->setLogEnabled(false);
        QSignalSpy done(load_tab, &ui::LoadTab::runFinished);
        QVERIFY2(load_tab->start(), qPrintable(load_tab->statusText()));
        QVERIFY(done.wait(120000));
        const load::Report rep = load_tab->report();
        QCOMPARE(int(rep.steps.size()), 1);
        QCOMPARE(int(rep.steps[0].stats.errors), 0);
        QCOMPARE(int(rep.steps[0].stats.completed), 4);
    }

    // The Compare tab: stories260K here (A) beside the endpoint serving it
    // (B). Both greedy on the same raw prompt: B's text is A's, up to where
    // the endpoint stopped (A runs on past an end-of-text token).
    void compareLocalBesideRemote() {
        auto* tab = window_->findChild<ui::compare::CompareTab*>();
        QVERIFY(tab);
        window_->tabs()->setCurrentWidget(tab);
        tab->setBackend("cpu");
        tab->addModel(kModel);
        gui::RemoteTarget t;
        t.base_url = url_;
        t.has_key = true;
        tab->addRemote(t, kKey);
        QCOMPARE(int(tab->panes().size()), 2);
        QVERIFY(tab->panes()[1]->isRemote());
        tab->setPrompt("Once upon a time");
        tab->setMaxTokens(24);
        QSignalSpy ready(tab, &ui::compare::CompareTab::reportReady);
        QSignalSpy logged(tab, &ui::compare::CompareTab::runLogged);
        tab->runPrompt();
        QVERIFY2(ready.wait(300000), qPrintable(tab->statusText()));
        const QString a = tab->panes()[0]->replyText();
        const QString b = tab->panes()[1]->replyText();
        QVERIFY(!b.isEmpty());
        QVERIFY2(a.startsWith(b), qPrintable(a + " | " + b));
        const QString line = tab->panes()[1]->statusText();
        QVERIFY2(line.contains(b == a ? "the same text as A" : "where this reply stopped"),
                 qPrintable(line));
        // The figures are the local model's alone (A against itself).
        QCOMPARE(int(tab->report()->models.size()), 1);
        QCOMPARE(QString::fromStdString(tab->report()->models[0].label), QStringLiteral("A"));
        QVERIFY(logged.wait(30000) || !logged.isEmpty());
        const qint64 run = logged.first().first().toLongLong();
        const auto rows = wbtest::query_rows(
            db_,
            QStringLiteral("SELECT r.request_id, m.architecture, r.output FROM responses r JOIN "
                           "model_versions m ON r.model_version_id = m.id WHERE r.run_id = %1 "
                           "ORDER BY r.request_id")
                .arg(run));
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0][0], QStringLiteral("A/p0"));
        QVERIFY(rows[0][1] != "remote");
        QCOMPARE(rows[1][0], QStringLiteral("B/p0"));
        QCOMPARE(rows[1][1], QStringLiteral("remote"));
        QCOMPARE(rows[1][2], b);
        for (const QString& f : {db_, db_ + "-wal"})
            QVERIFY2(!file_bytes(f).contains(kKey.toUtf8()), qPrintable(f));
        window_->grab().save(QStringLiteral(WB_BINARY_DIR "/ui_remote_compare.png"));
        // Remote panes only: no figures (no logits), the replies compared
        // as text and logged under a run of their own.
        tab->removeModel(tab->panes()[0]);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        tab->addRemote(t, kKey);
        QCOMPARE(int(tab->panes().size()), 2);
        QSignalSpy logged2(tab, &ui::compare::CompareTab::runLogged);
        tab->runPrompt();
        QVERIFY2(logged2.wait(120000), qPrintable(tab->statusText()));
        QVERIFY2(tab->statusText().contains("remote endpoints only"),
                 qPrintable(tab->statusText()));
        QVERIFY2(tab->panes()[1]->statusText().contains("the same text as A"),
                 qPrintable(tab->panes()[1]->statusText()));
        const qint64 run2 = logged2.first().first().toLongLong();
        QVERIFY(run2 != run);
        const auto rows2 = wbtest::query_rows(
            db_, QStringLiteral("SELECT r.request_id, r.output FROM responses r WHERE r.run_id = "
                                "%1 ORDER BY r.request_id")
                     .arg(run2));
        QCOMPARE(rows2.size(), 2);
        QCOMPARE(rows2[0][0], QStringLiteral("A/p0"));
        QCOMPARE(rows2[0][1], b);
        QCOMPARE(rows2[1][1], b);
    }

    // A picker made afresh (the app restarted) finds the endpoints, the
    // choice, and the key in the secret store; removing an endpoint
    // deletes its key there.
    void restartFindsTheKey() {
        ui::TargetPicker again(QStringLiteral("chat"));
        again.setStore(store_.get());
        QCOMPARE(again.targets().size(), 2);
        QCOMPARE(again.current(), 2);  // the last one added
        again.setCurrent(1);
        QString err;
        QCOMPARE(again.apiKey(&err).value_or(QString()), kKey);
        again.setCurrent(2);
        again.removeCurrent();
        QCOMPARE(again.targets().size(), 1);
        QString other = url_;
        other.replace("127.0.0.1", "localhost");
        QVERIFY(!gui::KeyStore().read(gui::key_account(other), &err).has_value());
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(gui::KeyStore().read(gui::key_account(url_)).value_or(QString()), kKey);
        QVERIFY(!file_bytes(ini_).contains(kKey.toUtf8()));
    }

    // Stop on an endpoint that accepts the connection and never answers:
    // the reply ends "cancelled" at once, not at the 5-minute timeout.
    void stopEndsASilentEndpoint() {
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
        QList<QTcpSocket*> held;  // accepted, never answered
        connect(&silent, &QTcpServer::newConnection, this, [&] {
            while (QTcpSocket* c = silent.nextPendingConnection()) held << c;
        });
        ui::TargetPicker* picker = chat()->targetPicker();
        QString err;
        QVERIFY2(
            picker->addTarget(
                {QStringLiteral("http://127.0.0.1:%1/v1").arg(silent.serverPort()), "m", false},
                QString(), &err),
            qPrintable(err));
        QSignalSpy done(chat(), &ui::ChatView::replyFinished);
        QVERIFY(chat()->send("Hello?"));
        QTRY_VERIFY_WITH_TIMEOUT(!held.isEmpty(), 10000);
        QTest::qWait(300);
        QVERIFY(chat()->isStreaming());
        chat()->stop();
        QVERIFY(done.wait(5000));
        const auto r = done.first().first().value<gui::RequestResult>();
        QCOMPARE(r.finish_reason, QStringLiteral("cancelled"));
        QVERIFY2(r.e2e_ms < 5000, qPrintable(QString::number(r.e2e_ms)));
        QVERIFY(!chat()->isStreaming());
    }
};

QTEST_MAIN(UiRemote)
#include "test_ui_remote.moc"
