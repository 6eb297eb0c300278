#include "ui/load_charts.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/chart_plot.h"

namespace wb::ui {

namespace {

QCPGraph* add_graph(QCustomPlot* p, const QString& name, const QColor& color, bool dashed = false,
                    bool right = false) {
    QCPGraph* g = right ? p->addGraph(p->xAxis, p->yAxis2) : p->addGraph();
    g->setName(name);
    QPen pen(color, dashed ? 1.2 : 1.8);
    if (dashed) pen.setStyle(Qt::DashLine);
    g->setPen(pen);
    if (!dashed) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
    return g;
}

void add_point(QCPGraph* g, double x, double y) {
    if (std::isfinite(x) && std::isfinite(y)) g->addData(x, y);
}

// A vertical dotted line at x (the best rate).
void mark_x(QCustomPlot* p, double x) {
    auto* line = new QCPItemStraightLine(p);
    line->point1->setCoords(x, 0);
    line->point2->setCoords(x, 1);
    line->setPen(QPen(QColor(0, 140, 0), 1.5, Qt::DotLine));
}

}  // namespace

double chart_rate(const load::StepStats& s) {
    return s.offered_rate ? *s.offered_rate : s.request_throughput;
}

LoadCharts::LoadCharts(QWidget* parent) : QWidget(parent) {
    // One above the other: each gets the tab's width, so the legends and
    // the axis labels stay whole on a small screen.
    auto* h = new QVBoxLayout(this);
    h->setContentsMargins(0, 0, 0, 0);
    latency_ = make_chart_plot(tr("Latency against offered rate (ms)"), this);
    throughput_ = make_chart_plot(tr("Throughput and goodput against offered rate"), this);
    for (QCustomPlot* p : {latency_, throughput_}) {
        p->xAxis->setLabel(tr("offered rate (requests/s)"));
        p->setMinimumHeight(240);
        h->addWidget(p, 1);
    }
    scheduler_ = make_chart_plot(tr("Scheduler over the test (the target's forward passes)"), this);
    scheduler_->xAxis->setLabel(tr("time since the first pass (s)"));
    scheduler_->yAxis->setLabel(tr("sequences"));
    scheduler_->yAxis2->setVisible(true);
    scheduler_->yAxis2->setLabel(tr("KV blocks used"));
    scheduler_->setMinimumHeight(240);
    scheduler_->setVisible(false);  // until a target reports telemetry
    h->addWidget(scheduler_, 1);
    // Latency spans orders of magnitude past saturation (and the SLO lines
    // may lie far above it): a log axis keeps every curve readable.
    latency_->yAxis->setLabel(tr("ms (log scale)"));
    latency_->yAxis->setScaleType(QCPAxis::stLogarithmic);
    latency_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    throughput_->yAxis->setLabel(tr("requests/s"));
    throughput_->yAxis2->setVisible(true);
    throughput_->yAxis2->setLabel(tr("output tokens/s"));
    clear();
}

void LoadCharts::clear() {
    for (QCustomPlot* p : {latency_, throughput_}) {
        p->clearGraphs();
        p->clearItems();
    }
    add_graph(latency_, tr("TTFT p50"), QColor(70, 130, 180));
    add_graph(latency_, tr("TTFT p99"), QColor(0, 70, 140));
    add_graph(latency_, tr("ITL p99"), QColor(200, 120, 0));
    add_graph(latency_, tr("e2e p99"), QColor(150, 0, 150));
    add_graph(throughput_, tr("requests/s"), QColor(0, 70, 140));
    add_graph(throughput_, tr("goodput"), QColor(0, 140, 0));
    add_graph(throughput_, tr("output tokens/s"), QColor(200, 120, 0), false, true);
    bestMark_.clear();
    for (QCustomPlot* p : {latency_, throughput_}) p->replot();
}

void LoadCharts::setSteps(const std::vector<load::SweepStep>& steps, int best,
                          const load::Slo& slo) {
    clear();
    double lo = INFINITY;
    double hi = -INFINITY;
    for (const load::SweepStep& st : steps) {
        const load::StepStats& s = st.stats;
        const double x = chart_rate(s);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        add_point(latency_->graph(0), x, s.ttft.p50);
        add_point(latency_->graph(1), x, s.ttft.p99);
        add_point(latency_->graph(2), x, s.itl.p99);
        add_point(latency_->graph(3), x, s.e2e.p99);
        add_point(throughput_->graph(0), x, s.request_throughput);
        add_point(throughput_->graph(1), x, s.goodput);
        add_point(throughput_->graph(2), x, s.output_throughput);
    }
    // The queue wait the target reports (our server does): how much of
    // TTFT is waiting for a slot. Shown only when reported; a log axis has
    // no place for 0, so a wait of 0 ms is left out.
    if (std::any_of(steps.begin(), steps.end(),
                    [](const load::SweepStep& st) { return st.stats.queue_wait.count > 0; })) {
        QCPGraph* g = add_graph(latency_, tr("queue wait p99"), QColor(120, 120, 120));
        for (const load::SweepStep& st : steps) {
            if (st.stats.queue_wait.p99 > 0)
                add_point(g, chart_rate(st.stats), st.stats.queue_wait.p99);
        }
    }
    // Each SLO given: a dashed line across the rates measured.
    const std::pair<QString, std::optional<double>> limits[] = {
        {tr("SLO TTFT p99"), slo.ttft_p99_ms},
        {tr("SLO ITL p99"), slo.itl_p99_ms},
        {tr("SLO e2e p99"), slo.e2e_p99_ms}};
    const QColor colors[] = {QColor(0, 70, 140), QColor(200, 120, 0), QColor(150, 0, 150)};
    for (size_t i = 0; i < std::size(limits); ++i) {
        if (!limits[i].second || !std::isfinite(lo)) continue;
        QCPGraph* g = add_graph(latency_, limits[i].first, colors[i], true);
        g->addData(lo, *limits[i].second);
        g->addData(hi, *limits[i].second);
    }
    if (best >= 0 && static_cast<size_t>(best) < steps.size()) {
        const load::StepStats& s = steps[static_cast<size_t>(best)].stats;
        const double x = chart_rate(s);
        mark_x(latency_, x);
        mark_x(throughput_, x);
        bestMark_ = tr("best within SLOs: %1 requests/s").arg(s.request_throughput, 0, 'f', 2);
        // Named in the plot's top left corner, where it never runs off the plot.
        auto* text = new QCPItemText(throughput_);
        text->position->setType(QCPItemPosition::ptAxisRectRatio);
        text->position->setCoords(0.02, 0.02);
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        text->setBrush(QBrush(QColor(255, 255, 255, 210)));
        text->setText(bestMark_);
        text->setColor(QColor(0, 110, 0));
        QFont f = font();
        f.setPointSize(8);
        text->setFont(f);
    }
    rescale();
}

void LoadCharts::rescale() {
    for (QCustomPlot* p : {latency_, throughput_}) {
        p->rescaleAxes();
        p->xAxis->scaleRange(1.1, p->xAxis->range().center());
    }
    // Latency: some room below and above the curves and SLO lines.
    const QCPRange ly = latency_->yAxis->range();
    if (ly.lower > 0) latency_->yAxis->setRange(ly.lower / 2, ly.upper * 2);
    // Throughput from 0, so heights compare across steps.
    for (QCPAxis* a : {throughput_->yAxis, throughput_->yAxis2}) {
        a->setRange(0, std::max(1e-9, a->range().upper * 1.15));
    }
    for (QCustomPlot* p : {latency_, throughput_}) p->replot();
}

void LoadCharts::setCompare(const std::vector<load::SweepStep>& steps) {
    if (steps.empty()) return;
    // Same colours as the first target's curves, dashed, with open squares.
    const auto dashed = [](QCustomPlot* p, const QString& name, const QColor& c, bool right) {
        QCPGraph* g = add_graph(p, name, c, true, right);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 6));
        return g;
    };
    QCPGraph* ttft = dashed(latency_, tr("B TTFT p99"), QColor(0, 70, 140), false);
    QCPGraph* e2e = dashed(latency_, tr("B e2e p99"), QColor(150, 0, 150), false);
    QCPGraph* req = dashed(throughput_, tr("B requests/s"), QColor(0, 70, 140), false);
    QCPGraph* good = dashed(throughput_, tr("B goodput"), QColor(0, 140, 0), false);
    for (const load::SweepStep& st : steps) {
        const double x = chart_rate(st.stats);
        add_point(ttft, x, st.stats.ttft.p99);
        add_point(e2e, x, st.stats.e2e.p99);
        add_point(req, x, st.stats.request_throughput);
        add_point(good, x, st.stats.goodput);
    }
    rescale();
}

