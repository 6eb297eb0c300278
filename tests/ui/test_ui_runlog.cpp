// The app's answer to a run log it cannot use as is (run_log_dialog.h), on
// real files: a damaged log (8 KiB of garbage over two pages of responses),
// a text file given as --db, a read-only choice. Checks that the dialog
// says how many responses can be read and offers only the choices that
// apply, that each choice does what it says, and that the damaged or
// foreign file keeps its exact bytes with nothing renamed or moved beside
// it. Which rows are on the damaged pages comes from SQLite's dbstat.

#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>

#include "common/data_dir.h"
#include "desktop/run_recorder.h"
#include "runlog/environment.h"
#include "runlog/run_log.h"
#include "ui/run_log_dialog.h"

using namespace wb;

namespace {

QByteArray bytes_of(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QStringList listing(const QString& dir) {
    return QDir(dir).entryList(QDir::Files | QDir::NoDotAndDotDot | QDir::Hidden, QDir::Name);
}

int64_t raw_count(const QString& path, const char* sql) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(path.toUtf8().constData(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close_v2(db);
    return n;
}

// A run log with 60 responses of ~500 bytes, in rollback-journal mode, then
// 8 KiB of garbage over the 3rd and 4th leaf pages of responses. Returns
// how many responses were on those pages (SQLite's dbstat).
int64_t make_damaged_log(const QString& path) {
    {
        runlog::RunLog log = runlog::RunLog::open(path.toStdString());
        const int64_t mv =
            log.ensure_model_version(wbtest::data_dir() + "/models/stories260K.gguf");
        const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
        const int64_t run = log.begin_run(runlog::RunKind::Chat, "chat", nlohmann::json::object());
        for (int i = 0; i < 60; ++i) {
            runlog::ResponseRecord r;
            r.run_id = run;
            r.model_version_id = mv;
            r.environment_id = env;
            r.prompt = "prompt " + std::to_string(i) + std::string(200, 'p');
            r.output = "output " + std::to_string(i) + std::string(250, 'o');
            r.finish_reason = "stop";
            r.started_ms = 1764460800000 + i;
            log.log_response(r);
        }
    }
    sqlite3* db = nullptr;
    sqlite3_open(path.toUtf8().constData(), &db);
    sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE;", nullptr,
                 nullptr, nullptr);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db,
                       "SELECT pageno, ncell FROM dbstat WHERE name = 'responses' AND pagetype = "
                       "'leaf' ORDER BY path",
                       -1, &st, nullptr);
    std::vector<std::pair<int64_t, int64_t>> leaves;
    while (sqlite3_step(st) == SQLITE_ROW)
        leaves.emplace_back(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (leaves.size() < 5 || leaves[3].first != leaves[2].first + 1) qFatal("unexpected layout");
    QFile f(path);
    f.open(QIODevice::ReadWrite);
    f.seek((leaves[2].first - 1) * 4096);
    f.write(QByteArray(8192, '\x5a'));
    return leaves[2].second + leaves[3].second;
}

}  // namespace

class TestUiRunLog : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;
    int n_ = 0;

    QString fresh_dir() {
        const QString d = dir_.filePath(QString("c%1").arg(n_++));
        QDir().mkpath(d);
        return d;
    }

