#include "ui/live_charts.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QResizeEvent>
#include <QStandardPaths>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "desktop/latency_stats.h"
#include "ui/chart_plot.h"

namespace wb::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* const kTitles[LiveCharts::kCharts] = {
    "Memory (MiB)", "Latency over window (ms)",
    "Decode throughput (tokens/s over the last 2 s of generating)", "Requests",
    "Prefix cache hit rate over window"};
static_assert(gui::LiveSnapshot::kThroughputWindowS == 2.0, "the throughput title names 2 s");

// Margin around a run in the "This run" window (s), so its edges show.
constexpr double kRunPad = 0.5;

// Graph names per chart, in the order graphs are added.
const QStringList kGraphNames[LiveCharts::kCharts] = {
    {"weights", "KV cache", "activations", "staging", "device usage", "device budget"},
    {"TTFT p50", "TTFT p95", "TTFT p99", "e2e p50", "e2e p95", "e2e p99"},
    {"decode tokens/s"},
    {"queued", "running"},
    {"prompt tokens cached / prompt tokens"},
};

QCustomPlot* make_plot(int chart, QWidget* parent) {
    return make_chart_plot(kTitles[chart], parent);
}

}  // namespace

LiveCharts::LiveCharts(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);

    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Window:")));
    window_ = new QComboBox;
    window_->addItem(tr("This run"), kThisRun);
    window_->addItem(tr("1 min"), 60.0);
    window_->addItem(tr("5 min"), 300.0);
    window_->addItem(tr("Since app start"), 0.0);
    window_->setToolTip(
        tr("Time span the charts show. This run: the last chat turn or batch "
           "(latency percentiles over it too), kept until the next one starts. "
           "Since app start: every sample since the app started."));
    bar->addWidget(window_);
    bar->addStretch();
    auto* exportBtn = new QPushButton(tr("Export PNG…"));
    exportBtn->setToolTip(tr("Save one chart as a PNG image (or right-click a chart)"));
    auto* menu = new QMenu(exportBtn);
    for (int c = 0; c < kCharts; ++c) {
        menu->addAction(tr(kTitles[c]), this, [this, c] { exportDialog(static_cast<Chart>(c)); });
    }
    exportBtn->setMenu(menu);
    bar->addWidget(exportBtn);
    layout->addLayout(bar);

    const QList<QColor> memColors{QColor(66, 133, 244), QColor(52, 168, 83), QColor(251, 188, 5),
                                  QColor(154, 160, 166)};
    const QList<QColor> latColors{QColor(66, 133, 244), QColor(251, 140, 0), QColor(219, 68, 55)};

    for (int c = 0; c < kCharts; ++c) {
        QCustomPlot* p = make_plot(c, this);
        plots_[static_cast<size_t>(c)] = p;
        for (int g = 0; g < kGraphNames[c].size(); ++g) {
            QCPGraph* graph = p->addGraph();
            graph->setName(kGraphNames[c][g]);
            QPen pen;
            pen.setWidthF(1.6);
            if (c == Memory && g < 4) {
                // Stacked: each purpose is drawn on top of the previous one
                // and filled down to it.
                pen.setColor(memColors[g].darker(120));
                QColor fill = memColors[g];
                fill.setAlpha(120);
                graph->setBrush(fill);
                if (g > 0) graph->setChannelFillGraph(p->graph(g - 1));
            } else if (c == Memory) {
                pen.setColor(g == 4 ? Qt::black : Qt::red);
                pen.setStyle(g == 4 ? Qt::SolidLine : Qt::DashLine);
            } else if (c == Latency) {
                pen.setColor(latColors[g % 3]);
                if (g >= 3) pen.setStyle(Qt::DashLine);  // e2e dashed, TTFT solid
            } else if (c == PrefixCache) {
                pen.setColor(QColor(154, 80, 200));
            } else if (c == Throughput) {
                pen.setColor(QColor(52, 168, 83));
                graph->setBrush(QColor(52, 168, 83, 50));
            } else {
                pen.setColor(g == 0 ? QColor(251, 140, 0) : QColor(66, 133, 244));
                graph->setLineStyle(QCPGraph::lsStepLeft);
            }
            graph->setPen(pen);
        }
        if (c == Queue) {
            // Request counts are whole numbers: no 2.5 or 0.25 ticks.
            auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
            ticker->setTickStep(1.0);
            ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
            p->yAxis->setTicker(ticker);
        }
        p->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(p, &QWidget::customContextMenuRequested, this, [this, c, p](const QPoint& pos) {
            QMenu m;
            m.addAction(tr("Export this chart to PNG…"), this,
                        [this, c] { exportDialog(static_cast<Chart>(c)); });
            m.exec(p->mapToGlobal(pos));
        });
        // Hover read-out without a button held.
        p->setMouseTracking(true);
        connect(p, &QCustomPlot::mouseMove, this,
                [this, c](QMouseEvent* e) { showTooltip(static_cast<Chart>(c), e); });
        layout->addWidget(p, 1);
    }
    memoryNote_ = new QLabel;
    memoryNote_->setWordWrap(true);
    memoryNote_->setStyleSheet("color: gray; font-size: 8pt");
    layout->addWidget(memoryNote_);

    connect(window_, &QComboBox::currentIndexChanged, this, [this] {
        updateScopeTitles();
        recomputeStats();
        rescale();
    });
    window_->setCurrentIndex(0);
    updateScopeTitles();
}

