#include "ui/run_log_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "runlog/integrity.h"

namespace wb::ui {

namespace {

QString label(RunLogDialog::Choice c) {
    switch (c) {
        case RunLogDialog::ReadOnly:
            return RunLogDialog::tr("Keep using it read-only");
        case RunLogDialog::Salvage:
            return RunLogDialog::tr("Salvage into a new log");
        case RunLogDialog::NewLog:
            return RunLogDialog::tr("Start a new log elsewhere…");
        case RunLogDialog::NoLog:
            return RunLogDialog::tr("Run without logging");
    }
    return {};
}

QString tip(RunLogDialog::Choice c) {
    switch (c) {
        case RunLogDialog::ReadOnly:
            return RunLogDialog::tr(
                "History shows the responses that can be read; nothing new is logged this "
                "session. The file is not changed.");
        case RunLogDialog::Salvage:
            return RunLogDialog::tr(
                "Copies every readable response into a new file beside it and logs there from "
                "now on. The damaged file stays exactly as it is.");
        case RunLogDialog::NewLog:
            return RunLogDialog::tr("Choose a new file for the run log; this one is not changed.");
        case RunLogDialog::NoLog:
            return RunLogDialog::tr("Responses are not logged this session.");
    }
    return {};
}

}  // namespace

QList<RunLogDialog::Choice> RunLogDialog::choicesFor(runlog::OpenProblem problem) {
    switch (problem) {
        case runlog::OpenProblem::Corrupt:
            return {ReadOnly, Salvage, NewLog, NoLog};
        case runlog::OpenProblem::ReadOnly:
            return {ReadOnly, NewLog, NoLog};
        default:  // not a run log, newer schema, a folder or device: nothing to read
            return {NewLog, NoLog};
    }
}

RunLogDialog::RunLogDialog(const QString& message, runlog::OpenProblem problem, QWidget* parent)
    : QDialog(parent) {
    setWindowTitle(tr("Run log"));
    auto* lay = new QVBoxLayout(this);
    auto* head = new QLabel(tr("<b>The run log cannot be used as it is.</b>"), this);
    auto* text = new QLabel(message, this);
    text->setObjectName("message");
    text->setWordWrap(true);
    text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* note = new QLabel(tr("Nothing has been changed. Choose what to do:"), this);
    lay->addWidget(head);
    lay->addWidget(text);
    lay->addWidget(note);
    auto* box = new QDialogButtonBox(Qt::Vertical, this);
    for (Choice c : choicesFor(problem)) {
        QPushButton* b = box->addButton(label(c), QDialogButtonBox::ActionRole);
        b->setObjectName(QStringLiteral("choice%1").arg(int(c)));
        b->setToolTip(tip(c));
        connect(b, &QPushButton::clicked, this, [this, c] { done(int(c)); });
    }
    lay->addWidget(box);
    setMinimumWidth(520);
}

RunLogDialog::Choice RunLogDialog::ask(const QString& message, runlog::OpenProblem problem,
                                       QWidget* parent) {
    RunLogDialog d(message, problem, parent);
    return static_cast<Choice>(d.exec());  // closed: 0 = NoLog
}

RunLogResolution resolveRunLogProblem(gui::RunRecorder& recorder, const QString& path,
                                      RunLogDialog::Choice choice,
                                      const std::function<QString()>& new_path) {
    RunLogResolution r;
    QString err;
    switch (choice) {
        case RunLogDialog::ReadOnly:
            if (recorder.openReadOnly(path, &err)) {
                r.read_only = true;
                r.path = path;
                r.notice = RunLogDialog::tr(
                               "%1 is open read-only: History shows the responses that can be "
                               "read, and new responses are not logged this session.")
                               .arg(path);
                return r;
            }
            r.notice = RunLogDialog::tr("Responses are not logged: %1").arg(err);
            return r;
        case RunLogDialog::Salvage: {
            const std::string to = runlog::salvage_path_for(path.toStdString());
            try {
                const runlog::SalvageReport rep = runlog::salvage_log(path.toStdString(), to);
                const QString q = QString::fromStdString(to);
                if (!recorder.open(q, &err)) throw std::runtime_error(err.toStdString());
                r.logging = true;
                r.path = q;
                r.remember = true;
                r.notice = RunLogDialog::tr(
                               "Salvaged %1 responses into %2; new responses are "
                               "logged there. %3 was not changed.")
                               .arg(rep.responses)
                               .arg(q, path);
                if (rep.unreadable_responses > 0)
                    r.notice += " " + RunLogDialog::tr(
                                          "Up to %1 responses on damaged pages "
                                          "could not be read.")
                                          .arg(rep.unreadable_responses);
            } catch (const std::exception& e) {
                r.notice = RunLogDialog::tr("Salvage failed, responses are not logged: %1")
                               .arg(QString::fromUtf8(e.what()));
            }
            return r;
        }
        case RunLogDialog::NewLog: {
            const QString q = new_path ? new_path() : QString();
            if (q.isEmpty()) {
                r.notice = RunLogDialog::tr("Responses are not logged this session.");
                return r;
            }
            if (recorder.open(q, &err)) {
                r.logging = true;
                r.path = q;
                r.remember = true;
                r.notice = RunLogDialog::tr("New responses are logged to %1.").arg(q);
            } else {
                r.notice = RunLogDialog::tr("Responses are not logged: %1").arg(err);
            }
            return r;
        }
        case RunLogDialog::NoLog:
            break;
    }
    r.notice = RunLogDialog::tr("Responses are not logged this session.");
    return r;
}

}  // namespace wb::ui
