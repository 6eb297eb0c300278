#include "desktop/batch_summary.h"

#include <QJsonDocument>
#include <QJsonValue>
#include <cmath>

#include "cost/run_usage.h"
#include "metrics/metrics_json.h"
#include "metrics/metrics_table.h"

namespace wb::gui {

void BatchSummary::addFinish(const QString& reason) {
    for (auto& [r, n] : finish_reasons) {
        if (r == reason) {
            ++n;
            return;
        }
    }
    finish_reasons.append({reason, 1});
}

std::optional<cost::Figures> BatchSummary::cost() const {
    if (!price) return std::nullopt;
    // The app's session serves more than this run: busy time over the span.
    return cost::figures(
        *price,
        cost::run_usage(stats, stats.busy_fraction * (stats.end_ms - stats.begin_ms) / 1000.0));
}

QString BatchSummary::text() const {
    QStringList reasons;
    for (const auto& [r, n] : finish_reasons) reasons << QStringLiteral("%1 %2").arg(r).arg(n);
    QString out = QStringLiteral("finish reasons: %1\n").arg(reasons.join(", ")) +
                  QString::fromStdString(metrics::format_metrics_table(stats));
    if (const auto c = cost()) {
        out += QStringLiteral(
                   "cost: %1 %2 a request, %3 per 1k requests, %4 per M output tokens "
                   "(%5)\n")
                   .arg(c->per_request, 0, 'g', 6)
                   .arg(QString::fromStdString(price->currency))
                   .arg(c->per_1k_requests, 0, 'g', 4)
                   .arg(c->per_m_output_tokens, 0, 'g', 4)
                   .arg(QString::fromStdString(c->formula));
    }
    return out;
}

QString BatchSummary::csv() const {
    QString out = QString::fromStdString(metrics::metrics_table_csv(stats));
    for (const auto& [r, n] : finish_reasons)
        out += QStringLiteral("finish_reason,%1,%2\n").arg(r).arg(n);
    out += QStringLiteral("concurrency,%1\nrequests_submitted,%2\n")
               .arg(concurrency)
               .arg(requests_submitted);
    if (const auto c = cost()) {
        out += QStringLiteral(
                   "cost_total,%1\ncost_per_request,%2\ncost_per_1k_requests,%3\n"
                   "cost_per_m_output_tokens,%4\n")
                   .arg(c->total, 0, 'g', 8)
                   .arg(c->per_request, 0, 'g', 8)
                   .arg(c->per_1k_requests, 0, 'g', 8)
                   .arg(c->per_m_output_tokens, 0, 'g', 8);
    }
    return out;
}

QJsonObject BatchSummary::json() const {
    // The span's fields exactly as workbench-cli batch --summary-json writes
    // them (metrics_json.h), plus what only the panel knows.
    QJsonObject out =
        QJsonDocument::fromJson(QByteArray::fromStdString(metrics::window_json(stats).dump()))
            .object();
    QJsonObject reasons;
    for (const auto& [r, n] : finish_reasons) reasons[r] = n;
    out["concurrency"] = concurrency;
    out["requests_submitted"] = requests_submitted;
    out["finish_reasons"] = reasons;
    if (const auto c = cost()) {
        const auto q = [](const nlohmann::json& j) {
            return QJsonDocument::fromJson(QByteArray::fromStdString(j.dump())).object();
        };
        out["price"] = q(cost::to_json(*price));
        out["cost"] = q(cost::to_json(*c));
    }
    return out;
}

}  // namespace wb::gui
