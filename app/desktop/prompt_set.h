#pragma once
// A batch prompt set read from a file (or a Qt resource such as the bundled
// sample set) with the one prompt-file parser, core::parse_prompt_text
// (app/core/prompt_file.h), in Qt types for the Batch tab: the tab and
// `workbench-cli batch` read a file the same way (same ids, max_tokens,
// stop strings and errors).

#include <QList>
#include <QString>
#include <QStringList>
#include <vector>

#include "core/prompt_file.h"

namespace wb::gui {

/// One prompt of a set.
struct PromptItem {
    QString id;          ///< "id" from the line, else "line-<N>" (core::PromptEntry::id)
    QString prompt;      ///< the prompt, or a "messages" line's text (core::entry_text)
    int max_tokens = 0;  ///< 0 = use the panel's setting
    QStringList stop;    ///< the line's own stop strings
    int line = 0;        ///< 1-based line number in the file
};

/// A line that could not be used.
struct PromptLineError {
    int line = 0;     ///< 1-based; 0 = the file itself could not be read
    QString message;  ///< e.g. "not valid JSON: ...", "\"prompt\" is missing"
};

/// The parsed file.
struct PromptSet {
    QString path;
    bool jsonl = false;  ///< true when the first non-blank line starts with '{'
    QList<PromptItem> items;
    QList<PromptLineError> errors;
    /// Lines that run with something ignored (core::PromptFile::warnings),
    /// e.g. "unknown key \"temprature\" ignored".
    QList<PromptLineError> warnings;
    /// The entries as parsed (what core::BatchRunner runs).
    std::vector<core::PromptEntry> entries;

    /// Parses `text` with core::parse_prompt_text. Never throws: problems
    /// go to `errors`.
    static PromptSet parse(const QByteArray& text, const QString& path = {});
    /// Reads and parses a file or ":/" resource; a file that cannot be read
    /// gives one error at line 0 naming the path and the reason.
    static PromptSet load(const QString& path);
};

}  // namespace wb::gui
