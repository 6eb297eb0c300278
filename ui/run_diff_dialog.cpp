#include "ui/run_diff_dialog.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

namespace wb::ui {

namespace {

QString ms(const std::optional<double>& v, bool sign = false) {
    if (!v) return QStringLiteral("–");
    return (sign && *v >= 0 ? QStringLiteral("+") : QString()) + QString::number(*v, 'f', 1);
}

QString latency(const char* name, const runlog::LatencyDelta& d) {
    return QObject::tr("%1: p50 %2 → %3 ms (B − A %4 ms), mean %5 → %6 ms (B − A %7 ms), %8 pairs")
        .arg(QString::fromLatin1(name), ms(d.a_p50), ms(d.b_p50), ms(d.p50_delta(), true),
             ms(d.a_mean), ms(d.b_mean), ms(d.mean_delta(), true))
        .arg(d.pairs);
}

QString summary(const runlog::RunDiff& d) {
    const runlog::PromptComparison& p = d.prompts;
    QStringList lines;
    lines << QObject::tr("Prompts both answered: %1 (responses: A %2, B %3)")
                 .arg(p.matched)
                 .arg(p.a_responses)
                 .arg(p.b_responses);
    if (p.matched > 0) {
        lines << QObject::tr("Identical outputs: %1 of %2 (%3%)")
                     .arg(p.identical)
                     .arg(p.matched)
                     .arg(100.0 * *p.identical_share(), 0, 'f', 1);
        // The first few: the rest are in `workbench-cli diff --json`.
        const size_t shown = std::min<size_t>(p.divergences.size(), 5);
        for (size_t i = 0; i < shown; ++i) {
            const runlog::Divergence& v = p.divergences[i];
            const QString prompt = QString::fromStdString(v.prompt_excerpt);
            lines << (v.offset ? QObject::tr("“%1”: first differs at character %2: A “%3”, B “%4”")
                                     .arg(prompt)
                                     .arg(*v.offset)
                                     .arg(QString::fromStdString(v.a_excerpt),
                                          QString::fromStdString(v.b_excerpt))
                               : QObject::tr("“%1”: outputs differ (text redacted)").arg(prompt));
        }
        if (p.divergences.size() > shown)
            lines
                << QObject::tr("… and %1 more differing outputs").arg(p.divergences.size() - shown);
        lines << latency("TTFT", p.ttft) << latency("End-to-end", p.e2e);
    }
    for (const std::string& w : d.warnings) lines << QObject::tr("Warning: %1").arg(w.c_str());
    return lines.join('\n');
}

}  // namespace

RunDiffDialog::RunDiffDialog(const runlog::RunDiff& d, QWidget* parent) : QDialog(parent) {
    setObjectName("runDiffDialog");
    setWindowTitle(tr("Compare environments: run %1 and run %2").arg(d.a.id).arg(d.b.id));
    auto* layout = new QVBoxLayout(this);
    auto* head =
        new QLabel(tr("A: run %1 (%2, %3)\nB: run %4 (%5, %6)")
                       .arg(d.a.id)
                       .arg(QString::fromStdString(d.a.kind), QString::fromStdString(d.a.name))
                       .arg(d.b.id)
                       .arg(QString::fromStdString(d.b.kind), QString::fromStdString(d.b.name)));
    head->setTextFormat(Qt::PlainText);
    layout->addWidget(head);
    fields_ = new QTableWidget(static_cast<int>(d.fields.size()), 4);
    fields_->setHorizontalHeaderLabels({tr("Field"), tr("A"), tr("B"), tr("Changes outputs")});
    fields_->verticalHeader()->hide();
    fields_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    fields_->setWordWrap(false);
    for (int r = 0; r < static_cast<int>(d.fields.size()); ++r) {
        const runlog::FieldDiff& f = d.fields[static_cast<size_t>(r)];
        auto text = [](const runlog::FieldValues& v) {
            return v.values.empty() ? QObject::tr("(no responses)")
                                    : QString::fromStdString(v.text());
        };
        const QStringList cells = {QString::fromStdString(f.group + ": " + f.label), text(f.a),
                                   text(f.b), f.changes_outputs ? tr("yes") : QString()};
        for (int c = 0; c < 4; ++c) {
            auto* it = new QTableWidgetItem(cells[c]);
            it->setToolTip(cells[c]);  // a SHA-256 or a tensor-type list is long
            it->setData(Qt::UserRole, QString::fromStdString(f.key));
            if (f.changes_outputs) {
                QFont bold = it->font();
                bold.setBold(true);
                it->setFont(bold);
            }
            fields_->setItem(r, c, it);
        }
    }
    fields_->resizeColumnsToContents();
    fields_->horizontalHeader()->setStretchLastSection(true);
    if (d.fields.empty()) {
        layout->addWidget(new QLabel(
            tr("No differences in model, tokenizer, sampling, settings or environment.")));
        fields_->hide();
    }
    layout->addWidget(fields_, 1);
    prompts_ = new QLabel(summary(d));
    prompts_->setTextFormat(Qt::PlainText);
    prompts_->setWordWrap(true);
    prompts_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(prompts_);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(box);
    resize(900, 560);
}

QString RunDiffDialog::promptSummary() const {
    return prompts_->text();
}

}  // namespace wb::ui
