#pragma once
// What the app does when its run log cannot be used as is: a damaged file,
// a file that is not a run log (a typo in --db), a log written by a newer
// build, a read-only file, /dev/null or a folder. The dialog says what is
// wrong (naming the file; for a damaged log, how many responses can still
// be read) and offers only the choices that apply:
//   - keep using it read-only (History shows what can be read; nothing is
//     logged this session),
//   - salvage the readable responses into a new log beside it and log there
//     (the damaged file stays exactly as it is),
//   - start a new log at another path (a save-file dialog),
//   - run without logging.
// Nothing is renamed, moved or overwritten: every choice that writes,
// writes a new file, and only after the user chose it.

#include <QDialog>
#include <QString>
#include <functional>

#include "desktop/run_recorder.h"

namespace wb::ui {

class RunLogDialog : public QDialog {
    Q_OBJECT
  public:
    enum Choice { NoLog = 0, ReadOnly = 1, Salvage = 2, NewLog = 3 };

    /// `message`: RunRecorder::open()'s notice; `problem`: its problem().
    RunLogDialog(const QString& message, runlog::OpenProblem problem, QWidget* parent = nullptr);

    /// Which choices the dialog offers for `problem` (the tests read it).
    static QList<Choice> choicesFor(runlog::OpenProblem problem);

    /// Shows the dialog modally and returns the choice (NoLog when closed).
    static Choice ask(const QString& message, runlog::OpenProblem problem, QWidget* parent);
};

/// The outcome of carrying out a choice.
struct RunLogResolution {
    bool logging = false;    ///< new responses are logged (to `path`)
    bool read_only = false;  ///< History shows a log read-only
    QString path;            ///< the log now in use ("" when none)
    bool remember = false;   ///< the app should use `path` from now on (a new file was made)
    QString notice;          ///< what happened, for the user (a sentence or two)
};

/// Carries out `choice` for the log at `path` on `recorder`. `new_path`
/// asks the user where a new log goes (NewLog; empty = cancelled). Salvage
/// writes runlog::salvage_path_for(path) and logs there.
RunLogResolution resolveRunLogProblem(gui::RunRecorder& recorder, const QString& path,
                                      RunLogDialog::Choice choice,
                                      const std::function<QString()>& new_path);

}  // namespace wb::ui
