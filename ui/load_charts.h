#pragma once
// The Load tab's charts (QCustomPlot through chart_plot.h), both against
// the offered rate (requests/s; a closed-loop step at its achieved rate):
//   latency   TTFT p50 and p99, ITL p99, e2e p99 (ms), the saturation
//             curve, with each SLO given as a dashed line, and the queue
//             wait p99 where the target reports it (our server does)
//   throughput  requests/s and goodput (left axis), output tokens/s (right)
// The highest rate that meets the SLOs is marked on both by a vertical
// line and named on the throughput chart. A third chart, shown only when
// the target reports scheduler telemetry (our server), draws its forward
// passes over the test: batch size and queue length (left axis) and KV
// blocks used (right axis) against seconds since the first pass.

#include <QWidget>
#include <vector>

#include "load/step_stats.h"
#include "load/sweep.h"
#include "load/telemetry.h"

class QCustomPlot;

namespace wb::ui {

class LoadCharts : public QWidget {
    Q_OBJECT
  public:
    explicit LoadCharts(QWidget* parent = nullptr);

    /// Draws `steps` (in any order; sorted by rate), the SLO lines of
    /// `slo` and the best step `best` (index into steps, -1 = none).
    void setSteps(const std::vector<load::SweepStep>& steps, int best, const load::Slo& slo);
    /// Clears every graph and mark.
    void clear();
    /// Draws a second target's steps over the first's (compare under
    /// load): "B TTFT p99", "B e2e p99" dashed on the latency chart, "B
    /// requests/s" and "B goodput" dashed on the throughput chart. Call
    /// after setSteps(); an empty `steps` draws nothing.
    void setCompare(const std::vector<load::SweepStep>& steps);
    /// Draws the scheduler passes `rows` (load::TelemetryRow, any clock:
    /// x = seconds since the first); hides the chart when `rows` is empty.
    void setTelemetry(const std::vector<load::TelemetryRow>& rows);

    /// Points of the graph named `name` on either chart ("TTFT p99",
    /// "goodput", "SLO TTFT p99", "batch size", ...); -1 when there is no
    /// such graph.
    int points(const QString& name) const;
    /// The text of the best-rate mark ("" when none).
    QString bestMark() const { return bestMark_; }
    QCustomPlot* latencyPlot() const { return latency_; }
    QCustomPlot* throughputPlot() const { return throughput_; }
    QCustomPlot* schedulerPlot() const { return scheduler_; }

  private:
    /// Fits both rate charts' axes to their curves and replots.
    void rescale();

    QCustomPlot* latency_;
    QCustomPlot* throughput_;
    QCustomPlot* scheduler_;
    QString bestMark_;
};

/// The x of a step on the charts: its offered rate, or for a closed loop
/// its achieved throughput (requests/s).
double chart_rate(const load::StepStats& s);

}  // namespace wb::ui
