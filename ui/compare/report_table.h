#pragma once
// The Compare tab's figures table: one column per model (A = reference),
// one row per figure of wb::compare::CompareReport (app/compare/compare.h):
// sizes and device memory (bytes), load time (ms), prefill/decode tokens/s,
// TTFT and end-to-end time (ms), each the median (min-max) of the timed
// passes (compare::speed_method), token agreement with A, and, when a
// text / test set was run, perplexity (llama.cpp's chunked rule), KL
// divergence from A (nats) with top-1 agreement, and test-set accuracy.

#include <QTableWidget>

namespace wb::compare {
struct CompareReport;
}

namespace wb::ui::compare {

class ReportTable : public QTableWidget {
    Q_OBJECT
  public:
    explicit ReportTable(QWidget* parent = nullptr);

    /// Replaces the table's contents with `r`'s figures.
    void setReport(const wb::compare::CompareReport& r);

    /// Row index of the figure named `name` (first column header text), -1 if absent.
    int rowOf(const QString& name) const;

    /// Widest the figure-name column gets (px): longer names wrap onto
    /// more lines (or are elided), the full name is the cell's tooltip.
    int labelColumnCap() const;
};

}  // namespace wb::ui::compare
