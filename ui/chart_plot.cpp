#include "ui/chart_plot.h"

#include <qcustomplot.h>

#include <QResizeEvent>
#include <algorithm>

namespace wb::ui {

namespace {

// Smallest chart (px): five of them fit beside the tabs in a 1366x768 window.
constexpr int kMinPlotWidth = 160;
constexpr int kMinPlotHeight = 100;

// A chart whose legend wraps into as many columns as fit its width, so the
// legend's items never run past the chart or over each other, whose title
// wraps at spaces instead of being cut at both ends, and whose minimum size
// does not depend on the legend's current columns (the window could
// otherwise not be made narrower than a wide legend's row).
class ChartPlot : public QCustomPlot {
  public:
    using QCustomPlot::QCustomPlot;
    QSize minimumSizeHint() const override { return {kMinPlotWidth, kMinPlotHeight}; }
    // Sets the title (the text element in the layout's first row).
    void setTitle(const QString& text) {
        title_ = text;
        fitTitle(width());
    }

  protected:
    void resizeEvent(QResizeEvent* e) override {
        fitLegend(e->size().width());
        fitTitle(e->size().width());
        QCustomPlot::resizeEvent(e);
    }

  private:
    // The title in as many lines as `width` needs, broken at spaces.
    void fitTitle(int width) {
        auto* title = qobject_cast<QCPTextElement*>(plotLayout()->element(0, 0));
        if (!title) return;
        const QFontMetrics fm(title->font());
        const int avail = std::max(40, width - 8);
        QStringList lines;
        for (const QString& word : title_.split(' ', Qt::SkipEmptyParts)) {
            if (!lines.isEmpty() &&
                fm.horizontalAdvance(lines.last() + QLatin1Char(' ') + word) <= avail)
                lines.last() += QLatin1Char(' ') + word;
            else
                lines << word;
        }
        title->setText(lines.join(QLatin1Char('\n')));
    }
    QString title_;

    // The most columns (items filled row by row) whose widths fit `width`.
    void fitLegend(int width) {
        QCPLegend* lg = legend;
        // The entries in order (itemCount() counts the grid's empty cells).
        QList<int> widths;
        for (int i = 0; i < lg->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = lg->item(i))
                widths << item->minimumOuterSizeHint().width();
        const int n = static_cast<int>(widths.size());
        if (n == 0) return;
        const QMargins m = lg->margins();
        const int avail = width - m.left() - m.right();
        int cols = n;
        for (; cols > 1; --cols) {
            int total = (cols - 1) * lg->columnSpacing();
            for (int c = 0; c < cols; ++c) {
                int w = 0;
                for (int i = c; i < n; i += cols) w = std::max(w, widths[i]);
                total += w;
            }
            if (total <= avail) break;
        }
        if (cols == lg->wrap() && lg->columnCount() == std::min(cols, n)) return;
        lg->setWrap(cols);
        lg->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
};

}  // namespace

QCustomPlot* make_chart_plot(const QString& title_text, QWidget* parent) {
    auto* p = new ChartPlot(parent);
    p->setMinimumHeight(kMinPlotHeight);
    p->setNoAntialiasingOnDrag(true);
    p->plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(p, title_text, QFont(p->font().family(), 9, QFont::Bold));
    p->plotLayout()->addElement(0, 0, title);
    p->setTitle(title_text);
    p->xAxis->setLabel("s");
    // Legend in a row under the axes, wrapped into as many columns as fit
    // (ChartPlot), so it never hides the lines.
    p->legend->setVisible(true);
    QFont lf = p->font();
    lf.setPointSize(7);
    p->legend->setFont(lf);
    p->legend->setBorderPen(Qt::NoPen);
    // Small icons instead of rows packed by a negative spacing (their
    // entries ran over each other).
    p->legend->setIconSize(18, 8);
    p->legend->setRowSpacing(0);
    p->legend->setColumnSpacing(6);
    p->axisRect()->insetLayout()->take(p->legend);
    p->plotLayout()->addElement(2, 0, p->legend);
    p->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    p->legend->setWrap(3);
    p->legend->setMargins(QMargins(4, 0, 4, 2));
    p->plotLayout()->setRowStretchFactor(2, 0.001);
    p->plotLayout()->setRowSpacing(0);
    return p;
}

void set_chart_title(QCustomPlot* plot, const QString& title) {
    if (auto* p = dynamic_cast<ChartPlot*>(plot)) p->setTitle(title);
}

}  // namespace wb::ui
