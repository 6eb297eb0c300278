#pragma once
// A batch prompt set read from a file: JSON Lines ({"prompt": ..., "id": ...,
// "max_tokens": ...} per line, the same format as `workbench-cli batch`) or
// plain text, one prompt per line. Malformed lines are collected with their
// line numbers so the batch panel can list them before a run starts.

#include <QList>
#include <QString>

namespace wb::gui {

/// One prompt of a set.
struct PromptItem {
    QString id;  ///< "id" from the line, else "p<line>"
    QString prompt;
    int max_tokens = 0;  ///< 0 = use the panel's setting
    int line = 0;        ///< 1-based line number in the file
};

/// A line that could not be used.
struct PromptLineError {
    int line = 0;     ///< 1-based
    QString message;  ///< e.g. "invalid JSON: unterminated string (column 14)"
};

/// The parsed file.
struct PromptSet {
    QString path;
    bool jsonl = false;  ///< true when the first non-blank line starts with '{'
    QList<PromptItem> items;
    QList<PromptLineError> errors;

    /// Parses `text`. Blank lines are skipped. In JSONL mode every line
    /// must be an object with a non-empty string "prompt"; "max_tokens",
    /// when present, a positive integer; "id" a string or integer. Never
    /// throws: problems go to `errors`.
    static PromptSet parse(const QByteArray& text, const QString& path = {});
    /// Reads and parses a file; a file that cannot be read gives one error
    /// at line 0 naming the path and the reason.
    static PromptSet load(const QString& path);
};

}  // namespace wb::gui
