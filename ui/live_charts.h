#pragma once
// Live charts beside Chat and Batch (QCustomPlot): engine memory by purpose
// (stacked) with the driver's usage and budget where reported; p50/p95/p99
// of TTFT and end-to-end latency over the metrics window; decode tokens/s;
// queue depth and running requests. Fed by addSnapshot() from a GUI-thread
// timer (~10 Hz); never touches the engine.
//
// Time axis: seconds since the charts took their first sample. Loading
// another model restarts the snapshots' clock; the charts carry on after the
// last point instead of wiping it, so a finished run stays on screen until
// the next one, and mark the load on the time axis (markModelLoad). A "run"
// is a stretch of samples with requests queued or running (a chat turn, a
// batch), or starts at a model load; the "This run" window fits the last one.
//
// Windowed figures (latency percentiles, prefix-cache hit rate) are computed
// here from the per-request samples the snapshots carry, never across a
// model load: at each point over the chosen window (the last 1 or 5 min, the
// run the point belongs to, or since the model loaded). Choosing another
// window computes every point again, so the lines have no step where the
// choice changed.

#include <QWidget>
#include <array>
#include <utility>
#include <vector>

#include "desktop/request_types.h"

class QCustomPlot;
class QComboBox;
class QLabel;

namespace wb::ui {

/// The four live charts with a shared time axis (s since the first sample).
class LiveCharts : public QWidget {
    Q_OBJECT
  public:
    /// Which chart (for export and tests).
    enum Chart { Memory = 0, Latency = 1, Throughput = 2, Queue = 3, PrefixCache = 4 };
    static constexpr int kCharts = 5;

    explicit LiveCharts(QWidget* parent = nullptr);

    /// Appends one sample to every chart and rescales to the chosen window.
    void addSnapshot(const gui::LiveSnapshot& s);
    /// Forgets all points, samples and load marks.
    void clear();
    /// A model was loaded (`name`: its file name, shown by the mark): marks
    /// the time axis there (a dashed line on every chart), continues the
    /// next snapshots' times (s since that load) from there, starts "This
    /// run" there, and counts only requests after it in the latency and
    /// prefix-cache figures. A snapshot whose time goes back (a load not
    /// marked) is taken as an unnamed load.
    void markModelLoad(const QString& name);
    /// Axis times (s) of the model loads marked so far, in order.
    const std::vector<double>& modelLoads() const { return loads_; }
    /// Starts a new run now (the Batch tab's Run): the "This run" window and
    /// its statistics begin at the last sample even when requests of an
    /// earlier run (a chat turn) were still busy, so a batch's figures are
    /// not mixed with the chat turn before it.
    void beginRun();
    /// Title of the prefix-cache chart, naming its scope for the chosen
    /// window: this run, the last N min, or since the model loaded; always
    /// "all requests" (chat, batch, ... alike).
    QString prefixCacheTitle() const;
    /// Samples received since the last clear().
    int pointCount() const { return points_; }
    /// Samples taken while requests were queued or running.
    int busyPointCount() const { return busy_points_; }
    /// The chart widget (tests, screenshots).
    QCustomPlot* plot(Chart c) const { return plots_[static_cast<size_t>(c)]; }
    /// Window value meaning "fit the last run" (see the header comment).
    static constexpr double kThisRun = -1.0;
    /// Visible window in seconds; kThisRun = the last run, 0 = everything.
    double windowSeconds() const;
    /// Selects the window: kThisRun, 60, 300 or 0 (everything); other
    /// values are ignored.
    void setWindowSeconds(double s);
    /// Span (s) the latency percentiles should cover for the chosen window:
    /// the window itself, or for kThisRun the last run so far (0 = since
    /// the model loaded, when no run was seen yet).
    double statsWindowSeconds() const;
    /// Visible time range [first, second] (s on the charts' axis).
    QPair<double, double> visibleRange() const;
    /// The last run's [start, end] (s on the charts' axis); start > end when
    /// no run was seen yet. While a run goes on, end is its latest sample.
    QPair<double, double> lastRun() const { return {run_start_, run_end_}; }
    /// Hover read-out of chart `c` at axis time `t_s`: the sample at or
    /// before t_s, one "name: value" line per graph (memory purposes as
    /// their own share, not the stack). Empty when the chart has no sample.
    QString readout(Chart c, double t_s) const;
    /// Writes chart `c` as a PNG (width x height px; 0 = its size on screen),
    /// every pixel `scale` x `scale` device pixels (2 = twice the
    /// resolution, same layout). Returns false when the file cannot be written.
    bool exportPng(Chart c, const QString& path, int width = 0, int height = 0, double scale = 1.0);
    /// Where Export PNG… proposes to save chart `c`: the user's Pictures
    /// folder (else home), "workbench-<chart>-<yyyyMMdd-HHmmss>.png".
    QString defaultExportPath(Chart c) const;
    /// The note under the memory chart: what its figures are (host memory
    /// on the CPU backend, or device memory with or without the driver's
    /// usage and budget).
    QString memoryNote() const;

  private:
    /// The windowed figures at axis time t_s: TTFT p50/p95/p99, e2e
    /// p50/p95/p99 (ms) and the prefix-cache hit rate (0..1); NaN where
    /// the span has no sample.
    std::array<double, 7> statsAt(double t_s) const;
    /// The span the figures at axis time t_s cover: (first, t_s], or
    /// [first, t_s] when second is true (the span starts at a model load).
    std::pair<double, bool> statsBegin(double t_s) const;
    /// Computes every point's windowed figures again (a window change).
    void recomputeStats();
    void exportDialog(Chart c);
    void rescale();
    void updateScopeTitles();
    void showTooltip(Chart c, QMouseEvent* e);

    std::array<QCustomPlot*, kCharts> plots_{};
    QComboBox* window_ = nullptr;
    QLabel* memoryNote_ = nullptr;
    int points_ = 0;
    int busy_points_ = 0;
    double last_t_ = 0;
    double t_offset_ = 0;  ///< added to snapshot times after a model reload
    bool busy_ = false;    ///< the previous sample had requests
    double run_start_ = 1.0, run_end_ = 0.0;
    std::vector<double> sample_t_;  ///< axis time of every point
    /// Per-request samples, times on the charts' axis, in time order.
    std::vector<gui::LatencyEvent> ttft_, e2e_;
    std::vector<gui::PrefixEvent> prefix_;
    std::vector<double> loads_;       ///< axis times of model loads
    std::vector<double> run_starts_;  ///< axis times runs started (loads too)
};

}  // namespace wb::ui
