#pragma once
// The Server tab's live charts: the figures GET /metrics exports, one
// series per served model version (stable, canary), read in process from
// the server's metrics objects (server::Serving::snapshot), never scraped:
// TTFT, inter-token and end-to-end latency p50/p95/p99 and queue wait
// p50/p99 (ms, histogram_quantile estimates over everything served so
// far), generated tokens/s (the counter's rate between two samples),
// running and queued requests, KV pool blocks used and free, prefix-cache
// hit rate, model memory (MiB), engine busy share (busy time over wall
// time since the model loaded: the device's timestamps on Vulkan).
// Plots are the live charts' (chart_plot.h). Time axis: s since start.

#include <QWidget>
#include <array>
#include <map>
#include <vector>

#include "server/serving.h"

class QCustomPlot;
class QCPGraph;

namespace wb::ui {

class ServerCharts : public QWidget {
    Q_OBJECT
  public:
    enum Chart {
        Ttft = 0,
        Itl,
        E2e,
        QueueWait,
        Throughput,
        Requests,
        KvBlocks,
        PrefixHit,
        Memory,
        Busy
    };
    static constexpr int kCharts = 10;

    explicit ServerCharts(QWidget* parent = nullptr);

    /// Appends one sample at `t_s` (s since the server started): one point
    /// per version and series. Versions are told apart by
    /// VersionSnapshot::canary ("stable", "canary").
    void addSample(double t_s, const std::vector<server::VersionSnapshot>& versions);
    /// Forgets every point (a new server).
    void clear();
    /// The chart widget (tests, screenshots).
    QCustomPlot* plot(Chart c) const { return plots_[static_cast<size_t>(c)]; }
    /// Points of the graph named `name` ("stable p99", "canary tokens/s")
    /// on chart `c`; -1 when there is no such graph.
    int points(Chart c, const QString& name) const;
    /// The last value of that graph (NaN when none).
    double lastValue(Chart c, const QString& name) const;
    /// Samples since clear().
    int sampleCount() const { return samples_; }

  private:
    QCPGraph* graph(Chart c, bool canary, const QString& series, int shade);

    std::array<QCustomPlot*, kCharts> plots_{};
    int samples_ = 0;
    /// The previous sample's time and generated tokens, per version role.
    std::map<bool, std::pair<double, double>> last_tokens_;
};

}  // namespace wb::ui
