#include "desktop/settings_store.h"

#include <QJsonDocument>
#include <algorithm>

namespace wb::gui {

SettingsStore::SettingsStore(const QString& ini_path)
    : s_(ini_path.isEmpty() ? std::make_unique<QSettings>(QStringLiteral("inference-workbench"),
                                                          QStringLiteral("workbench"))
                            : std::make_unique<QSettings>(ini_path, QSettings::IniFormat)) {}

GenSettings SettingsStore::gen() const {
    const QByteArray json = s_->value("generation/settings").toByteArray();
    return GenSettings::fromJson(QJsonDocument::fromJson(json).object());
}

void SettingsStore::setGen(const GenSettings& s) {
    s_->setValue("generation/settings", QJsonDocument(s.toJson()).toJson(QJsonDocument::Compact));
}

QStringList SettingsStore::recentModels() const {
    return s_->value("models/recent").toStringList();
}

void SettingsStore::addRecentModel(const QString& path) {
    QStringList l = recentModels();
    l.removeAll(path);
    l.prepend(path);
    while (l.size() > kMaxRecent) l.removeLast();
    s_->setValue("models/recent", l);
}

void SettingsStore::removeRecentModel(const QString& path) {
    QStringList l = recentModels();
    l.removeAll(path);
    s_->setValue("models/recent", l);
}

QString SettingsStore::backend() const {
    return s_->value("engine/backend").toString();
}
void SettingsStore::setBackend(const QString& b) {
    s_->setValue("engine/backend", b);
}
QString SettingsStore::runLogPath() const {
    return s_->value("runlog/path").toString();
}

void SettingsStore::setRunLogPath(const QString& path) {
    s_->setValue("runlog/path", path);
}

int SettingsStore::textRetentionDays() const {
    // A hand-edited bad value keeps the text (as the log's own setting does).
    return std::max(0, s_->value("runlog/text_retention_days", 0).toInt());
}

void SettingsStore::setTextRetentionDays(int days) {
    s_->setValue("runlog/text_retention_days", std::max(0, days));
}

bool SettingsStore::noText() const {
    return s_->value("runlog/no_text", false).toBool();
}

void SettingsStore::setNoText(bool on) {
    s_->setValue("runlog/no_text", on);
}

namespace {

// One settings group per model file name; '/' would open a sub-group.
QString chat_key(const QString& model, const char* field) {
    return QStringLiteral("chat/%1/%2").arg(QString(model).replace('/', '_'), QLatin1String(field));
}

}  // namespace

QString SettingsStore::chatSystemPrompt(const QString& model) const {
    return s_->value(chat_key(model, "system_prompt")).toString();
}

void SettingsStore::setChatSystemPrompt(const QString& model, const QString& text) {
    if (text.isEmpty())
        s_->remove(chat_key(model, "system_prompt"));
    else
        s_->setValue(chat_key(model, "system_prompt"), text);
}

QString SettingsStore::chatTemplate(const QString& model) const {
    return s_->value(chat_key(model, "template")).toString();
}

void SettingsStore::setChatTemplate(const QString& model, const QString& choice) {
    s_->setValue(chat_key(model, "template"), choice);
}

SettingsStore::ChatDraft SettingsStore::chatDraft() const {
    ChatDraft d;
    const QString kind = s_->value("chat/draft", d.kind).toString();
    // An unknown value (a hand-edited file, a later version) means none.
    if (kind == "ngram" || kind == "model") d.kind = kind;
    d.k = std::clamp(s_->value("chat/draftK", d.k).toInt(), 1, 64);
    d.file = s_->value("chat/draftFile").toString();
    if (d.kind == "model" && d.file.isEmpty()) d.kind = "none";
    return d;
}

void SettingsStore::setChatDraft(const ChatDraft& d) {
    s_->setValue("chat/draft", d.kind);
    s_->setValue("chat/draftK", d.k);
    s_->setValue("chat/draftFile", d.file);
}

QString SettingsStore::device() const {
    return s_->value("engine/device").toString();
}
void SettingsStore::setDevice(const QString& d) {
    s_->setValue("engine/device", d);
}

QByteArray SettingsStore::windowGeometry() const {
    return s_->value("window/geometry").toByteArray();
}
QByteArray SettingsStore::windowState() const {
    return s_->value("window/state").toByteArray();
}
void SettingsStore::setWindow(const QByteArray& geometry, const QByteArray& state) {
    s_->setValue("window/geometry", geometry);
    s_->setValue("window/state", state);
}
QByteArray SettingsStore::splitterState() const {
    return s_->value("window/splitter").toByteArray();
}
void SettingsStore::setSplitterState(const QByteArray& s) {
    s_->setValue("window/splitter", s);
}

bool SettingsStore::firstStart() const {
    return !s_->value("app/started", false).toBool();
}
void SettingsStore::setStarted() {
    s_->setValue("app/started", true);
}

}  // namespace wb::gui
