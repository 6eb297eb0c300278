#pragma once
// Word-wrapped QLabels in box, form and splitter layouts: those layouts size
// a wrapped label from its minimumSizeHint, which QLabel computes for a
// guessed narrow width (several lines too tall in a wide dialog) or from one
// line (text drawn over its neighbours in a squeezed pane). fit_wrapped_height
// pins the label's minimum height to what its text needs at its real width.

class QLabel;

namespace wb::ui {

/// Keeps `label`'s minimum height equal to its heightForWidth at its
/// current width, now and on every resize (an event filter owned by the
/// label). Call it again after setText(): a new text at the same width
/// sends no resize. Does nothing for a null label.
void fit_wrapped_height(QLabel* label);

}  // namespace wb::ui
