#include "ui/widgets/quantize_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "quantize/quantize_job.h"

namespace wb::ui {

namespace {

QString upper_type(uint32_t id) {
    return QString::fromStdString(quantize::type_upper_name(id));
}

QString mib(uint64_t b) {
    return QString::number(double(b) / (1 << 20), 'f', 2) + " MiB";
}

}  // namespace

QuantizeDialog::QuantizeDialog(const QString& input, QWidget* parent)
    : QDialog(parent),
      input_(input),
      type_(new QComboBox(this)),
      pure_(new QCheckBox(tr("Every weight at the type's tensor type (no llama.cpp mix, --pure)"),
                          this)),
      output_(new QLineEdit(this)),
      browse_(new QPushButton(tr("Browse…"), this)),
      startBtn_(new QPushButton(tr("Make copy"), this)),
      cancelBtn_(new QPushButton(tr("Cancel"), this)),
      compareBtn_(new QPushButton(tr("Compare with original"), this)),
      progress_(new QProgressBar(this)),
      summary_(new QLabel(this)),
      tensors_(new QTableWidget(0, 5, this)) {
    setWindowTitle(tr("Make quantized copy of %1").arg(QFileInfo(input).fileName()));
    // Every file type the quantizer writes (engine/quant/file_types.h),
    // Q4_K_M (what most downloads are) preselected.
    for (const quant::TargetInfo& t : quant::all_targets()) {
        type_->addItem(QStringLiteral("%1 (%2)").arg(t.upper, tr(t.summary)), QString(t.name));
    }
    type_->setCurrentIndex(type_->findData(QStringLiteral("q4_k_m")));
    pure_->setToolTip(
        tr("Off: llama.cpp's per-tensor rules (output at Q6_K, more bits for some attn_v / "
           "ffn_down), as llama-quantize writes. On: every weight at the chosen type where its "
           "rows allow."));
    auto* out = new QHBoxLayout;
    out->addWidget(output_, 1);
    out->addWidget(browse_);
    auto* form = new QFormLayout;
    form->addRow(tr("Model"), new QLabel(input.toHtmlEscaped(), this));
    form->addRow(tr("Type"), type_);
    form->addRow(QString(), pure_);
    form->addRow(tr("Output"), out);
    tensors_->setHorizontalHeaderLabels(
        {tr("tensor"), tr("shape"), tr("from"), tr("to"), tr("note")});
    tensors_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    tensors_->horizontalHeader()->setStretchLastSection(true);
    tensors_->verticalHeader()->hide();
    summary_->setWordWrap(true);
    fallback_ = new QLabel(this);
    fallback_->setObjectName("quantizeFallbackWarning");
    fallback_->setWordWrap(true);
    fallback_->setStyleSheet("color: #b00020; font-weight: bold");
    fallback_->hide();
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    compareBtn_->setObjectName("compareWithOriginal");
    compareBtn_->setEnabled(false);
    cancelBtn_->setEnabled(false);
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(startBtn_);
    buttons->addWidget(cancelBtn_);
    buttons->addWidget(compareBtn_);
    auto* close = new QPushButton(tr("Close"), this);
    buttons->addWidget(close);
    // Until "Make copy" there is nothing to show in the progress bar, the
    // tensor table or the summary: a line says what will appear instead of
    // empty boxes.
    placeholder_ = new QLabel(
        tr("Make copy writes the copy and lists every tensor here as it goes: its shape, the "
           "type it had and the type written, and why where that is not the chosen type "
           "(llama.cpp's mix: output at Q6_K, norms kept F32, rows a block does not divide)."),
        this);
    placeholder_->setObjectName("quantizePlaceholder");
    placeholder_->setWordWrap(true);
    placeholder_->setAlignment(Qt::AlignCenter);
    placeholder_->setEnabled(false);  // greyed, as a hint
    progress_->hide();
    tensors_->hide();
    summary_->hide();
    auto* lay = new QVBoxLayout(this);
    lay->addLayout(form);
    lay->addWidget(placeholder_, 1);
    lay->addWidget(progress_);
    lay->addWidget(tensors_, 1);
    lay->addWidget(fallback_);
    lay->addWidget(summary_);
    lay->addLayout(buttons);
    // Room for about a dozen tensor rows while it runs; fits a 1366x768 screen.
    tensors_->setMinimumHeight(tensors_->verticalHeader()->defaultSectionSize() * 10 +
                               tensors_->horizontalHeader()->sizeHint().height());
    resize(760, 660);

    defaultOutput();
    connect(type_, &QComboBox::currentIndexChanged, this, [this] { defaultOutput(); });
    connect(browse_, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, tr("Save quantized copy"),
                                                       output_->text(), tr("GGUF (*.gguf)"));
        if (!p.isEmpty()) output_->setText(p);
    });
    connect(startBtn_, &QPushButton::clicked, this, &QuantizeDialog::start);
    connect(cancelBtn_, &QPushButton::clicked, this, &QuantizeDialog::cancelRun);
    connect(close, &QPushButton::clicked, this, &QDialog::reject);
    connect(compareBtn_, &QPushButton::clicked, this,
            [this] { emit openInCompare(input_, output_->text()); });
}

