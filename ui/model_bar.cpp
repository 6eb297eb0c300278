#include "ui/model_bar.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

#include "desktop/units_text.h"
#include "ui/widgets/wrap_label.h"

namespace wb::ui {

namespace detail {

/// A one-line label that ends its text with "…" when narrower than the
/// text (QLabel clips mid-letter); the whole text is in the tooltip.
class ElidedLabel : public QLabel {
  public:
    using QLabel::QLabel;
    void setFullText(const QString& text) {
        full_ = text;
        setToolTip(text);
        updateGeometry();
        refresh();
    }
    QSize sizeHint() const override {
        const QMargins m = contentsMargins();
        return {fontMetrics().horizontalAdvance(full_) + m.left() + m.right() + 2 * margin(),
                QLabel::sizeHint().height()};
    }
    QSize minimumSizeHint() const override {
        return {fontMetrics().horizontalAdvance(QStringLiteral("xxxx…")),
                QLabel::minimumSizeHint().height()};
    }

  protected:
    void resizeEvent(QResizeEvent* e) override {
        QLabel::resizeEvent(e);
        refresh();
    }

  private:
    void refresh() {
        QLabel::setText(
            fontMetrics().elidedText(full_, Qt::ElideRight, contentsRect().width() - 2 * margin()));
    }
    QString full_;
};

}  // namespace detail

ModelBar::ModelBar(QWidget* parent) : QWidget(parent) {
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(6, 4, 6, 4);
    open_ = new QPushButton(tr("Open model…"));
    open_->setToolTip(tr("Open a GGUF model file (Ctrl+O); you can also drop one on the window"));
    recent_ = new QToolButton;
    recent_->setText(tr("Recent"));
    recent_->setPopupMode(QToolButton::InstantPopup);
    recentMenu_ = new QMenu(recent_);
    recent_->setMenu(recentMenu_);
    model_ = new ElideLabel(tr("No model loaded"));
    model_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    model_->setObjectName("modelFile");
    // What the file is (architecture, quantization, size), cut with "…"
    // when the bar is narrow rather than mid-word.
    summary_ = new detail::ElidedLabel;
    summary_->setObjectName("modelSummary");
    // A model whose own template is refused (it does not parse or hits a
    // limit: the template is code from the file), or that has none (plain
    // text completion), says so where the model is named; the whole note
    // is in the tooltip and the Chat tab.
    templateNote_ = new ElideLabel;
    templateNote_->setObjectName("templateNote");
    templateNote_->setStyleSheet(QStringLiteral("color: #b35900;"));
    templateNote_->hide();
    progress_ = new QProgressBar;
    progress_->setRange(0, 100);
    progress_->setMaximumWidth(220);
    progress_->setTextVisible(true);
    progress_->hide();
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setToolTip(tr("Stop loading; the current model stays loaded"));
    cancel_->hide();
    device_ = new QComboBox;
    device_->setToolTip(tr("Device the model runs on; picking another loads the model there"));
    device_->setMinimumWidth(180);
    // The device's memory over what the model needs of it, two short lines
    // (side by side they pushed the model's name off the bar).
    deviceMem_ = new ElideLabel;
    deviceMem_->setObjectName("modelBarMemory");
    planLabel_ = new ElideLabel;
    planLabel_->setObjectName("memoryPlan");
    planLabel_->hide();
    auto* memory = new QVBoxLayout;
    memory->setSpacing(0);
    memory->addWidget(deviceMem_);
    memory->addWidget(planLabel_);

    l->addWidget(open_);
    l->addWidget(recent_);
    l->addWidget(model_);
    l->addWidget(summary_, 1);
    l->addWidget(templateNote_);
    l->addWidget(progress_);
    l->addWidget(cancel_);
    l->addWidget(new QLabel(tr("Device:")));
    l->addWidget(device_);
    l->addLayout(memory);

    connect(open_, &QPushButton::clicked, this, &ModelBar::openDialog);
    connect(cancel_, &QPushButton::clicked, this, &ModelBar::cancelLoadRequested);
    connect(device_, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i < 0 || i >= devices_.size()) return;
        const gui::DeviceEntry& d = devices_[i];
        plan_ = {};  // the plan was for the other device; a load sets the new one
        showMemory();
        emit deviceChanged(d);
    });
}

void ModelBar::setDevices(const QList<gui::DeviceEntry>& devices, const QString& vulkan_error) {
    const QSignalBlocker block(device_);
    devices_ = devices;
    device_->clear();
    QString defaultTip;
    for (const gui::DeviceEntry& d : devices) {
        const QString label = d.backend != "cpu" ? QStringLiteral("%1: %2").arg(d.selector, d.name)
                              : d.threads > 0    ? tr("%1 (%2 threads)").arg(d.name).arg(d.threads)
                                                 : d.name;
        device_->addItem(label);
        QString tip;
        if (d.backend == "cpu")
            tip =
                tr("Threaded CPU kernels on the weights as stored (quantized "
                   "types kept); no GPU needed");
        if (!d.default_reason.isEmpty()) {
            if (!tip.isEmpty()) tip += "\n";
            tip += tr("The default (%1); picking a device makes that the choice.")
                       .arg(d.default_reason);
            defaultTip =
                tr("Default when none is picked: %1, because %2.").arg(label, d.default_reason);
        }
        if (!tip.isEmpty()) device_->setItemData(device_->count() - 1, tip, Qt::ToolTipRole);
    }
    QString tip =
        vulkan_error.isEmpty()
            ? tr("Device the model runs on; picking another loads the model there")
            : tr("Vulkan is not available: %1\nThe CPU is offered instead.").arg(vulkan_error);
    if (!defaultTip.isEmpty()) tip += "\n" + defaultTip;
    device_->setToolTip(tip);
}

