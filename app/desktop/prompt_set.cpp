#include "desktop/prompt_set.h"

#include <QFile>
#include <exception>
#include <string>

namespace wb::gui {

namespace {

PromptSet from_core(const core::PromptFile& pf, const QString& path) {
    PromptSet s;
    s.path = path;
    s.jsonl = pf.jsonl;
    s.entries = pf.entries;
    for (const core::PromptEntry& e : pf.entries) {
        PromptItem it;
        it.id = QString::fromStdString(e.id);
        it.prompt = QString::fromStdString(core::entry_text(e));
        it.max_tokens = e.max_tokens.value_or(0);
        for (const std::string& st : e.stop) it.stop << QString::fromStdString(st);
        it.line = static_cast<int>(e.line);
        s.items.append(it);
    }
    for (const core::PromptFileError& e : pf.errors)
        s.errors.append({static_cast<int>(e.line), QString::fromStdString(e.problem)});
    for (const core::PromptFileError& w : pf.warnings)
        s.warnings.append({static_cast<int>(w.line), QString::fromStdString(w.problem)});
    return s;
}

}  // namespace

PromptSet PromptSet::parse(const QByteArray& text, const QString& path) {
    return from_core(core::parse_prompt_text(text.toStdString()), path);
}

PromptSet PromptSet::load(const QString& path) {
    if (path.startsWith(':')) {  // a sample set bundled as a Qt resource
        QFile f(path);
        if (f.open(QIODevice::ReadOnly)) return parse(f.readAll(), path);
    }
    // The CLI's reader: regular files of at most 256 MiB (a FIFO would block
    // the GUI thread forever and /dev/zero would fill memory).
    try {
        return from_core(core::read_prompt_file(path.toStdString()), path);
    } catch (const std::exception& e) {
        PromptSet set;
        set.path = path;
        set.errors.append({0, QString::fromUtf8(e.what())});
        return set;
    }
}

}  // namespace wb::gui