QString LiveCharts::prefixCacheTitle() const {
    // The rate counts every request admitted in the window, whatever tab
    // sent it (the engine's metrics do not know tabs): said in the title,
    // since a batch's own summary counts only its prompts.
    const double w = windowSeconds();
    if (w == kThisRun) return tr("Prefix cache hit rate, this run (all requests since it began)");
    if (w > 0)
        return tr("Prefix cache hit rate, last %1 min (all requests)").arg(w / 60.0, 0, 'g', 3);
    return tr("Prefix cache hit rate since the model loaded (all requests)");
}

void LiveCharts::updateScopeTitles() {
    QCustomPlot* p = plot(PrefixCache);
    set_chart_title(p, prefixCacheTitle());
    p->replot(QCustomPlot::rpQueuedReplot);
}

void LiveCharts::beginRun() {
    // From the last sample on: the next snapshot's window starts here, not
    // at the start of a chat turn that was still busy a moment ago.
    run_start_ = last_t_;
    run_end_ = last_t_;
    run_starts_.push_back(last_t_);
    busy_ = true;  // so the next busy sample continues this run, not a new one
}

void LiveCharts::markModelLoad(const QString& name) {
    // Just after the last point, so the old model's points stay before it.
    const double t = points_ > 0 ? last_t_ + 0.1 : 0.0;
    t_offset_ = t;
    busy_ = false;
    run_start_ = t;
    run_end_ = t;
    loads_.push_back(t);
    run_starts_.push_back(t);
    QFont f = font();
    f.setPointSize(7);
    for (QCustomPlot* p : plots_) {
        auto* line = new QCPItemStraightLine(p);
        line->point1->setCoords(t, 0);
        line->point2->setCoords(t, 1);
        line->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
        auto* label = new QCPItemText(p);
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(t, 0);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        label->setPadding(QMargins(3, 1, 3, 1));
        label->setFont(f);
        label->setColor(QColor(90, 90, 90));
        // A long file name cut in the middle, so the label stays short.
        label->setText(
            name.isEmpty()
                ? tr("model loaded")
                : tr("loaded %1").arg(QFontMetrics(f).elidedText(name, Qt::ElideMiddle, 140)));
        p->replot(QCustomPlot::rpQueuedReplot);
    }
}

std::pair<double, bool> LiveCharts::statsBegin(double t_s) const {
    const double inf = std::numeric_limits<double>::infinity();
    // The latest load at or before t_s: no figure reaches across it.
    const auto l = std::upper_bound(loads_.begin(), loads_.end(), t_s);
    const double load = l == loads_.begin() ? -inf : *(l - 1);
    const double w = windowSeconds();
    double begin = -inf;
    if (w == kThisRun) {
        // The run the point belongs to: the latest start before it (a run
        // starts at its last idle sample, which still belongs to the run
        // before).
        double run = -inf;
        for (double r : run_starts_)
            if (r < t_s) run = std::max(run, r);
        begin = run;
    } else if (w > 0) {
        begin = t_s - w;
    }
    if (begin > load) return {begin, false};
    return {load, true};
}

std::array<double, 7> LiveCharts::statsAt(double t_s) const {
    const auto [begin, inclusive] = statsBegin(t_s);
    auto first = [&](const auto& events) {
        return inclusive ? std::lower_bound(events.begin(), events.end(), begin,
                                            [](const auto& e, double v) { return e.t_s < v; })
                         : std::upper_bound(events.begin(), events.end(), begin,
                                            [](double v, const auto& e) { return v < e.t_s; });
    };
    auto last = [&](const auto& events) {
        return std::upper_bound(events.begin(), events.end(), t_s,
                                [](double v, const auto& e) { return v < e.t_s; });
    };
    std::array<double, 7> out;
    out.fill(kNaN);
    auto percentiles = [&](const std::vector<gui::LatencyEvent>& events, size_t at) {
        std::vector<double> v;
        for (auto it = first(events), end = last(events); it < end; ++it) v.push_back(it->ms);
        const gui::LatencyPercentiles p = gui::latency_percentiles(std::move(v));
        out[at] = p.p50;
        out[at + 1] = p.p95;
        out[at + 2] = p.p99;
    };
    percentiles(ttft_, 0);
    percentiles(e2e_, 3);
    double prompt = 0, cached = 0;
    for (auto it = first(prefix_), end = last(prefix_); it < end; ++it) {
        prompt += it->prompt_tokens;
        cached += it->cached_tokens;
    }
    if (prompt > 0) out[6] = cached / prompt;
    return out;
}