void ModelBar::selectDevice(const QString& backend, const QString& selector) {
    int pick = 0;
    for (int i = 0; i < devices_.size(); ++i) {
        if (devices_[i].backend == backend &&
            (backend == "cpu" || selector.isEmpty() || devices_[i].selector == selector)) {
            pick = i;
            break;
        }
    }
    const QSignalBlocker block(device_);
    device_->setCurrentIndex(pick);
    showMemory();
}

gui::DeviceEntry ModelBar::currentDevice() const {
    const int i = device_->currentIndex();
    return i >= 0 && i < devices_.size() ? devices_[i] : gui::DeviceEntry{};
}

void ModelBar::setRecent(const QStringList& paths) {
    recentMenu_->clear();
    for (const QString& p : paths) {
        QAction* a = recentMenu_->addAction(QFileInfo(p).fileName(), this,
                                            [this, p] { emit openRequested(p); });
        a->setToolTip(p);
        a->setStatusTip(p);
    }
    recent_->setEnabled(!paths.isEmpty());
}

void ModelBar::setPlan(const gui::PlanText& plan) {
    plan_ = plan;
    showMemory();
}

void ModelBar::showMemory() {
    // Two short lines: "needs 5.42 MiB of 2.00 GiB" over "full
    // 2,048-token context fits" (one long line pushed the model's name off).
    const gui::DeviceEntry d = currentDevice();
    const QString device =
        d.memory_bytes > 0 ? gui::bytes_text(static_cast<uint64_t>(d.memory_bytes)) : QString();
    QString top;
    if (!plan_.need.isEmpty() && !device.isEmpty())
        top = tr("needs %1 of %2").arg(plan_.need, device);
    else if (!plan_.need.isEmpty())
        top = tr("model needs %1").arg(plan_.need);
    else if (!device.isEmpty())
        top = tr("%1 device memory").arg(device);
    deviceMem_->setText(
        plan_.fits || plan_.need.isEmpty()
            ? top
            : tr("<span style='color:#b00020'>%1 (does not fit)</span>").arg(top.toHtmlEscaped()));
    deviceMem_->setToolTip(plan_.tooltip);
    planLabel_->setText(plan_.context);
    planLabel_->setToolTip(plan_.tooltip);
    planLabel_->setVisible(!plan_.context.isEmpty());
}

void ModelBar::setModel(const gui::ModelInfo& info) {
    if (info.path.isEmpty()) {
        QFont plain = model_->font();
        plain.setBold(false);
        model_->setFont(plain);
        model_->setText(tr("No model loaded"));
        model_->setToolTip({});
        pathTip_.clear();
        summary_->setFullText({});
        templateNote_->hide();
        return;
    }
    templateNote_->setVisible(!info.template_note.isEmpty());
    templateNote_->setText(info.has_chat_template ? tr("⚠ chat template not used")
                                                  : tr("no chat template: plain text"));
    templateNote_->setToolTip(info.template_note);
    // The file name first: a model and its quantized copies share
    // general.name, so the name alone does not say which file is loaded.
    // In bold, cut with "…" when the bar is narrow (ElideLabel).
    QFont bold = model_->font();
    bold.setBold(true);
    model_->setFont(bold);
    model_->setText(info.fileName());
    summary_->setFullText(QStringLiteral("· ") + info.summary());
    // The path, the tensor types, and (setColdStart) the load's cold start.
    pathTip_ = info.tensor_types.isEmpty()
                   ? info.path
                   : info.path + QStringLiteral("\n") + tr("tensors: %1").arg(info.tensor_types);
    model_->setToolTip(pathTip_);
}

void ModelBar::setColdStart(const gui::ColdStart& cold) {
    if (pathTip_.isEmpty()) return;
    model_->setToolTip(pathTip_ + "\n\n" + cold.text());
}

void ModelBar::setLoading(double fraction, const QString& step) {
    const bool on = fraction >= 0;
    progress_->setVisible(on);
    cancel_->setVisible(on);
    open_->setEnabled(!on);
    if (on) {
        progress_->setValue(static_cast<int>(fraction * 100));
        progress_->setFormat(step.isEmpty() ? QStringLiteral("%p%")
                                            : step + QStringLiteral(" %p%"));
    }
}

void ModelBar::openDialog() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open GGUF model"), QString(),
                                                      tr("GGUF models (*.gguf);;All files (*)"));
    if (!path.isEmpty()) emit openRequested(path);
}

}  // namespace wb::ui
