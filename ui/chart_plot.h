#pragma once
// The live charts' plot (QCustomPlot): a bold title that wraps at spaces, a
// legend in a row under the axes that wraps into as many columns as fit,
// an x axis in s, and a small minimum size so several fit a small screen.
// Shared by the Chat/Batch live charts and the Server tab's charts.

#include <QString>

class QCustomPlot;
class QWidget;

namespace wb::ui {

/// A new chart titled `title` (parent `parent`), with no graphs yet; the
/// caller adds them (QCustomPlot::addGraph) and replots.
QCustomPlot* make_chart_plot(const QString& title, QWidget* parent);

/// Sets the title of a chart make_chart_plot() built (wrapped to its
/// width); other plots are left alone.
void set_chart_title(QCustomPlot* plot, const QString& title);

}  // namespace wb::ui