void LiveCharts::recomputeStats() {
    std::array<QVector<QCPGraphData>, 7> series;
    for (double t : sample_t_) {
        const std::array<double, 7> v = statsAt(t);
        for (size_t g = 0; g < 7; ++g) series[g].append(QCPGraphData(t, v[g]));
    }
    for (int g = 0; g < 6; ++g) plot(Latency)->graph(g)->data()->set(series[size_t(g)], true);
    plot(PrefixCache)->graph(0)->data()->set(series[6], true);
}

double LiveCharts::statsWindowSeconds() const {
    const double w = windowSeconds();
    if (w != kThisRun) return w;
    if (run_start_ > run_end_) return 0;
    // From the run's start to now, a little more so its first sample is in.
    return std::max(0.1, last_t_ - run_start_ + 0.2);
}

QPair<double, double> LiveCharts::visibleRange() const {
    const QCPRange r = plots_[0]->xAxis->range();
    return {r.lower, r.upper};
}

double LiveCharts::windowSeconds() const {
    return window_->currentData().toDouble();
}

void LiveCharts::setWindowSeconds(double s) {
    const int i = window_->findData(s);
    if (i >= 0) window_->setCurrentIndex(i);
}

void LiveCharts::clear() {
    for (QCustomPlot* p : plots_) {
        for (int g = 0; g < p->graphCount(); ++g) p->graph(g)->data()->clear();
        p->clearItems();
        p->replot(QCustomPlot::rpQueuedReplot);
    }
    sample_t_.clear();
    ttft_.clear();
    e2e_.clear();
    prefix_.clear();
    loads_.clear();
    run_starts_.clear();
    points_ = 0;
    busy_points_ = 0;
    last_t_ = 0;
    t_offset_ = 0;
    busy_ = false;
    run_start_ = 1.0;
    run_end_ = 0.0;
}

QString LiveCharts::memoryNote() const {
    return memoryNote_->text();
}

void LiveCharts::addSnapshot(const gui::LiveSnapshot& s) {
    // A snapshot older than the last point: another model was loaded (not
    // marked) and its clock restarted. Continue after the last point.
    if (points_ > 0 && s.t_s + t_offset_ < last_t_) {
        markModelLoad({});
        t_offset_ = last_t_ + 0.1 - s.t_s;
    }
    const double t = s.t_s + t_offset_;
    const bool busy = s.queued + s.running > 0;
    if (busy && !busy_) {
        // A new run starts: from the previous (idle) sample, so its rise shows.
        run_start_ = points_ > 0 ? last_t_ : t;
        run_starts_.push_back(run_start_);
    }
    for (const gui::LatencyEvent& e : s.ttft_events) ttft_.push_back({e.t_s + t_offset_, e.ms});
    for (const gui::LatencyEvent& e : s.e2e_events) e2e_.push_back({e.t_s + t_offset_, e.ms});
    for (const gui::PrefixEvent& e : s.prefix_events)
        prefix_.push_back({e.t_s + t_offset_, e.prompt_tokens, e.cached_tokens});
    if (busy || busy_) run_end_ = t;  // through the first idle sample after it
    busy_ = busy;
    const gui::MemoryUse& m = s.memory;
    double stack = 0;
    const double purposes[4] = {m.weights, m.kv_cache, m.activations, m.staging};
    QCustomPlot* mem = plot(Memory);
    for (int g = 0; g < 4; ++g) {
        stack += purposes[g] / kMiB;
        mem->graph(g)->addData(t, stack);
    }
    mem->graph(4)->addData(t, m.device_usage < 0 ? kNaN : m.device_usage / kMiB);
    mem->graph(5)->addData(t, m.device_budget < 0 ? kNaN : m.device_budget / kMiB);
    memoryNote_->setText(m.host ? tr("Memory: the engine's own accounting by purpose, in host "
                                     "memory (CPU backend).")
                         : m.device_usage < 0
                             ? tr("Memory: the engine's own accounting by purpose. The driver "
                                  "reports no usage/budget (no VK_EXT_memory_budget).")
                             : tr("Memory: the engine's accounting by purpose (stacked); lines: "
                                  "the driver's heap usage and budget."));

    // Windowed figures from the per-request samples (statsAt), not the
    // snapshot's own: a window change computes them all again the same way.
    const std::array<double, 7> stats = statsAt(t);
    QCustomPlot* lat = plot(Latency);
    for (int g = 0; g < 6; ++g) lat->graph(g)->addData(t, stats[size_t(g)]);
    plot(Throughput)->graph(0)->addData(t, s.decode_tps);
    plot(Queue)->graph(0)->addData(t, s.queued);
    plot(Queue)->graph(1)->addData(t, s.running);
    plot(PrefixCache)->graph(0)->addData(t, stats[6]);
    sample_t_.push_back(t);
    ++points_;
    if (s.queued + s.running > 0) ++busy_points_;
    last_t_ = t;
    rescale();
}

