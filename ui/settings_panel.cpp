#include "ui/settings_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>

namespace wb::ui {

namespace {

QDoubleSpinBox* dspin(double lo, double hi, double step, int decimals, const QString& tip) {
    auto* s = new QDoubleSpinBox;
    s->setRange(lo, hi);
    s->setSingleStep(step);
    s->setDecimals(decimals);
    s->setToolTip(tip);
    return s;
}

QSpinBox* ispin(int lo, int hi, const QString& tip) {
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    s->setToolTip(tip);
    return s;
}

}  // namespace

SettingsPanel::SettingsPanel(QWidget* parent) : QWidget(parent) {
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    temp_ = dspin(0, 5, 0.05, 2, tr("0 = greedy (always the most likely token)"));
    topK_ = ispin(0, 100000, tr("Keep the k most likely tokens; 0 = off"));
    topP_ = dspin(0, 1, 0.01, 2,
                  tr("Keep the smallest set of tokens whose probability reaches p; 1 = off"));
    minP_ = dspin(0, 1, 0.01, 2, tr("Drop tokens less likely than min-p × the top token; 0 = off"));
    repeat_ = dspin(0.5, 3, 0.05, 2, tr("Repetition penalty over the last 64 tokens; 1 = off"));
    seed_ = new QLineEdit;
    seed_->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]{1,19}"), seed_));
    seed_->setToolTip(tr("RNG seed: the same seed and settings give the same tokens"));
    fixedSeed_ = new QCheckBox(tr("fixed"));
    fixedSeed_->setObjectName("fixedSeed");
    fixedSeed_->setToolTip(
        tr("Checked: every request uses this seed (repeatable replies; Regenerate still draws "
           "a new one). Unchecked: each request draws a random seed; the seed used is shown "
           "in the reply's footer and logged."));
    connect(fixedSeed_, &QCheckBox::toggled, seed_, &QWidget::setEnabled);
    maxTokens_ = ispin(1, 1 << 20, tr("Tokens generated per reply at most"));
    nCtx_ = ispin(0, 1 << 20,
                  tr("Context: the KV pool's size in tokens, shared by every running request; "
                     "one request alone may use all of it, and a conversation longer than it "
                     "must drop turns. auto (0): the model's training context per request, at "
                     "most 4096, times n_parallel, as workbench-cli does. The loaded model is "
                     "loaded again with it when you finish editing (Enter or leaving the "
                     "field)"));
    nCtx_->setSpecialValueText(tr("auto (trained context per request)"));
    nCtx_->setSingleStep(256);
    nCtx_->setObjectName("nCtx");
    nParallel_ = ispin(1, 256,
                       tr("n_parallel: the most requests (sequences) running at once, sharing "
                          "the KV pool; more wait in the queue. The loaded model is loaded "
                          "again with it when you finish editing"));
    nParallel_->setObjectName("nParallel");
    kvType_ = new QComboBox;
    kvType_->setObjectName("kvType");
    kvType_->addItems(gui::GenSettings::kvTypeNames());
    kvType_->setToolTip(
        tr("KV cache type (llama.cpp's -ctk/-ctv): f16 (default) holds each cached key and value "
           "in 2 bytes; f32 in 4 (exact, twice the memory); q8_0 and q4_0 in 8.5 and 4.5 bits "
           "(blocks of 32 with one scale), for longer contexts in the same memory, for models "
           "whose head dimension is a multiple of 32. The loaded model is loaded again with it"));
    // A reload costs seconds: typing "4096" must not reload at "4", "40"...
    for (QSpinBox* s : {nCtx_, nParallel_}) s->setKeyboardTracking(false);

    form->addRow(tr("Temperature"), temp_);
    form->addRow(tr("Top-k"), topK_);
    form->addRow(tr("Top-p"), topP_);
    form->addRow(tr("Min-p"), minP_);
    form->addRow(tr("Repetition penalty"), repeat_);
    auto* seedRow = new QHBoxLayout;
    seedRow->addWidget(seed_, 1);
    seedRow->addWidget(fixedSeed_);
    form->addRow(tr("Seed"), seedRow);
    form->addRow(tr("Max tokens"), maxTokens_);
    form->addRow(tr("Context (KV pool)"), nCtx_);
    form->addRow(tr("Max concurrent (n_parallel)"), nParallel_);
    form->addRow(tr("KV cache type"), kvType_);
    auto* reset = new QPushButton(tr("Defaults"));
    reset->setToolTip(tr("Restore the default settings"));
    form->addRow(QString(), reset);
    connect(reset, &QPushButton::clicked, this, [this] {
        setSettings(gui::GenSettings{});
        emitChanged(true);
    });