  private slots:
    void damaged_log_offers_read_only_salvage_and_new_log() {
        const QString d = fresh_dir();
        const QString path = d + "/runlog.sqlite";
        const int64_t lost = make_damaged_log(path);
        const QByteArray damaged = bytes_of(path);
        gui::RunRecorder rec;
        QString notice;
        QVERIFY(!rec.open(path, &notice));
        QCOMPARE(rec.problem(), runlog::OpenProblem::Corrupt);
        QVERIFY2(notice.contains(QString("%1 responses can still be read").arg(60 - lost)),
                 qPrintable(notice));

        ui::RunLogDialog dlg(notice, rec.problem());
        QCOMPARE(dlg.findChild<QLabel*>("message")->text(), notice);
        for (int c : {1, 2, 3, 0})
            QVERIFY2(dlg.findChild<QPushButton*>(QString("choice%1").arg(c)),
                     qPrintable(QString("choice %1 missing").arg(c)));

        // Read-only: History reads the readable responses; nothing is logged.
        gui::RunRecorder ro;
        const ui::RunLogResolution r1 =
            ui::resolveRunLogProblem(ro, path, ui::RunLogDialog::ReadOnly, {});
        QVERIFY(r1.read_only && !r1.logging && !r1.remember);
        QVERIFY(ro.isReadOnly());
        QCOMPARE(raw_count(ro.path(), "SELECT count(*) FROM responses"), 60 - lost);
        QCOMPARE(ro.beginRun("chat", "x", gui::GenSettings{}), qint64(0));
        QCOMPARE(bytes_of(path), damaged);
        QCOMPARE(listing(d), QStringList{"runlog.sqlite"});

        // Salvage: a new file beside it, logged to from now on.
        gui::RunRecorder sv;
        const ui::RunLogResolution r2 =
            ui::resolveRunLogProblem(sv, path, ui::RunLogDialog::Salvage, {});
        QVERIFY2(r2.logging && r2.remember, qPrintable(r2.notice));
        QVERIFY(r2.path.startsWith(d + "/runlog-salvaged-"));
        QVERIFY2(r2.notice.contains(QString("Salvaged %1 responses").arg(60 - lost)),
                 qPrintable(r2.notice));
        QVERIFY(sv.isOpen() && !sv.isReadOnly());
        QVERIFY(sv.beginRun("chat", "after salvage", gui::GenSettings{}) > 0);
        QCOMPARE(raw_count(r2.path, "SELECT count(*) FROM responses"), 60 - lost);
        QCOMPARE(bytes_of(path), damaged);

        // A new log elsewhere: only where the user said.
        gui::RunRecorder nl;
        const QString other = d + "/other.sqlite";
        const ui::RunLogResolution r3 =
            ui::resolveRunLogProblem(nl, path, ui::RunLogDialog::NewLog, [&] { return other; });
        QVERIFY(r3.logging && r3.path == other);
        QVERIFY(QFile::exists(other));
        QCOMPARE(bytes_of(path), damaged);
    }

    // `--db notes.txt`: it used to be renamed aside and replaced. Now the
    // dialog offers only a new log elsewhere or no logging, and the text
    // file keeps its name and bytes.
    void text_file_is_never_renamed() {
        const QString d = fresh_dir();
        const QString path = d + "/notes.txt";
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("my notes\n").repeated(500));
        }
        const QByteArray before = bytes_of(path);
        gui::RunRecorder rec;
        QString notice;
        QVERIFY(!rec.open(path, &notice));
        QCOMPARE(rec.problem(), runlog::OpenProblem::NotSqlite);
        QVERIFY2(notice.startsWith(path + ": not a SQLite database"), qPrintable(notice));
        ui::RunLogDialog dlg(notice, rec.problem());
        QVERIFY(!dlg.findChild<QPushButton*>("choice1"));  // no read-only
        QVERIFY(!dlg.findChild<QPushButton*>("choice2"));  // no salvage
        QVERIFY(dlg.findChild<QPushButton*>("choice3"));
        QVERIFY(dlg.findChild<QPushButton*>("choice0"));
        const ui::RunLogResolution r =
            ui::resolveRunLogProblem(rec, path, ui::RunLogDialog::NoLog, {});
        QVERIFY(!r.logging && !rec.isOpen());
        QCOMPARE(bytes_of(path), before);
        QCOMPARE(listing(d), QStringList{"notes.txt"});
    }

    // A log in a folder that does not exist yet: the app made the folder
    // itself (QDir::mkpath, 0755 under the usual umask) and said nothing.
    // Now RunLog::open makes it 0700 and the open's notice says so; an
    // existing folder open to others is a warning, and left as it is.
    void new_folder_and_wide_folder_are_said() {
        const QString d = fresh_dir();
        gui::RunRecorder rec;
        QString notice;
        QVERIFY2(rec.open(d + "/made/runlog.sqlite", &notice), qPrintable(notice));
        QVERIFY2(notice.startsWith("Note: created the run log's folder " + d + "/made (mode 0700"),
                 qPrintable(notice));
        QCOMPARE(QFileInfo(d + "/made").permissions(), QFile::ReadOwner | QFile::WriteOwner |
                                                           QFile::ExeOwner | QFile::ReadUser |
                                                           QFile::WriteUser | QFile::ExeUser);
        const QString wide = d + "/wide";
        QVERIFY(QDir().mkpath(wide));
        QVERIFY(QFile::setPermissions(wide, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                                QFile::ReadGroup | QFile::ExeGroup |
                                                QFile::ReadOther | QFile::ExeOther));
        gui::RunRecorder rec2;
        QVERIFY2(rec2.open(wide + "/runlog.sqlite", &notice), qPrintable(notice));
        QVERIFY2(notice.startsWith("Warning: " + wide +
                                   ": the run log's folder is open to other users (mode 0755)"),
                 qPrintable(notice));
    }
};

QTEST_MAIN(TestUiRunLog)
#include "test_ui_runlog.moc"