void LiveCharts::rescale() {
    const double w = windowSeconds();
    for (QCustomPlot* p : plots_) {
        double lo = 0;
        double hi = std::max(last_t_, 1.0);
        if (w == kThisRun && run_start_ <= run_end_) {
            lo = std::max(0.0, run_start_ - kRunPad);
            hi = std::max(run_end_ + kRunPad, lo + 1.0);
        } else if (w > 0) {
            lo = std::max(0.0, last_t_ - w);
            hi = std::max(lo + w, last_t_);
        }
        p->xAxis->setRange(lo, hi);
        // Value range over the visible keys, never below 0 (all series are
        // non-negative) and with headroom so the top line stays visible.
        double top = 0;
        for (int g = 0; g < p->graphCount(); ++g) {
            bool found = false;
            const QCPRange r = p->graph(g)->getValueRange(found, QCP::sdBoth, QCPRange(lo, hi));
            if (found && std::isfinite(r.upper)) top = std::max(top, r.upper);
        }
        if (p == plot(PrefixCache))  // a rate: 0..1 always, a run at 0 clear of the axis line
            p->yAxis->setRange(-0.05, 1.05);
        else
            p->yAxis->setRange(0, top > 0 ? top * 1.15 : 1.0);
        p->replot(QCustomPlot::rpQueuedReplot);
    }
}

QString LiveCharts::readout(Chart c, double t_s) const {
    QCustomPlot* p = plot(c);
    if (p->graphCount() == 0 || p->graph(0)->data()->isEmpty()) return {};
    auto it = p->graph(0)->data()->findBegin(t_s, true);
    if (it == p->graph(0)->data()->constEnd()) return {};
    const double k = it->key;
    QStringList lines{QStringLiteral("t = %1 s").arg(k, 0, 'f', 1)};
    double below = 0;
    for (int g = 0; g < p->graphCount(); ++g) {
        auto gi = p->graph(g)->data()->findBegin(k, false);
        if (gi == p->graph(g)->data()->constEnd()) continue;
        double v = gi->value;
        if (c == Memory && g < 4) {  // stacked: show the purpose's own share
            const double own = v - below;
            below = v;
            v = own;
        }
        if (std::isnan(v)) continue;
        lines
            << QStringLiteral("%1: %2").arg(p->graph(g)->name()).arg(v, 0, 'f', c == Queue ? 0 : 2);
    }
    return lines.join('\n');
}

void LiveCharts::showTooltip(Chart c, QMouseEvent* e) {
    QCustomPlot* p = plot(c);
    const QString text = readout(c, p->xAxis->pixelToCoord(e->position().x()));
    if (text.isEmpty()) return;
    QToolTip::showText(e->globalPosition().toPoint(), text, p);
}

bool LiveCharts::exportPng(Chart c, const QString& path, int width, int height, double scale) {
    return plot(c)->savePng(path, width, height, scale);
}

QString LiveCharts::defaultExportPath(Chart c) const {
    static const char* const kNames[kCharts] = {"memory", "latency", "throughput", "requests",
                                                "prefix-cache"};
    QString dir = QStandardPaths::writableLocation(QStandardPaths::PicturesLocation);
    if (dir.isEmpty() || !QDir(dir).exists()) dir = QDir::homePath();
    return QDir(dir).filePath(
        QStringLiteral("workbench-%1-%2.png")
            .arg(kNames[c], QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss")));
}

void LiveCharts::exportDialog(Chart c) {
    // A named file in the Pictures folder, not "chart-1.png" in whatever
    // directory the app was started from; twice the on-screen resolution
    // so the PNG stays sharp in a report.
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), defaultExportPath(c), tr("PNG images (*.png)"));
    if (path.isEmpty()) return;
    if (!exportPng(c, path, 0, 0, 2.0))
        QMessageBox::warning(this, tr("Export failed"), tr("Could not write %1.").arg(path));
    else
        QToolTip::showText(mapToGlobal(QPoint(width() / 2, 0)), tr("Saved %1").arg(path), this);
}

}  // namespace wb::ui
