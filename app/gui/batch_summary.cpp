#include "batch_summary.h"

#include <QJsonValue>
#include <cmath>

#include "metrics/metrics_table.h"

namespace wb::gui {

namespace {

QJsonValue num(double v) {
    return std::isnan(v) ? QJsonValue(QJsonValue::Null) : QJsonValue(v);
}

QJsonObject summary_json(const metrics::Summary& s) {
    return {{"count", static_cast<qint64>(s.count)},
            {"mean", num(s.mean)},
            {"p50", num(s.p50)},
            {"p90", num(s.p90)},
            {"p95", num(s.p95)},
            {"p99", num(s.p99)},
            {"max", num(s.max)}};
}

}  // namespace

void BatchSummary::addFinish(const QString& reason) {
    for (auto& [r, n] : finish_reasons) {
        if (r == reason) {
            ++n;
            return;
        }
    }
    finish_reasons.append({reason, 1});
}

QString BatchSummary::text() const {
    QStringList reasons;
    for (const auto& [r, n] : finish_reasons) reasons << QStringLiteral("%1 %2").arg(r).arg(n);
    return QStringLiteral("finish reasons: %1\n").arg(reasons.join(", ")) +
           QString::fromStdString(metrics::format_metrics_table(stats));
}

QString BatchSummary::csv() const {
    QString out = QString::fromStdString(metrics::metrics_table_csv(stats));
    for (const auto& [r, n] : finish_reasons)
        out += QStringLiteral("finish_reason,%1,%2\n").arg(r).arg(n);
    out += QStringLiteral("concurrency,%1\nrequests_submitted,%2\n")
               .arg(concurrency)
               .arg(requests_submitted);
    return out;
}

QJsonObject BatchSummary::json() const {
    const metrics::WindowStats& w = stats;
    QJsonObject reasons;
    for (const auto& [r, n] : finish_reasons) reasons[r] = n;
    return {{"wall_ms", w.end_ms - w.begin_ms},
            {"queue_wait_ms", summary_json(w.queue_wait_ms)},
            {"ttft_ms", summary_json(w.ttft_ms)},
            {"itl_ms", summary_json(w.itl_ms)},
            {"tpot_ms", summary_json(w.tpot_ms)},
            {"e2e_ms", summary_json(w.e2e_ms)},
            {"prompt_tokens", summary_json(w.prompt_tokens)},
            {"output_tokens", summary_json(w.generated_tokens)},
            {"requests_finished", static_cast<qint64>(w.requests_finished)},
            {"requests_completed", static_cast<qint64>(w.requests_completed)},
            {"steps", static_cast<qint64>(w.steps)},
            {"prefill_tokens", static_cast<qint64>(w.prefill_tokens)},
            {"decode_tokens", static_cast<qint64>(w.decode_tokens)},
            {"prefill_tokens_per_s", num(w.prefill_tokens_per_s)},
            {"decode_tokens_per_s", num(w.decode_tokens_per_s)},
            {"busy_fraction", num(w.busy_fraction)},
            {"concurrency", concurrency},
            {"requests_submitted", requests_submitted},
            {"finish_reasons", reasons}};
}

}  // namespace wb::gui