QuantizeDialog::~QuantizeDialog() {
    if (job_) job_->cancel();
    watcher_.waitForFinished();
}

QString QuantizeDialog::suggestedOutput(const QString& input, const QString& type,
                                        bool input_dir_writable) {
    const QFileInfo fi(input);
    const QString name = fi.completeBaseName() + "-" + type + ".gguf";
    if (input_dir_writable) return fi.dir().filePath(name);
    QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (dir.isEmpty() || !QDir(dir).exists()) dir = QDir::homePath();
    return QDir(dir).filePath(name);
}

void QuantizeDialog::defaultOutput() {
    // The installed default model sits in a read-only folder: proposing a
    // path there made "Make copy" fail for the first model a user tries.
    output_->setText(suggestedOutput(input_, type_->currentData().toString(),
                                     QFileInfo(QFileInfo(input_).absolutePath()).isWritable()));
}

void QuantizeDialog::setTarget(const QString& name) {
    const int i = type_->findData(name.toLower());
    if (i >= 0) type_->setCurrentIndex(i);
}

void QuantizeDialog::setPure(bool pure) {
    pure_->setChecked(pure);
}

void QuantizeDialog::setOutputPath(const QString& path) {
    output_->setText(path);
}
QString QuantizeDialog::outputPath() const {
    return output_->text();
}
QString QuantizeDialog::summaryText() const {
    return summary_->text();
}

void QuantizeDialog::cancelRun() {
    if (!job_) return;
    job_->cancel();
    summary_->setText(tr("cancelling…"));
}

void QuantizeDialog::onTensor(int index, int count, const QString& name, const QString& shape,
                              const QString& from, const QString& to, const QString& note) {
    progress_->setRange(0, count);
    progress_->setValue(index);
    tensors_->setRowCount(index + 1);
    const QStringList cells{name, shape, from, to, note};
    for (int c = 0; c < cells.size(); ++c) {
        auto* it = new QTableWidgetItem(cells[c]);
        if (!note.isEmpty()) it->setBackground(QColor(255, 236, 179));  // kept, not the target
        tensors_->setItem(index, c, it);
    }
    summary_->setText(tr("tensor %1/%2: %3").arg(index + 1).arg(count).arg(name));
}

