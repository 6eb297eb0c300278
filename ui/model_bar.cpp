#include "model_bar.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QToolButton>

#include "units_text.h"

namespace wb::ui {

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
    model_ = new QLabel(tr("No model loaded"));
    model_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    model_->setMinimumWidth(200);
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
    deviceMem_ = new QLabel;
    plan_ = new QLabel;
    plan_->setObjectName("memoryPlan");

    l->addWidget(open_);
    l->addWidget(recent_);
    l->addWidget(model_, 1);
    l->addWidget(progress_);
    l->addWidget(cancel_);
    l->addWidget(new QLabel(tr("Device:")));
    l->addWidget(device_);
    l->addWidget(deviceMem_);
    l->addWidget(plan_);

    connect(open_, &QPushButton::clicked, this, &ModelBar::openDialog);
    connect(cancel_, &QPushButton::clicked, this, &ModelBar::cancelLoadRequested);
    connect(device_, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i < 0 || i >= devices_.size()) return;
        const gui::DeviceEntry& d = devices_[i];
        deviceMem_->setText(
            d.memory_bytes > 0
                ? tr("%1 device memory").arg(gui::bytes_text(static_cast<uint64_t>(d.memory_bytes)))
                : QString());
        emit deviceChanged(d);
    });
}

void ModelBar::setDevices(const QList<gui::DeviceEntry>& devices, const QString& vulkan_error) {
    const QSignalBlocker block(device_);
    devices_ = devices;
    device_->clear();
    for (const gui::DeviceEntry& d : devices) {
        const QString label =
            d.backend == "cpu" ? d.name : QStringLiteral("%1: %2").arg(d.selector, d.name);
        device_->addItem(label);
    }
    device_->setToolTip(
        vulkan_error.isEmpty()
            ? tr("Device the model runs on; picking another loads the model there")
            : tr("Vulkan is not available: %1\nThe CPU reference is offered instead.")
                  .arg(vulkan_error));
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
    if (pick < devices_.size()) {
        const gui::DeviceEntry& d = devices_[pick];
        deviceMem_->setText(
            d.memory_bytes > 0
                ? tr("%1 device memory").arg(gui::bytes_text(static_cast<uint64_t>(d.memory_bytes)))
                : QString());
    }
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
    plan_->setText(plan.fits || plan.text.isEmpty()
                       ? plan.text
                       : tr("<span style='color:#b00020'>%1 (does not fit)</span>")
                             .arg(plan.text.toHtmlEscaped()));
    plan_->setToolTip(plan.tooltip);
}

void ModelBar::setModel(const gui::ModelInfo& info) {
    if (info.path.isEmpty()) {
        model_->setText(tr("No model loaded"));
        model_->setToolTip({});
        pathTip_.clear();
        return;
    }
    // The file name first: a model and its quantized copies share
    // general.name, so the name alone does not say which file is loaded.
    model_->setText(
        QStringLiteral("<b>%1</b> · %2")
            .arg(QFileInfo(info.path).fileName().toHtmlEscaped(), info.summary().toHtmlEscaped()));
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
