#include "ui/compare/token_diff_view.h"

#include <QTextBlockFormat>
#include <QTextCharFormat>
#include <QTextCursor>
#include <algorithm>

namespace wb::ui::compare {

namespace {

// Whitespace and newlines made visible so a token that is only " " or "\n"
// can still be seen and hovered.
QString visible(const QString& piece) {
    QString s = piece;
    s.replace(QLatin1Char('\n'), QStringLiteral("⏎"));
    if (s.isEmpty()) s = QStringLiteral("∅");
    return s;
}

}  // namespace

TokenDiffView::TokenDiffView(QWidget* parent) : QTextEdit(parent) {
    setReadOnly(true);
    setObjectName("tokenDiff");
    setPlaceholderText(tr("Per-token view: run a prompt on two or more models."));
}

void TokenDiffView::setRows(const std::vector<TokenRow>& rows) {
    clear();
    diffs_.assign(rows.size(), {});
    if (rows.size() < 2) return;
    const TokenRow& a = rows[0];
    QTextCursor c(document());
    QTextCharFormat plain;
    QTextCharFormat bold;
    bold.setFontWeight(QFont::Bold);
    QTextCharFormat sep;  // thin separator between tokens so boundaries show
    sep.setForeground(QColor(160, 160, 160));
    for (size_t r = 1; r < rows.size(); ++r) {
        const TokenRow& b = rows[r];
        if (r > 1) c.insertBlock();
        // A model that failed has no tokens; its error is in its pane (it
        // was reported as "different vocabulary" before).
        if (!a.error.isEmpty() || !b.error.isEmpty()) {
            c.insertText(!b.error.isEmpty()
                             ? tr("%1 vs A: %1 gave no reply (see its pane)").arg(b.label)
                             : tr("%1 vs A: A gave no reply (see its pane)").arg(b.label),
                         bold);
            continue;
        }
        if (!b.same_vocab) {
            c.insertText(
                tr("%1 vs A: different vocabulary, token ids cannot be compared").arg(b.label),
                bold);
            c.insertBlock();
            c.insertText(b.pieces.join(QString()), plain);
            continue;
        }
        std::vector<size_t>& d = diffs_[r];
        const size_t n = std::max(a.tokens.size(), b.tokens.size());
        for (size_t i = 0; i < n; ++i) {
            const bool in_a = i < a.tokens.size(), in_b = i < b.tokens.size();
            if (!in_a || !in_b || a.tokens[i] != b.tokens[i]) d.push_back(i);
        }
        const QString head =
            d.empty() ? tr("%1 vs A: all %2 tokens equal").arg(b.label).arg(b.tokens.size())
                      : tr("%1 vs A: %2 of %3 tokens differ, first split at step %4")
                            .arg(b.label)
                            .arg(d.size())
                            .arg(n)
                            .arg(d.front());
        c.insertText(head, bold);
        c.insertBlock();
        size_t next = 0;  // index into d
        for (size_t i = 0; i < b.tokens.size(); ++i) {
            QTextCharFormat f;
            const bool differs = next < d.size() && d[next] == i;
            if (differs) {
                ++next;
                f.setBackground(diffColor());
                f.setToolTip(i < a.tokens.size()
                                 ? tr("step %1: A has '%2' (id %3), %4 has '%5' (id %6)")
                                       .arg(i)
                                       .arg(a.pieces.value(static_cast<qsizetype>(i)))
                                       .arg(a.tokens[i])
                                       .arg(b.label)
                                       .arg(b.pieces.value(static_cast<qsizetype>(i)))
                                       .arg(b.tokens[i])
                                 : tr("step %1: A ended before this token").arg(i));
            } else {
                f.setToolTip(tr("step %1: same as A (id %2)").arg(i).arg(b.tokens[i]));
            }
            c.insertText(visible(b.pieces.value(static_cast<qsizetype>(i))), f);
            c.insertText(QStringLiteral("|"), sep);
        }
    }
}

std::vector<size_t> TokenDiffView::diffPositions(size_t row) const {
    return row < diffs_.size() ? diffs_[row] : std::vector<size_t>{};
}

}  // namespace wb::ui::compare
