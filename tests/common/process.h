#pragma once
// Runs a program to completion for CLI tests: exit code plus captured
// stdout/stderr. A run past `timeout_ms` is killed and reported with code
// -1 and err "timed out"; a crash also gives code -1.

#include <QByteArray>
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace wbtest {

struct ProcessResult {
    int code = -1;
    QByteArray out, err;
};

/// Runs `program` with `args`, writes `input` to its stdin and closes it,
/// and waits up to `timeout_ms`. `env`: the environment it runs in (default
/// this process's).
inline ProcessResult run_process(
    const QString& program, const QStringList& args, int timeout_ms = 300000,
    const QByteArray& input = {},
    const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(program, args);
    ProcessResult r;
    if (p.waitForStarted(30000)) {
        if (!input.isEmpty()) p.write(input);
        p.closeWriteChannel();
    }
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
