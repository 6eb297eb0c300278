#include "batch_summary.h"

#include <QJsonDocument>
#include <QJsonValue>

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
    return out;
}

}  // namespace wb::gui