    for (QDoubleSpinBox* s : {temp_, topP_, minP_, repeat_})
        connect(s, &QDoubleSpinBox::valueChanged, this, [this] { emitChanged(false); });
    for (QSpinBox* s : {topK_, maxTokens_})
        connect(s, &QSpinBox::valueChanged, this, [this] { emitChanged(false); });
    // Each committed value is saved at once (valueChanged: Enter, focus out,
    // arrow steps); the reload is asked for only when the user leaves the
    // field or presses Enter, so arrow clicks do not reload once per step.
    for (QSpinBox* s : {nCtx_, nParallel_}) {
        connect(s, &QSpinBox::valueChanged, this, [this] { emitChanged(false); });
        connect(s, &QSpinBox::editingFinished, this, [this] { emitChanged(true); });
    }
    connect(kvType_, &QComboBox::activated, this, [this] { emitChanged(true); });
    // The run log's data (prompts and answers are often customer data).
    noText_ = new QCheckBox(tr("Do not log text"));
    noText_->setObjectName("noText");
    noText_->setToolTip(
        tr("New chat and batch runs are logged without their prompt and answer text: token "
           "counts, timings, settings and a SHA-256 of each text are kept. History shows "
           "[redacted]."));
    retentionDays_ = ispin(0, 100000,
                           tr("Delete prompts and answers after N days (0 = keep): when the app "
                              "starts, the text of older responses is removed from the run log "
                              "and the file is compacted, so the text is gone from the disk; "
                              "rows, token counts and timings stay"));
    retentionDays_->setObjectName("textRetentionDays");
    retentionDays_->setSpecialValueText(tr("keep"));
    retentionDays_->setSuffix(tr(" days"));
    form->addRow(QString(), noText_);
    form->addRow(tr("Delete text after"), retentionDays_);
    connect(noText_, &QCheckBox::toggled, this, [this] {
        if (!quiet_) emit runLogPrivacyChanged(noText(), textRetentionDays());
    });
    connect(retentionDays_, &QSpinBox::valueChanged, this, [this] {
        if (!quiet_) emit runLogPrivacyChanged(noText(), textRetentionDays());
    });

    connect(seed_, &QLineEdit::editingFinished, this, [this] { emitChanged(false); });
    connect(fixedSeed_, &QCheckBox::toggled, this, [this] { emitChanged(false); });
    setSettings(gui::GenSettings{});
}

gui::GenSettings SettingsPanel::settings() const {
    gui::GenSettings s;
    s.temperature = temp_->value();
    s.top_k = topK_->value();
    s.top_p = topP_->value();
    s.min_p = minP_->value();
    s.repeat_penalty = repeat_->value();
    s.seed = seed_->text().toULongLong();
    s.fixed_seed = fixedSeed_->isChecked();
    s.max_tokens = maxTokens_->value();
    s.n_ctx = nCtx_->value();
    s.n_parallel = nParallel_->value();
    s.kv_type = kvType_->currentText();
    return s;
}

void SettingsPanel::setSettings(const gui::GenSettings& s) {
    quiet_ = true;
    temp_->setValue(s.temperature);
    topK_->setValue(s.top_k);
    topP_->setValue(s.top_p);
    minP_->setValue(s.min_p);
    repeat_->setValue(s.repeat_penalty);
    seed_->setText(QString::number(s.seed));
    fixedSeed_->setChecked(s.fixed_seed);
    seed_->setEnabled(s.fixed_seed);
    maxTokens_->setValue(s.max_tokens);
    nCtx_->setValue(s.n_ctx);
    nParallel_->setValue(s.n_parallel);
    kvType_->setCurrentText(s.kv_type);
    quiet_ = false;
}

void SettingsPanel::setRunLogPrivacy(bool no_text, int retention_days) {
    quiet_ = true;
    noText_->setChecked(no_text);
    retentionDays_->setValue(retention_days);
    quiet_ = false;
}

bool SettingsPanel::noText() const {
    return noText_->isChecked();
}

int SettingsPanel::textRetentionDays() const {
    return retentionDays_->value();
}

void SettingsPanel::emitChanged(bool reload) {
    if (!quiet_) emit changed(settings(), reload);
}

}  // namespace wb::ui