void QuantizeDialog::start() {
    if (running_) return;
    running_ = true;
    placeholder_->hide();
    progress_->show();
    tensors_->show();
    summary_->show();
    tensors_->setRowCount(0);
    fallback_->hide();
    progress_->setRange(0, 0);
    startBtn_->setEnabled(false);
    cancelBtn_->setEnabled(true);
    compareBtn_->setEnabled(false);
    type_->setEnabled(false);
    pure_->setEnabled(false);
    output_->setEnabled(false);
    browse_->setEnabled(false);
    quantize::Request req;
    req.input = input_.toStdString();
    req.output = output_->text().toStdString();
    req.target = quant::parse_target(type_->currentData().toString().toStdString());
    req.options.pure = pure_->isChecked();
    // The job runs on a worker; its progress comes here queued. The dialog
    // keeps the job (cancel) and the worker keeps it alive while it runs.
    auto job = std::make_shared<quantize::QuantizeJob>(std::move(req));
    job_ = job;
    const QString out_q = output_->text();
    watcher_.setFuture(QtConcurrent::run([this, job, out_q] {
        QString message;
        QString warning;  // said on its own line, not inside the summary
        bool ok = false;
        try {
            const quant::QuantizeReport rep = job->run([this](const quantize::Progress& p) {
                QMetaObject::invokeMethod(
                    this,
                    [this, i = p.index, n = p.count, name = QString::fromStdString(p.plan.name),
                     shape = QString::fromStdString(p.plan.shape),
                     from = upper_type(p.plan.src_type), to = upper_type(p.plan.dst_type),
                     note = QString::fromStdString(p.plan.note)] {
                        onTensor(int(i), int(n), name, shape, from, to, note);
                    },
                    Qt::QueuedConnection);
            });
            const quant::TargetInfo& info = quant::target_info(job->request().target);
            QStringList kept;
            int at_target = 0;
            for (const quant::TensorPlan& t : rep.tensors) {
                if (t.dst_type == uint32_t(info.default_type)) ++at_target;
                if (!t.note.empty())
                    kept << QString::fromStdString(t.name) + " " + upper_type(t.dst_type);
            }
            // A few names, not all: a paragraph of 48 names pushed the table
            // down to four rows. The table marks every one of them.
            const qsizetype kMaxNamed = 6;
            QString named = kept.isEmpty() ? tr("none") : kept.mid(0, kMaxNamed).join(", ");
            if (kept.size() > kMaxNamed)
                named += tr(" and %1 more (highlighted in the table)").arg(kept.size() - kMaxNamed);
            message = tr("Wrote %1 (%2, %3 bpw, %4 from %5). %6 of %7 tensors not %8: %9")
                          .arg(out_q, QString(info.upper))
                          .arg(rep.bpw(), 0, 'f', 2)
                          .arg(mib(rep.output_bytes), mib(rep.input_bytes))
                          .arg(kept.size())
                          .arg(rep.tensors.size())
                          .arg(upper_type(uint32_t(info.default_type)), named);
            if (at_target == 0)
                warning = tr("No tensor was written as %1: every one fell back to another type "
                             "(see the note column), so this copy is not a %2 model.")
                              .arg(upper_type(uint32_t(info.default_type)), QString(info.upper));
            ok = true;
        } catch (const quantize::Error& e) {
            message = failureText(e.kind(), QString::fromStdString(e.what()));
        } catch (const std::exception& e) {
            // Backstop: run() types its errors, but an exception left in the
            // future would keep the dialog "running" and rethrow on close.
            message = tr("Quantizing failed: %1").arg(QString::fromStdString(e.what()));
        }
        QMetaObject::invokeMethod(
            this,
            [this, ok, message, warning] {
                running_ = false;
                progress_->setRange(0, 1);
                progress_->setValue(ok ? 1 : 0);
                startBtn_->setEnabled(true);
                cancelBtn_->setEnabled(false);
                compareBtn_->setEnabled(ok);
                type_->setEnabled(true);
                pure_->setEnabled(true);
                output_->setEnabled(true);
                browse_->setEnabled(true);
                summary_->setText(message);
                fallback_->setText(warning);
                fallback_->setVisible(!warning.isEmpty());
                emit finished(ok, message);
            },
            Qt::QueuedConnection);
    }));
}

QString QuantizeDialog::failureText(quantize::ErrorKind kind, const QString& what) {
    switch (kind) {
        case quantize::ErrorKind::Cancelled:
            return tr("Cancelled; no file written.");
        case quantize::ErrorKind::Request:
            return tr("Failed: choose another output file (%1).").arg(what);
        case quantize::ErrorKind::InputFile:
            return tr("Failed: the model cannot be read: %1").arg(what);
        case quantize::ErrorKind::InputFormat:
            return tr("Failed: the model is not a valid GGUF file: %1").arg(what);
        case quantize::ErrorKind::Unsupported:
            return tr("Failed: the model has a tensor type this quantizer cannot convert: %1")
                .arg(what);
        case quantize::ErrorKind::Output:
            return tr("Failed: the copy cannot be written (no file left behind): %1").arg(what);
    }
    return tr("Failed: %1").arg(what);
}

}  // namespace wb::ui