void LoadCharts::setTelemetry(const std::vector<load::TelemetryRow>& rows) {
    scheduler_->clearGraphs();
    scheduler_->setVisible(!rows.empty());
    if (rows.empty()) return;
    // Steps, not lines: a pass's values hold until the next pass.
    QCPGraph* batch = scheduler_->addGraph();
    QCPGraph* queued = scheduler_->addGraph();
    QCPGraph* kv = scheduler_->addGraph(scheduler_->xAxis, scheduler_->yAxis2);
    const std::pair<QCPGraph*, std::pair<QString, QColor>> looks[] = {
        {batch, {tr("batch size"), QColor(0, 70, 140)}},
        {queued, {tr("queued"), QColor(200, 120, 0)}},
        {kv, {tr("KV blocks used"), QColor(0, 140, 0)}}};
    for (const auto& [g, look] : looks) {
        g->setName(look.first);
        g->setPen(QPen(look.second, 1.4));
        g->setLineStyle(QCPGraph::lsStepLeft);
    }
    const double t0 = rows.front().t_ms;
    for (const load::TelemetryRow& r : rows) {
        const double x = (r.t_ms - t0) / 1000.0;
        batch->addData(x, r.pass.batch);
        queued->addData(x, r.pass.queued);
        kv->addData(x, r.pass.kv_blocks_used);
    }
    scheduler_->rescaleAxes();
    for (QCPAxis* a : {scheduler_->yAxis, scheduler_->yAxis2})
        a->setRange(0, std::max(1.0, a->range().upper * 1.15));
    scheduler_->replot();
}

int LoadCharts::points(const QString& name) const {
    for (QCustomPlot* p : {latency_, throughput_, scheduler_}) {
        for (int i = 0; i < p->graphCount(); ++i) {
            if (p->graph(i)->name() == name) return p->graph(i)->data()->size();
        }
    }
    return -1;
}

}  // namespace wb::ui
