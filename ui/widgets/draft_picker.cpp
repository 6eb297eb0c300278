#include "ui/widgets/draft_picker.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <algorithm>

namespace wb::ui {

DraftPicker::DraftPicker(QWidget* parent) : QWidget(parent) {
    auto* l = new QHBoxLayout(this);
    l->setContentsMargins(0, 0, 0, 0);
    auto* label = new QLabel(tr("&Draft:"));
    kind_ = new QComboBox;
    kind_->setObjectName("chatDraft");
    // A long draft file name must not widen the window (small screens).
    kind_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    kind_->setMinimumContentsLength(6);
    kind_->setToolTip(
        tr("Speculative decoding: a cheap draft proposes tokens and the model checks them all in "
           "one pass. n-gram looks the last tokens up earlier in the conversation (pays off when "
           "the reply repeats the text); a model file is a smaller model with the same "
           "vocabulary. Greedy replies are unchanged. Drafts are checked in the same pass as other "
           "replies' tokens when several run."));
    label->setBuddy(kind_);
    k_ = new QSpinBox;
    k_->setObjectName("chatDraftK");
    k_->setRange(1, 64);
    k_->setPrefix(tr("k "));
    k_->setToolTip(tr("Most draft tokens per model pass (adapts within 1..k)"));
    l->addWidget(label);
    l->addWidget(kind_);
    l->addWidget(k_);
    fill();
    connect(kind_, &QComboBox::activated, this, &DraftPicker::onPicked);
    connect(k_, &QSpinBox::valueChanged, this, [this](int k) {
        if (k == choice_.k) return;
        choice_.k = k;
        emit changed();
    });
}

void DraftPicker::fill() {
    const QSignalBlocker block(kind_);
    kind_->clear();
    kind_->addItem(tr("none"), "none");
    kind_->addItem(tr("n-gram"), "ngram");
    if (!choice_.file.isEmpty()) kind_->addItem(QFileInfo(choice_.file).fileName(), "model");
    kind_->addItem(tr("model file…"), "pick");
    const int row = kind_->findData(choice_.kind);
    kind_->setCurrentIndex(std::max(row, 0));
    if (!choice_.file.isEmpty())
        kind_->setItemData(kind_->findData("model"), choice_.file, Qt::ToolTipRole);
    const QSignalBlocker blockK(k_);
    k_->setValue(choice_.k);
    k_->setEnabled(choice_.kind != "none");
}

void DraftPicker::setChoice(const gui::SettingsStore::ChatDraft& c) {
    gui::SettingsStore::ChatDraft n = c;
    if (n.kind != "ngram" && n.kind != "model") n.kind = "none";
    // A remembered file that is gone (moved, deleted) would fail the
    // model's load: no draft instead.
    if (n.kind == "model" && (n.file.isEmpty() || !QFileInfo::exists(n.file))) n.kind = "none";
    n.k = std::clamp(n.k, 1, 64);
    if (n.kind != "model" && n.file.isEmpty()) n.file = choice_.file;  // keep the last file offered
    const QString before = draftFile();
    const bool same = n == choice_;
    choice_ = n;
    fill();
    if (same) return;
    emit changed();
    if (draftFile() != before) emit draftFileChanged(draftFile());
}

void DraftPicker::onPicked(int row) {
    const QString kind = kind_->itemData(row).toString();
    gui::SettingsStore::ChatDraft n = choice_;
    if (kind == "pick") {
        const QString file = QFileDialog::getOpenFileName(
            this, tr("Draft model (same vocabulary as the model)"), QFileInfo(choice_.file).path(),
            tr("GGUF models (*.gguf);;All files (*)"));
        if (file.isEmpty()) {
            fill();  // cancelled: the previous choice stays
            return;
        }
        n.kind = "model";
        n.file = file;
    } else {
        n.kind = kind;
    }
    setChoice(n);
}

QString DraftPicker::draftFile() const {
    return choice_.kind == "model" ? choice_.file : QString();
}

}  // namespace wb::ui
