#include "ui/compare/report_table.h"

#include <QFileInfo>
#include <QHeaderView>
#include <algorithm>
#include <functional>

#include "compare/compare.h"
#include "desktop/units_text.h"
#include "ui/compare/compare_pane.h"

namespace wb::ui::compare {

namespace {

using wb::compare::ModelReport;

QString bytes(uint64_t b) {
    if (b >= (1ull << 30)) return QStringLiteral("%1 GiB").arg(double(b) / (1ull << 30), 0, 'f', 2);
    if (b >= (1ull << 20)) return QStringLiteral("%1 MiB").arg(double(b) / (1ull << 20), 0, 'f', 2);
    if (b >= 1024) return QStringLiteral("%1 KiB").arg(double(b) / 1024, 0, 'f', 1);
    return QStringLiteral("%1 B").arg(b);
}

QString pct(uint64_t a, uint64_t n) {
    if (!n) return QStringLiteral("-");
    return QStringLiteral("%1% (%2/%3)")
        .arg(100.0 * double(a) / double(n), 0, 'f', 2)
        .arg(a)
        .arg(n);
}

QString num(double v, int prec) {
    return QString::number(v, 'f', prec);
}

}  // namespace

ReportTable::ReportTable(QWidget* parent) : QTableWidget(parent) {
    setObjectName("compareTable");
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    // The table fits its width, with no horizontal scrolling: the figure
    // names' column is capped (setReport) and the models' columns share the
    // rest; long names ("PPL (llama.cpp chunks, n_ctx …)") and figures
    // ("KLD median / p99 / max") wrap onto more lines and the rows grow to
    // fit, so a third model's column is not pushed out of the window.
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    horizontalHeader()->setTextElideMode(Qt::ElideMiddle);  // "C: stories…q4_0.gguf"
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    setWordWrap(true);
    // Stretched columns change width with the window: the rows follow, so
    // wrapped text is shown whole rather than elided.
    connect(horizontalHeader(), &QHeaderView::sectionResized, this,
            [this] { resizeRowsToContents(); });
    setTextElideMode(Qt::ElideRight);  // a word longer than the cap: "…", full text in the tooltip
}

int ReportTable::labelColumnCap() const {
    // As wide as the longest fixed figure name, "first split (step per prompt)".
    return fontMetrics().horizontalAdvance(tr("first split (step per prompt)")) + 16;
}

void ReportTable::setReport(const wb::compare::CompareReport& r) {
    clear();
    const int n_models = static_cast<int>(r.models.size());
    QStringList headers;
    for (const ModelReport& m : r.models) {
        headers << QStringLiteral("%1: %2").arg(
            QString::fromStdString(m.label), QFileInfo(QString::fromStdString(m.path)).fileName());
    }
    std::vector<std::pair<QString, std::function<QString(const ModelReport&)>>> rows;
    rows.emplace_back(tr("tensor types"),
                      [](const ModelReport& m) { return QString::fromStdString(m.tensor_types); });
    rows.emplace_back(tr("file size"), [](const ModelReport& m) { return bytes(m.file_bytes); });
    rows.emplace_back(tr("weights (as stored)"),
                      [](const ModelReport& m) { return bytes(m.weight_bytes); });
    rows.emplace_back(tr("KV cache (%1)").arg(QString::fromStdString(r.kv_type)),
                      [](const ModelReport& m) {
                          return tr("%1 for %2 tokens").arg(bytes(m.kv_bytes)).arg(m.n_ctx);
                      });
    rows.emplace_back(tr("device memory (engine)"), [](const ModelReport& m) {
        return m.device_bytes ? bytes(*m.device_bytes) : tr("n/a (CPU)");
    });
    rows.emplace_back(tr("backend"), [](const ModelReport& m) {
        // as the model bar and the status bar name it
        return gui::backend_label(QString::fromStdString(m.device.backend),
                                  QString::fromStdString(m.backend));
    });
    rows.emplace_back(tr("load time (ms)"), [](const ModelReport& m) { return num(m.load_ms, 1); });
    const int first_speed = static_cast<int>(rows.size());  // the next 4 rows
    // Speed: median (min-max) of the timed passes, as the panes show it.
    auto speed = [](const wb::compare::SpeedFigure& f, int prec) {
        return num(f.median, prec) + QStringLiteral(" (") + num(f.min, prec) + QStringLiteral("-") +
               num(f.max, prec) + QStringLiteral(")");
    };
    rows.emplace_back(tr("prefill tokens/s"),
                      [speed](const ModelReport& m) { return speed(m.prefill_tps, 1); });
    rows.emplace_back(tr("decode tokens/s"),
                      [speed](const ModelReport& m) { return speed(m.decode_tps, 1); });
    rows.emplace_back(tr("TTFT (ms)"),
                      [speed](const ModelReport& m) { return speed(m.ttft_ms, 2); });
    rows.emplace_back(tr("e2e (ms)"), [speed](const ModelReport& m) { return speed(m.e2e_ms, 2); });
    rows.emplace_back(tr("teacher-forced agreement"), [](const ModelReport& m) {
        return m.teacher_forced ? pct(m.teacher_forced->equal, m.teacher_forced->total)
                                : tr("n/a (vocab)");
    });
    const size_t n_prompts = r.prompts.size();
    rows.emplace_back(tr("greedy = A (prompts)"), [n_prompts](const ModelReport& m) {
        if (!m.same_vocab) return tr("%1/%2 same text").arg(m.identical_outputs).arg(n_prompts);
        size_t same = 0;
        for (const auto& d : m.divergence) same += d ? 0 : 1;
        return QStringLiteral("%1/%2").arg(same).arg(n_prompts);
    });
    rows.emplace_back(tr("first split (step per prompt)"), [](const ModelReport& m) {
        if (!m.same_vocab) return tr("n/a (vocab)");
        QStringList s;
        for (const auto& d : m.divergence) s << (d ? QString::number(*d) : QStringLiteral("-"));
        return s.join(QLatin1Char(','));
    });
    if (r.text_file) {
        QString name = tr("PPL");
        if (!r.models.empty() && r.models[0].ppl) {
            const auto& p = *r.models[0].ppl;
            name = tr("PPL (llama.cpp chunks, n_ctx %1, %2 chunks, %3 tokens)")
                       .arg(p.n_ctx)
                       .arg(p.n_chunks)
                       .arg(p.n_scored);
        }
        rows.emplace_back(name, [](const ModelReport& m) {
            return m.ppl ? num(m.ppl->ppl, 4) + QStringLiteral(" ± ") + num(m.ppl->ppl_error, 4)
                         : QStringLiteral("-");
        });
        const auto* a = r.models.empty() ? nullptr : &r.models[0];
        rows.emplace_back(tr("PPL / PPL(A)"), [a](const ModelReport& m) {
            return a && a->ppl && m.ppl ? num(m.ppl->ppl / a->ppl->ppl, 6) : QStringLiteral("-");
        });
        rows.emplace_back(tr("KLD vs A mean (nats)"), [](const ModelReport& m) {
            return m.kld ? num(m.kld->mean, 6) + QStringLiteral(" ± ") + num(m.kld->mean_error, 6)
                         : tr("n/a (vocab)");
        });
        rows.emplace_back(tr("KLD vs A median / p99 / max"), [](const ModelReport& m) {
            return m.kld ? num(m.kld->median, 6) + QStringLiteral(" / ") + num(m.kld->p99, 6) +
                               QStringLiteral(" / ") + num(m.kld->max, 6)
                         : tr("n/a");
        });
        rows.emplace_back(tr("top-1 = A"), [](const ModelReport& m) {
            return m.kld ? pct(m.kld->same_top, m.kld->n) : tr("n/a");
        });
    }
    if (r.testset_file) {
        const size_t n_items = r.test_items.size();
        rows.emplace_back(tr("test-set accuracy"), [n_items](const ModelReport& m) {
            return pct(m.test_correct_count, n_items);
        });
    }
    setColumnCount(n_models + 1);
    setRowCount(static_cast<int>(rows.size()));
    setHorizontalHeaderLabels(QStringList{tr("figure")} + headers);
    horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);  // capped below
    for (int j = 0; j < n_models; ++j)  // the whole path when the header is elided
        horizontalHeaderItem(j + 1)->setToolTip(QString::fromStdString(r.models[size_t(j)].path));
    for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
        auto* name = new QTableWidgetItem(rows[size_t(i)].first);
        QString tip = rows[size_t(i)].first;  // whole name when wrapped or elided
        if (i >= first_speed && i < first_speed + 4)
            tip += QLatin1Char('\n') + ComparePane::speedNote(r.repetitions);
        name->setToolTip(tip);
        setItem(i, 0, name);
        for (int j = 0; j < n_models; ++j) {
            auto* cell = new QTableWidgetItem(rows[size_t(i)].second(r.models[size_t(j)]));
            cell->setToolTip(cell->text());  // whole figure where a narrow column elides it
            setItem(i, j + 1, cell);
        }
    }
    resizeColumnToContents(0);
    setColumnWidth(0, std::min(columnWidth(0), labelColumnCap()));
    resizeRowsToContents();
}

int ReportTable::rowOf(const QString& name) const {
    for (int i = 0; i < rowCount(); ++i) {
        if (item(i, 0) && item(i, 0)->text().startsWith(name)) return i;
    }
    return -1;
}

}  // namespace wb::ui::compare
