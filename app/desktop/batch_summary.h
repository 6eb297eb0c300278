#pragma once
// The summary of one batch run, as `workbench-cli batch` prints it: the
// metrics table of the run's span (TTFT, ITL, TPOT, e2e with count, mean,
// p50, p90, p95, p99, max; throughput; engine/metrics/metrics_table.h,
// shared with the CLI) and the finish reasons, as text (the panel and
// Copy), CSV and JSON (Export). No widgets.

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <optional>

#include "cost/price.h"
#include "metrics/metrics_store.h"

namespace wb::gui {

struct BatchSummary {
    metrics::WindowStats stats;  ///< the metrics store over the run's span
    /// Finished requests per finish reason, in the order first seen.
    QList<QPair<QString, int>> finish_reasons;
    int concurrency = 0;               ///< scheduler slots of the run
    int requests_submitted = 0;        ///< prompts sent (the set's size unless cancelled)
    std::optional<cost::Price> price;  ///< the run's price; none = no cost figures

    /// The run's cost at `price` (nullopt without one): cost::run_usage of
    /// the span, with the engine's busy time over the span (busy_fraction
    /// x span), as `workbench-cli batch` prices it.
    std::optional<cost::Figures> cost() const;

    /// Counts one finished request with `reason` ("stop", "length", ...).
    void addFinish(const QString& reason);
    /// "finish reasons: stop 12, length 8" then the CLI's table, then the
    /// cost line when priced.
    QString text() const;
    /// The table as CSV (metrics_table_csv) followed by "finish_reason,<r>,<n>"
    /// rows and "concurrency" / "requests_submitted" rows (and cost_total,
    /// cost_per_request, cost_per_1k_requests, cost_per_m_output_tokens
    /// rows when priced).
    QString csv() const;
    /// The CLI's --summary-json object: wall_ms, queue_wait_ms / ttft_ms /
    /// itl_ms / tpot_ms / e2e_ms / prompt_tokens / output_tokens as {count,
    /// mean, p50, p90, p95, p99, max} (null where no sample), request and
    /// token counts, tokens/s, busy_fraction, concurrency,
    /// requests_submitted and finish_reasons {reason: count}; price and
    /// cost (cost::to_json) when priced.
    QJsonObject json() const;
};

}  // namespace wb::gui
