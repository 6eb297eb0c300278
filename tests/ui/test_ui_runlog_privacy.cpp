// The run log's privacy settings in the app: "Do not store
// prompts and answers" and "Delete prompts and answers after N days" are in
// the Settings panel, persist across a restart (a new SettingsStore and main
// window on the same settings file), make new runs no-text runs, and the
// retention is applied when the app starts, with the status bar saying what
// it removed. Real main window (offscreen), real run-log files; rows read
// through the SQLite C API.

#include <QCheckBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "common/raw_sqlite.h"
#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "runlog/environment.h"
#include "runlog/run_log.h"
#include "runlog/time_utc.h"
#include "ui/compare/compare_tab.h"
#include "ui/history_view.h"
#include "ui/main_window.h"
#include "ui/settings_panel.h"

using namespace wb;

namespace {

const std::string kStories = wbtest::data_dir() + "/models/stories260K.gguf";

// A run log with one response 30 days old and one from now.
void make_log(const QString& path) {
    runlog::RunLog log = runlog::RunLog::open(path.toStdString());
    const int64_t mv = log.ensure_model_version(kStories);
    const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
    const int64_t run = log.begin_run("chat", "c", nlohmann::json::object());
    for (const int64_t age_days : {30, 0}) {
        runlog::ResponseRecord r;
        r.run_id = run;
        r.model_version_id = mv;
        r.environment_id = env;
        r.prompt = age_days ? "ZQXOLDCHAT prompt" : "ZQXNEWCHAT prompt";
        r.output = "answer";
        r.prompt_tokens = 3;
        r.output_tokens = 1;
        r.started_ms = runlog::now_utc_ms() - age_days * 86400000;
        log.log_response(r);
    }
}

}  // namespace

class UiRunLogPrivacy : public QObject {
    Q_OBJECT
  private slots:
    void settingsPersistAcrossARestart();
    void retentionIsAppliedAtStart();
    void compareFollowsNoText();
};

void UiRunLogPrivacy::settingsPersistAcrossARestart() {
    QTemporaryDir d;
    const QString ini = d.filePath("s.ini");
    {
        gui::SettingsStore store(ini);
        ui::MainWindow w(&store, nullptr);
        auto* noText = w.settingsPanel()->findChild<QCheckBox*>("noText");
        auto* days = w.settingsPanel()->findChild<QSpinBox*>("textRetentionDays");
        QVERIFY(noText && days);
        QVERIFY(!noText->isChecked());  // defaults: store text, keep it
        QCOMPARE(days->value(), 0);
        noText->setChecked(true);
        days->setValue(14);
        store.sync();
    }
    // The restart: a new store on the same file, a new window.
    gui::SettingsStore store(ini);
    QCOMPARE(store.noText(), true);
    QCOMPARE(store.textRetentionDays(), 14);
    QTemporaryDir logs;
    const QString db = logs.filePath("runlog.sqlite");
    gui::RunRecorder recorder;
    QString notice;
    QVERIFY2(recorder.open(db, &notice), qPrintable(notice));
    ui::MainWindow w(&store, &recorder);
    QCOMPARE(w.settingsPanel()->findChild<QCheckBox*>("noText")->isChecked(), true);
    QCOMPARE(w.settingsPanel()->findChild<QSpinBox*>("textRetentionDays")->value(), 14);
    // A run the app begins now is a no-text run.
    QVERIFY(recorder.noText());
    const qint64 run = recorder.beginRun("chat", "c", gui::GenSettings{});
    QVERIFY(run > 0);
    recorder.waitForIdle();
    QCOMPARE(wbtest::RawSqlite(db).rows("SELECT no_text FROM runs WHERE id = " +
                                        std::to_string(run))[0][0],
             std::string("1"));
}

void UiRunLogPrivacy::retentionIsAppliedAtStart() {
    QTemporaryDir d;
    const QString db = d.filePath("runlog.sqlite");
    make_log(db);
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setTextRetentionDays(7);
    gui::RunRecorder recorder;
    QString notice;
    QVERIFY2(recorder.open(db, &notice), qPrintable(notice));
    QSignalSpy purged(&recorder, &gui::RunRecorder::purged);
    ui::MainWindow w(&store, &recorder);
    QSignalSpy messages(w.statusBar(), &QStatusBar::messageChanged);
    QVERIFY(purged.wait(60000));
    QCOMPARE(purged.at(0).at(0).toLongLong(), qint64(1));
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            for (const auto& m : messages)
                if (m.at(0).toString().contains("removed the prompts and answers of 1 response"))
                    return true;
            return false;
        }(),
        10000);
    recorder.waitForIdle();
    const wbtest::RawSqlite raw(db);
    QCOMPARE(raw.rows("SELECT prompt, redacted FROM responses ORDER BY id"),
             (std::vector<std::vector<std::string>>{{"<null>", "1"}, {"ZQXNEWCHAT prompt", "0"}}));
    // History says so instead of showing an empty prompt.
    auto* table = w.findChild<ui::HistoryView*>()->findChild<QTableView*>();
    QVERIFY(table);
    const auto cells = [table] {
        QStringList all;
        for (int r = 0; r < table->model()->rowCount(); ++r)
            for (int c = 0; c < table->model()->columnCount(); ++c)
                all << table->model()->index(r, c).data().toString();
        return all;
    };
    QTRY_VERIFY_WITH_TIMEOUT(cells().contains("[redacted]"), 10000);
    QVERIFY(cells().contains("ZQXNEWCHAT prompt"));
}

// Compare writes through its own connection: with the box ticked its run
// is a no-text run too (stories260K twice on the CPU backend).
void UiRunLogPrivacy::compareFollowsNoText() {
    QTemporaryDir d;
    const QString db = d.filePath("runlog.sqlite");
    gui::SettingsStore store(d.filePath("s.ini"));
    store.setNoText(true);
    gui::RunRecorder recorder;
    QString notice;
    QVERIFY2(recorder.open(db, &notice), qPrintable(notice));
    ui::MainWindow w(&store, &recorder);
    auto* tab = w.findChild<ui::compare::CompareTab*>();
    QVERIFY(tab);
    const QString model = QString::fromStdString(kStories);
    tab->setBackend("cpu");
    tab->addModel(model);
    tab->addModel(model);
    tab->setMaxTokens(4);
    tab->setPrompt("Once upon a time ZQXCOMPARESECRET");
    QSignalSpy logged(tab, &ui::compare::CompareTab::runLogged);
    tab->runPrompt();
    QVERIFY(logged.wait(300000));
    QCOMPARE(logged.at(0).at(1).toInt(), 2);
    const wbtest::RawSqlite raw(db);
    QCOMPARE(raw.rows("SELECT kind, no_text FROM runs"),
             (std::vector<std::vector<std::string>>{{"compare", "1"}}));
    QCOMPARE(raw.rows("SELECT count(*) FROM responses WHERE prompt IS NULL AND output IS NULL "
                      "AND redacted = 1 AND output_tokens = 4"),
             (std::vector<std::vector<std::string>>{{"2"}}));
}

QTEST_MAIN(UiRunLogPrivacy)
#include "test_ui_runlog_privacy.moc"
