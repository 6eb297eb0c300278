#pragma once
// Per-token view of the Compare tab: for each variant B, C... its greedy
// tokens, position by position against the reference A's. A token whose id
// differs from A's at the same step is highlighted and its tooltip names
// A's token there; the heading says how many differ and the first split
// step (counting from 0, as first_divergence() in app/compare).

#include <QString>
#include <QStringList>
#include <QTextEdit>
#include <cstdint>
#include <vector>

namespace wb::ui::compare {

/// One model's streamed reply as the view needs it.
struct TokenRow {
    QString label;                ///< "A", "B", ...
    std::vector<int32_t> tokens;  ///< [n] greedy ids
    QStringList pieces;           ///< [n] text of each id
    bool same_vocab = true;       ///< vocabulary identical to A's (ids comparable)
    QString error;                ///< why this model gave no reply (load or run failed); "" = ok
};

class TokenDiffView : public QTextEdit {
    Q_OBJECT
  public:
    /// Background of a token that differs from A's.
    static QColor diffColor() { return QColor(255, 196, 120); }

    explicit TokenDiffView(QWidget* parent = nullptr);

    /// Shows rows[1..] against rows[0] (A). Fewer than two rows clears the view.
    void setRows(const std::vector<TokenRow>& rows);

    /// Steps where variant `row` (1-based index into the rows given) has a
    /// different id from A; empty for row 0, unknown rows or another vocabulary.
    std::vector<size_t> diffPositions(size_t row) const;

  private:
    std::vector<std::vector<size_t>> diffs_;  // [n_rows][n_differing] steps
};

}  // namespace wb::ui::compare
