// `workbench --help` and `--version` as a user on a machine without a
// display runs them (a server, an SSH session, CI): they print and exit 0,
// with no window system to connect to.

#include <QFile>
#include <QProcess>
#include <QtTest>

#include "common/process.h"

namespace {

const QString kApp = QStringLiteral(WB_BINARY_DIR "/ui/main/workbench");

using Result = wbtest::ProcessResult;

/// Runs the app with `args` and no display: QT_QPA_PLATFORM, DISPLAY and
/// WAYLAND_DISPLAY unset. A crash (QApplication aborting) gives code -1.
Result run_without_display(const QStringList& args) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* k : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) env.remove(k);
    return wbtest::run_process(kApp, args, 60000, {}, env);
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
