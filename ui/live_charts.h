#pragma once
// Live charts beside Chat and Batch (QCustomPlot): engine memory by purpose
// (stacked) with the driver's usage and budget where reported; p50/p95/p99
// of TTFT and end-to-end latency over the metrics window; decode tokens/s;
// queue depth and running requests. Fed by addSnapshot() from a GUI-thread
// timer (~10 Hz); never touches the engine.

#include <QWidget>
#include <array>

#include "request_types.h"

class QCustomPlot;
class QComboBox;
class QLabel;

namespace wb::ui {

/// The four live charts with a shared time axis (s since the model loaded).
class LiveCharts : public QWidget {
    Q_OBJECT
  public:
    /// Which chart (for export and tests).
    enum Chart { Memory = 0, Latency = 1, Throughput = 2, Queue = 3 };
    static constexpr int kCharts = 4;

    explicit LiveCharts(QWidget* parent = nullptr);

    /// Appends one sample to every chart and rescales to the chosen window.
    void addSnapshot(const gui::LiveSnapshot& s);
    /// Forgets all points (a new model was loaded).
    void clear();
    /// Samples received since the last clear().
    int pointCount() const { return points_; }
    /// Samples taken while requests were queued or running.
    int busyPointCount() const { return busy_points_; }
    /// The chart widget (tests, screenshots).
    QCustomPlot* plot(Chart c) const { return plots_[static_cast<size_t>(c)]; }
    /// Visible window in seconds; 0 = whole run.
    double windowSeconds() const;
    /// Selects the window: 60, 300 or 0 (whole run).
    void setWindowSeconds(double s);
    /// Writes chart `c` as a PNG (width x height px; 0 = its size on screen),
    /// every pixel `scale` x `scale` device pixels (2 = twice the
    /// resolution, same layout). Returns false when the file cannot be written.
    bool exportPng(Chart c, const QString& path, int width = 0, int height = 0, double scale = 1.0);
    /// Where Export PNG… proposes to save chart `c`: the user's Pictures
    /// folder (else home), "workbench-<chart>-<yyyyMMdd-HHmmss>.png".
    QString defaultExportPath(Chart c) const;

  private:
    void exportDialog(Chart c);
    void rescale();
    void showTooltip(Chart c, QMouseEvent* e);

    std::array<QCustomPlot*, kCharts> plots_{};
    QComboBox* window_ = nullptr;
    QLabel* memoryNote_ = nullptr;
    int points_ = 0;
    int busy_points_ = 0;
    double last_t_ = 0;
};

}  // namespace wb::ui
