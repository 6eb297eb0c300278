#pragma once
// "Compare environments" of the History tab: two runs' runlog::RunDiff
// (runlog/run_diff.h, the one `workbench-cli diff` prints) as a table of
// the differing tags (field, A, B, changes outputs; those that change
// outputs first and in bold) and the prompts both runs answered. Shows the
// diff only; computing it is runlog::diff_runs's job.

#include <QDialog>

#include "runlog/run_diff.h"

class QLabel;
class QTableWidget;

namespace wb::ui {

class RunDiffDialog : public QDialog {
    Q_OBJECT
  public:
    explicit RunDiffDialog(const runlog::RunDiff& diff, QWidget* parent = nullptr);

    /// The differing tags: one row per runlog::FieldDiff, in its order;
    /// columns "Field" ("<group>: <label>"), "A", "B", "Changes outputs"
    /// ("yes" or "").
    QTableWidget* fieldsTable() const { return fields_; }
    /// The prompt comparison as text: matched pairs, identical share, the
    /// first divergences, TTFT and end-to-end deltas (B - A, ms).
    QString promptSummary() const;

  private:
    QTableWidget* fields_;
    QLabel* prompts_;
};

}  // namespace wb::ui
