#pragma once
// Runs a program to completion for CLI tests: exit code plus captured
// stdout/stderr. A run past `timeout_ms` is killed and reported with code
// -1 and err "timed out"; a crash also gives code -1.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace wbtest {

struct ProcessResult {
    int code = -1;
    QByteArray out, err;
};

inline ProcessResult run_process(const QString& program, const QStringList& args,
                                 int timeout_ms = 300000) {
    QProcess p;
    p.start(program, args);
    ProcessResult r;
    if (!p.waitForFinished(timeout_ms)) {
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

}  // namespace wbtest
