// `workbench --help` and `--version` as a user on a machine without a
// display runs them (a server, an SSH session, CI): they print and exit 0,
// with no window system to connect to.

#include <QFile>
#include <QProcess>
#include <QtTest>

namespace {

const QString kApp = QStringLiteral(WB_BINARY_DIR "/app/gui/workbench");

struct Result {
    int code = -1;
    QByteArray out, err;
};

/// Runs the app with `args` and no display: QT_QPA_PLATFORM, DISPLAY and
/// WAYLAND_DISPLAY unset. A crash (QApplication aborting) gives code -1.
Result run_without_display(const QStringList& args) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* k : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) env.remove(k);
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(kApp, args);
    Result r;
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        r.err = "timed out";
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

}  // namespace

class TestGuiHelp : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { QVERIFY2(QFile::exists(kApp), qPrintable(kApp)); }

    void help_needs_no_display() {
        for (const char* flag : {"--help", "-h"}) {
            const Result r = run_without_display({flag});
            QVERIFY2(r.code == 0, r.err.constData());
            for (const char* opt : {"--db", "--no-log", "--backend", "--settings", "--screenshots"})
                QVERIFY2(r.out.contains(opt), r.out.constData());
        }
    }

    void version_needs_no_display() {
        const Result r = run_without_display({"--version"});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY2(r.out.startsWith("workbench "), r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestGuiHelp)
#include "test_gui_help.moc"
