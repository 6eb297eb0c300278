#include "prompt_set.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <exception>
#include <string>

#include "text_file.h"

namespace wb::gui {

namespace {

// Fills `item` from one JSONL line or returns the reason it is unusable.
QString parse_json_line(const QByteArray& line, PromptItem& item) {
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(line, &err);
    if (err.error != QJsonParseError::NoError)
        return QStringLiteral("invalid JSON: %1 (column %2)")
            .arg(err.errorString())
            .arg(err.offset + 1);
    if (!doc.isObject()) return QStringLiteral("expected a JSON object with a \"prompt\" field");
    const QJsonObject o = doc.object();
    const QJsonValue p = o.value("prompt");
    if (p.isUndefined()) return QStringLiteral("missing field \"prompt\"");
    if (!p.isString()) return QStringLiteral("\"prompt\" must be a string");
    if (p.toString().isEmpty()) return QStringLiteral("\"prompt\" is empty");
    item.prompt = p.toString();
    const QJsonValue mt = o.value("max_tokens");
    if (!mt.isUndefined()) {
        const double v = mt.toDouble(-1);
        if (!mt.isDouble() || v < 1 || v != static_cast<double>(static_cast<int>(v)))
            return QStringLiteral("\"max_tokens\" must be a positive integer");
        item.max_tokens = static_cast<int>(v);
    }
    const QJsonValue id = o.value("id");
    if (id.isString()) {
        item.id = id.toString();
    } else if (id.isDouble()) {
        item.id = QString::number(static_cast<qint64>(id.toDouble()));
    } else if (!id.isUndefined() && !id.isNull()) {
        return QStringLiteral("\"id\" must be a string or an integer");
    }
    return {};
}

}  // namespace

PromptSet PromptSet::parse(const QByteArray& text, const QString& path) {
    PromptSet set;
    set.path = path;
    const QList<QByteArray> lines = text.split('\n');
    bool mode_known = false;
    for (int i = 0; i < lines.size(); ++i) {
        QByteArray line = lines[i];
        if (line.endsWith('\r')) line.chop(1);
        if (line.trimmed().isEmpty()) continue;
        if (!mode_known) {
            set.jsonl = line.trimmed().startsWith('{');
            mode_known = true;
        }
        PromptItem item;
        item.line = i + 1;
        if (set.jsonl) {
            const QString why = parse_json_line(line, item);
            if (!why.isEmpty()) {
                set.errors.append({i + 1, why});
                continue;
            }
        } else {
            item.prompt = QString::fromUtf8(line);
        }
        if (item.id.isEmpty()) item.id = QStringLiteral("p%1").arg(i + 1);
        set.items.append(item);
    }
    return set;
}

PromptSet PromptSet::load(const QString& path) {
    if (path.startsWith(':')) {  // a sample set bundled as a Qt resource
        QFile f(path);
        if (f.open(QIODevice::ReadOnly)) return parse(f.readAll(), path);
    }
    // Regular files of at most 256 MiB: a FIFO would block the GUI thread
    // forever and /dev/zero would fill memory (wb::read_input_file).
    try {
        const std::string text = read_input_file(path.toStdString(), "prompts file");
        return parse(QByteArray::fromStdString(text), path);
    } catch (const std::exception& e) {
        PromptSet set;
        set.path = path;
        set.errors.append({0, QString::fromUtf8(e.what())});
        return set;
    }
}

}  // namespace wb::gui
