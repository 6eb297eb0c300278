// `workbench`: the desktop app. Opens the main window with the last model
// used (the bundled default model at first start), logs every response to
// the run log, and with --screenshots renders the README's screenshots.

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStatusBar>
#include <QTimer>
#include <cstdio>
#include <string_view>

#include "desktop/run_recorder.h"
#include "desktop/settings_store.h"
#include "paths.h"
#include "ui/main/screenshots.h"
#include "ui/main_window.h"
#include "ui/run_log_dialog.h"
#include "wb_version.h"

namespace {

/// Names the application for QSettings paths, --version and window titles.
/// Static QCoreApplication state: callable before or after the application
/// object exists. Never throws.
void set_application_names() {
    QCoreApplication::setOrganizationName("inference-workbench");
    QCoreApplication::setApplicationName("workbench");
    QCoreApplication::setApplicationVersion(
        QStringLiteral("%1 (%2)").arg(WB_VERSION, WB_GIT_COMMIT));
}

/// Adds the app's description, help/version and options (--db, --no-log,
/// --backend, --settings, --screenshots, the [model.gguf] positional) to
/// `cli`; main() reads them back by name. Never throws.
void add_options(QCommandLineParser& cli) {
    cli.setApplicationDescription(
        "Inference Workbench: chat with local GGUF models, run prompt sets at a chosen "
        "concurrency, watch latency percentiles and memory live, browse the run log.");
    cli.addHelpOption();
    cli.addVersionOption();
    cli.addPositionalArgument(
        "model",
        "GGUF model to open (default: the last one used, at first start the bundled model)",
        "[model.gguf]");
    cli.addOptions({
        QCommandLineOption(
            QStringLiteral("db"),
            "Run-log database (default $XDG_DATA_HOME/inference-workbench/runlog.sqlite).", "path"),
        QCommandLineOption(QStringLiteral("no-log"), "Do not write responses to the run log."),
        QCommandLineOption(QStringLiteral("backend"),
                           "Load on 'vulkan' or 'cpu' (the threaded CPU kernels), and remember it "
                           "(default: the last choice, else vulkan when a Vulkan device is a "
                           "GPU and cpu otherwise).",
                           "name"),
        QCommandLineOption(QStringLiteral("settings"),
                           "Keep settings in this INI file instead of the user's.", "file"),
        QCommandLineOption(QStringLiteral("screenshots"),
                           "Run a scripted session on the bundled model, write PNGs of the "
                           "window to DIR, and exit.",
                           "dir"),
    });
}

/// True when `argv` asks only for text: -h, -?, --help, --help-all, -v or
/// --version anywhere before a lone "--". Such a run needs no display.
bool asks_for_help_or_version(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") break;
        if (a == "-h" || a == "-?" || a == "--help" || a == "--help-all" || a == "-v" ||
            a == "--version")
            return true;
    }
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    set_application_names();
    if (asks_for_help_or_version(argc, argv)) {
        // Help and version print and exit without a window system (a
        // QApplication aborts where there is no display): process() exits.
        QCoreApplication core(argc, argv);
        QCommandLineParser cli;
        add_options(cli);
        cli.process(core);
        return 0;
    }
    QApplication app(argc, argv);
    QApplication::setApplicationDisplayName("Inference Workbench");
    QApplication::setWindowIcon(QIcon(":/icons/inference-workbench.png"));

    QCommandLineParser cli;
    add_options(cli);
    cli.process(app);
    const QString db = QStringLiteral("db"), noLog = QStringLiteral("no-log"),
                  backend = QStringLiteral("backend"), settings = QStringLiteral("settings"),
                  shots = QStringLiteral("screenshots");

    const bool screenshot_mode = cli.isSet(shots);
    wb::gui::SettingsStore store(cli.value(settings));
    if (cli.isSet(backend)) store.setBackend(cli.value(backend));

    wb::gui::RunRecorder recorder;
    QString log_notice;
    if (!cli.isSet(noLog)) {
        // --db, else the log the user chose earlier (salvaged or new), else the default.
        const QString path = cli.isSet(db)                   ? cli.value(db)
                             : !store.runLogPath().isEmpty() ? store.runLogPath()
                                                             : wb::gui::RunRecorder::defaultPath();
        if (!recorder.open(path, &log_notice)) {
            if (screenshot_mode) {
                log_notice = QObject::tr("Responses are not logged: %1").arg(log_notice);
            } else {
                // Nothing is renamed or replaced: the user chooses (run_log_dialog.h).
                const auto choice =
                    wb::ui::RunLogDialog::ask(log_notice, recorder.problem(), nullptr);
                const wb::ui::RunLogResolution res =
                    wb::ui::resolveRunLogProblem(recorder, path, choice, [] {
                        return QFileDialog::getSaveFileName(
                            nullptr, QObject::tr("New run log"),
                            wb::gui::RunRecorder::defaultPath(), QObject::tr("Run log (*.sqlite)"),
                            nullptr, QFileDialog::DontConfirmOverwrite);
                    });
                if (res.remember && !cli.isSet(db)) store.setRunLogPath(res.path);
                log_notice = res.notice;
            }
        }
    }

    wb::ui::MainWindow w(&store, &recorder);
    w.show();
    if (!log_notice.isEmpty()) {
        std::fprintf(stderr, "workbench: %s\n", qPrintable(log_notice));
        if (!screenshot_mode)
            QTimer::singleShot(0, &w, [&w, log_notice] {
                QMessageBox::information(&w, QObject::tr("Run log"), log_notice);
            });
    }

    if (screenshot_mode) {
        QString model;
        try {
            model = cli.positionalArguments().value(
                0, QString::fromStdString(wb::paths::default_model_path().string()));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "workbench: %s\n", e.what());
            return 1;
        }
        const int rc =
            wb::gui::take_screenshots(w, cli.value(shots), QFileInfo(model).absoluteFilePath());
        recorder.waitForIdle();
        return rc;
    }

    if (!cli.positionalArguments().isEmpty())
        w.openModel(QFileInfo(cli.positionalArguments().first()).absoluteFilePath());
    else
        w.openStartupModel();
    const int rc = app.exec();
    recorder.waitForIdle();
    return rc;
}
