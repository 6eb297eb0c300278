#include "ui/server_charts.h"

#include <qcustomplot.h>

#include <QGridLayout>
#include <cmath>
#include <limits>

#include "ui/chart_plot.h"

namespace wb::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

const char* const kTitles[ServerCharts::kCharts] = {
    "TTFT (ms)",        "Inter-token latency (ms)", "End-to-end latency (ms)",
    "Queue wait (ms)",  "Generated tokens/s",       "Requests",
    "KV pool blocks",   "Prefix-cache hit rate",    "Model memory (MiB)",
    "Engine busy share"};

QString role(bool canary) {
    return canary ? QStringLiteral("canary") : QStringLiteral("stable");
}

}  // namespace

ServerCharts::ServerCharts(QWidget* parent) : QWidget(parent) {
    auto* grid = new QGridLayout(this);
    grid->setContentsMargins(0, 0, 0, 0);
    for (int c = 0; c < kCharts; ++c) {
        QCustomPlot* p = make_chart_plot(tr(kTitles[c]), this);
        p->setObjectName(QStringLiteral("serverChart%1").arg(c));
        // The tab scrolls: each chart tall enough to read its lines.
        p->setMinimumHeight(170);
        plots_[static_cast<size_t>(c)] = p;
        grid->addWidget(p, c / 2, c % 2);
    }
}

QCPGraph* ServerCharts::graph(Chart c, bool canary, const QString& series, int shade) {
    QCustomPlot* p = plot(c);
    const QString name = role(canary) + ' ' + series;
    for (int i = 0; i < p->graphCount(); ++i)
        if (p->graph(i)->name() == name) return p->graph(i);
    QCPGraph* g = p->addGraph();
    g->setName(name);
    // Stable blue, canary orange; p50 / p95 / p99 (shade 0, 1, 2) from
    // light to dark, so a version's lines read as one family.
    static const QColor kStable[3] = {QColor(120, 170, 230), QColor(50, 110, 200),
                                      QColor(10, 50, 140)};
    static const QColor kCanary[3] = {QColor(250, 180, 100), QColor(230, 120, 30),
                                      QColor(170, 70, 0)};
    const int k = shade < 0 ? 0 : (shade > 2 ? 2 : shade);
    QPen pen(canary ? kCanary[k] : kStable[k]);
    pen.setWidthF(1.5);
    g->setPen(pen);
    return g;
}

void ServerCharts::addSample(double t_s, const std::vector<server::VersionSnapshot>& versions) {
    ++samples_;
    for (const server::VersionSnapshot& v : versions) {
        const bool k = v.canary;
        const server::VersionFigures& f = v.figures;
        graph(Ttft, k, "p50", 0)->addData(t_s, f.ttft_p50_ms);
        graph(Ttft, k, "p95", 1)->addData(t_s, f.ttft_p95_ms);
        graph(Ttft, k, "p99", 2)->addData(t_s, f.ttft_p99_ms);
        graph(Itl, k, "p50", 0)->addData(t_s, f.itl_p50_ms);
        graph(Itl, k, "p95", 1)->addData(t_s, f.itl_p95_ms);
        graph(Itl, k, "p99", 2)->addData(t_s, f.itl_p99_ms);
        graph(E2e, k, "p50", 0)->addData(t_s, f.e2e_p50_ms);
        graph(E2e, k, "p95", 1)->addData(t_s, f.e2e_p95_ms);
        graph(E2e, k, "p99", 2)->addData(t_s, f.e2e_p99_ms);
        graph(QueueWait, k, "p50", 0)->addData(t_s, f.queue_wait_p50_ms);
        graph(QueueWait, k, "p99", 2)->addData(t_s, f.queue_wait_p99_ms);
        // The counter's rate since the last sample (PromQL rate() over one step).
        double rate = 0;
        if (const auto it = last_tokens_.find(k);
            it != last_tokens_.end() && t_s > it->second.first)
            rate = (f.generated_tokens - it->second.second) / (t_s - it->second.first);
        last_tokens_[k] = {t_s, f.generated_tokens};
        graph(Throughput, k, "tokens/s", 1)->addData(t_s, rate);
        graph(Requests, k, "running", 2)->addData(t_s, v.gauges.running);
        graph(Requests, k, "queued", 0)->addData(t_s, v.gauges.queued);
        graph(KvBlocks, k, "used", 2)->addData(t_s, v.gauges.kv_blocks_used);
        graph(KvBlocks, k, "free", 0)->addData(t_s, v.gauges.kv_blocks_free);
        graph(PrefixHit, k, "hit rate", 1)->addData(t_s, v.gauges.prefix_cache_hit_rate);
        graph(Memory, k, v.gauges.memory_on_device ? "device" : "host", 1)
            ->addData(t_s, v.gauges.memory_bytes / kMiB);
        graph(Busy, k, "busy share", 1)->addData(t_s, v.gauges.busy_share);
    }
    for (QCustomPlot* p : plots_) {
        p->rescaleAxes(true);
        p->yAxis->setRangeLower(0);
        if (p->yAxis->range().upper <= 0) p->yAxis->setRangeUpper(1);
        p->replot(QCustomPlot::rpQueuedReplot);
    }
}

void ServerCharts::clear() {
    samples_ = 0;
    last_tokens_.clear();
    for (QCustomPlot* p : plots_) {
        p->clearGraphs();
        p->replot(QCustomPlot::rpQueuedReplot);
    }
}

int ServerCharts::points(Chart c, const QString& name) const {
    QCustomPlot* p = plot(c);
    for (int i = 0; i < p->graphCount(); ++i)
        if (p->graph(i)->name() == name) return p->graph(i)->dataCount();
    return -1;
}

double ServerCharts::lastValue(Chart c, const QString& name) const {
    QCustomPlot* p = plot(c);
    for (int i = 0; i < p->graphCount(); ++i)
        if (p->graph(i)->name() == name && p->graph(i)->dataCount() > 0)
            return (p->graph(i)->data()->constEnd() - 1)->value;
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace wb::ui
