#include "desktop/remote_target.h"

#include <qt6keychain/keychain.h>

#include <QEventLoop>
#include <QSettings>
#include <QUrl>

namespace wb::gui {

QString RemoteTarget::label() const {
    const QUrl u(base_url);
    QString where = u.host();
    if (u.port() > 0) where += QStringLiteral(":%1").arg(u.port());
    where += u.path();
    if (where.isEmpty()) where = base_url;
    return (model.isEmpty() ? QStringLiteral("(default model)") : model) + QStringLiteral(" @ ") +
           where;
}

QList<RemoteTarget> read_remote_targets(QSettings& s) {
    QList<RemoteTarget> out;
    const int n = s.beginReadArray(QStringLiteral("remote_targets"));
    for (int i = 0; i < n; ++i) {
        s.setArrayIndex(i);
        RemoteTarget t;
        t.base_url = s.value(QStringLiteral("base_url")).toString().trimmed();
        t.model = s.value(QStringLiteral("model")).toString();
        t.has_key = s.value(QStringLiteral("has_key"), false).toBool();
        if (!t.base_url.isEmpty()) out.append(t);
    }
    s.endArray();
    return out;
}

void write_remote_targets(QSettings& s, const QList<RemoteTarget>& targets) {
    s.remove(QStringLiteral("remote_targets"));
    s.beginWriteArray(QStringLiteral("remote_targets"), static_cast<int>(targets.size()));
    for (int i = 0; i < targets.size(); ++i) {
        s.setArrayIndex(i);
        s.setValue(QStringLiteral("base_url"), targets[i].base_url);
        s.setValue(QStringLiteral("model"), targets[i].model);
        s.setValue(QStringLiteral("has_key"), targets[i].has_key);
    }
    s.endArray();
}

QString key_account(const QString& base_url) {
    QString a = base_url.trimmed();
    while (a.endsWith('/')) a.chop(1);
    if (a.endsWith(QStringLiteral("/v1"))) a.chop(3);
    while (a.endsWith('/')) a.chop(1);
    return a;
}

namespace {

// Runs `job` to its end in a local event loop; returns its error text, ""
// when it succeeded.
QString run(QKeychain::Job& job) {
    job.setAutoDelete(false);
    QEventLoop loop;
    QObject::connect(&job, &QKeychain::Job::finished, &loop, &QEventLoop::quit);
    job.start();
    loop.exec();
    return job.error() == QKeychain::NoError ? QString() : job.errorString();
}

}  // namespace

QString KeyStore::write(const QString& account, const QString& key) const {
    QKeychain::WritePasswordJob job(service_);
    job.setInsecureFallback(false);
    job.setKey(account);
    job.setTextData(key);
    const QString err = run(job);
    return err.isEmpty()
               ? err
               : QStringLiteral("the desktop's secret store did not take the key: %1").arg(err);
}

std::optional<QString> KeyStore::read(const QString& account, QString* error) const {
    if (error) error->clear();
    QKeychain::ReadPasswordJob job(service_);
    job.setInsecureFallback(false);
    job.setKey(account);
    const QString err = run(job);
    if (job.error() == QKeychain::EntryNotFound) return std::nullopt;
    if (!err.isEmpty()) {
        if (error)
            *error = QStringLiteral("the desktop's secret store could not be read: %1").arg(err);
        return std::nullopt;
    }
    return job.textData();
}

QString KeyStore::remove(const QString& account) const {
    QKeychain::DeletePasswordJob job(service_);
    job.setInsecureFallback(false);
    job.setKey(account);
    const QString err = run(job);
    if (job.error() == QKeychain::EntryNotFound) return {};
    return err.isEmpty()
               ? err
               : QStringLiteral("the desktop's secret store did not delete the key: %1").arg(err);
}

load::Target to_load_target(const RemoteTarget& target, const QString& api_key, load::Api api,
                            double timeout_s) {
    load::Target t;
    t.base_url = target.base_url.toStdString();
    t.model = target.model.toStdString();
    t.api_key = api_key.toStdString();
    t.api = api;
    t.timeout_s = timeout_s;
    return t;
}

}  // namespace wb::gui
