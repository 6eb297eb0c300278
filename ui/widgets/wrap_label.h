#pragma once
// Labels whose text changes at run time in box, form and splitter layouts.
//
// Word-wrapped QLabels: those layouts size a wrapped label from its
// minimumSizeHint, which QLabel computes for a guessed narrow width (several
// lines too tall in a wide dialog) or from one line (text drawn over its
// neighbours in a squeezed pane). fit_wrapped_height pins the label's
// minimum height to what its text needs at its real width.
//
// One-line labels: a plain QLabel's minimum width is its whole text, so a
// long model name or status pushes the window wider than the screen.
// ElideLabel draws its text cut with "…" to the width it gets instead.

#include <QLabel>

namespace wb::ui {

/// Keeps `label`'s minimum height equal to its heightForWidth at its
/// current width, now and on every resize (an event filter owned by the
/// label). Call it again after setText(): a new text at the same width
/// sends no resize. Does nothing for a null label.
void fit_wrapped_height(QLabel* label);

/// A one-line plain-text label that never asks for more width than a few
/// characters: when narrower than its text it draws the text cut with "…"
/// (Qt::ElideRight) and its tooltip shows the whole text (followed by the
/// tooltip set on it, if any). text() stays the whole text; setText() is
/// QLabel's own. Its sizeHint is still the whole text, so layouts give it
/// room when there is some. Rich text is drawn by QLabel as is (not cut).
class ElideLabel : public QLabel {
    Q_OBJECT
  public:
    explicit ElideLabel(const QString& text = {}, QWidget* parent = nullptr);
    /// Width (px) of "xxxx…" in the label's font plus its margins, by the
    /// whole text's height.
    QSize minimumSizeHint() const override;
    /// True when the text is wider than the label (it is drawn cut).
    bool isElided() const;
    /// The text as drawn: the whole text, or its start and "…".
    QString shownText() const;

  protected:
    void paintEvent(QPaintEvent* e) override;
    bool event(QEvent* e) override;

  private:
    QRect textRect() const;
};

}  // namespace wb::ui
