#pragma once
// What Compare's "Run test set…" asks for, in one dialog: the text for
// perplexity (PPL) and KL divergence, the JSONL test set for accuracy, and
// the perplexity window, each with what its format is and what the chosen
// file holds. Both files default to the bundled samples (resources/samples,
// found by paths::find_sample) and the window to the CLI's default
// (compare::CompareOptions::ppl_ctx, 512), so the same run gives the same
// figures from either.

#include <QDialog>

class QLabel;
class QLineEdit;
class QSpinBox;

namespace wb::ui::compare {

class EvalInputsDialog : public QDialog {
    Q_OBJECT
  public:
    explicit EvalInputsDialog(QWidget* parent = nullptr);

    /// Chosen text file; empty = no perplexity / KL divergence.
    QString textFile() const;
    /// Chosen JSONL test set; empty = no accuracy.
    QString testsetFile() const;
    /// Perplexity window in tokens (llama-perplexity -c).
    int perplexityWindow() const;
    void setTextFile(const QString& path);
    void setTestsetFile(const QString& path);
    void setPerplexityWindow(int n_ctx);

    /// The line under the text field: size, words and lines of `path` and
    /// what the window asks of it, "Not part of the run." for an empty path,
    /// or "Cannot read <path>." when it cannot be opened.
    static QString describeText(const QString& path, int window);
    /// The line under the test-set field: "<n> items, ..." or the test
    /// set's own error ("<file>:<line>: <problem>").
    static QString describeTestset(const QString& path);

    QLabel* textInfo() const { return textInfo_; }
    QLabel* testsetInfo() const { return testsetInfo_; }

  private:
    void refresh();

    QLineEdit* text_;
    QLineEdit* testset_;
    QSpinBox* window_;
    QLabel* textInfo_;
    QLabel* testsetInfo_;
};

}  // namespace wb::ui::compare
