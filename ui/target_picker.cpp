#include "ui/target_picker.h"

#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <stdexcept>

#include "desktop/settings_store.h"
#include "load/client.h"

namespace wb::ui {

TargetPicker::TargetPicker(const QString& group, QWidget* parent) : QWidget(parent), group_(group) {
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    auto* label = new QLabel(tr("Send &to:"));
    combo_ = new QComboBox;
    combo_->setObjectName(group + "Target");
    combo_->setToolTip(
        tr("Where messages go: the model loaded in this app, or a remote OpenAI-compatible "
           "endpoint (vLLM, llama-server, Ollama, another workbench's server)"));
    combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    label->setBuddy(combo_);
    add_ = new QPushButton(tr("Add endpoint…"));
    add_->setToolTip(
        tr("Add a remote endpoint: its base URL, model id and API key (kept in the desktop's "
           "secret store, never in the settings file or the run log)"));
    remove_ = new QPushButton(tr("Remove"));
    remove_->setToolTip(tr("Remove the chosen endpoint and its stored API key"));
    row->addWidget(label);
    row->addWidget(combo_);
    row->addWidget(add_);
    row->addWidget(remove_);
    row->addStretch();
    fill();
    connect(combo_, &QComboBox::activated, this, [this] {
        remove_->setEnabled(isRemote());
        save();
        emit changed();
    });
    connect(add_, &QPushButton::clicked, this, &TargetPicker::addDialog);
    connect(remove_, &QPushButton::clicked, this, [this] {
        const gui::RemoteTarget t = remote();
        if (QMessageBox::question(this, tr("Remove endpoint"),
                                  tr("Remove %1 and its stored API key?").arg(t.label())) ==
            QMessageBox::Yes)
            removeCurrent();
    });
}

void TargetPicker::fill() {
    const int keep = combo_->currentIndex();
    combo_->clear();
    combo_->addItem(tr("Loaded model"));
    for (const gui::RemoteTarget& t : targets_)
        combo_->addItem(t.label() + (t.has_key ? tr(" (key stored)") : QString()));
    combo_->setCurrentIndex(std::clamp(keep, 0, static_cast<int>(targets_.size())));
    remove_->setEnabled(isRemote());
}

void TargetPicker::setStore(gui::SettingsStore* store) {
    store_ = store;
    if (!store_) return;
    targets_ = gui::read_remote_targets(store_->raw());
    fill();
    const int chosen = store_->raw().value(group_ + "/target", 0).toInt();
    setCurrent(chosen);
}

void TargetPicker::reload() {
    if (!store_) return;
    const gui::RemoteTarget chosen = remote();
    const bool was_remote = isRemote();
    targets_ = gui::read_remote_targets(store_->raw());
    int index = 0;
    for (qsizetype i = 0; was_remote && i < targets_.size(); ++i)
        if (targets_[i].base_url == chosen.base_url && targets_[i].model == chosen.model)
            index = static_cast<int>(i) + 1;
    const QSignalBlocker block(combo_);
    fill();
    combo_->setCurrentIndex(index);
    remove_->setEnabled(isRemote());
    if (was_remote && index == 0) emit changed();  // removed elsewhere
}

void TargetPicker::showEvent(QShowEvent* event) {
    reload();
    QWidget::showEvent(event);
}

void TargetPicker::save() {
    // The choice only: the list is written where it changes (addTarget,
    // removeCurrent), after re-reading it, so a picker that has not seen
    // another tab's addition never writes it away.
    if (!store_) return;
    store_->raw().setValue(group_ + "/target", current());
    store_->sync();
}

void TargetPicker::saveList() {
    if (!store_) return;
    gui::write_remote_targets(store_->raw(), targets_);
    store_->sync();
}

bool TargetPicker::isRemote() const {
    return current() > 0;
}

gui::RemoteTarget TargetPicker::remote() const {
    const int i = current() - 1;
    return i >= 0 && i < targets_.size() ? targets_[i] : gui::RemoteTarget{};
}

int TargetPicker::current() const {
    return std::max(0, combo_->currentIndex());
}

void TargetPicker::setCurrent(int index) {
    combo_->setCurrentIndex(std::clamp(index, 0, static_cast<int>(targets_.size())));
    remove_->setEnabled(isRemote());
    save();
    emit changed();
}

bool TargetPicker::addTarget(gui::RemoteTarget target, const QString& api_key, QString* error) {
    target.base_url = target.base_url.trimmed();
    target.model = target.model.trimmed();
    try {
        load::check_base_url(target.base_url.toStdString());
    } catch (const std::invalid_argument& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return false;
    }
    reload();
    if (!api_key.isEmpty()) {
        const QString err = keys_.write(gui::key_account(target.base_url), api_key);
        if (!err.isEmpty()) {
            if (error)
                *error = err + tr(" — the endpoint was not added (keys are never written to the "
                                  "settings file)");
            return false;
        }
        target.has_key = true;
    } else {
        // A key stored earlier for this URL (another model id) still applies.
        target.has_key = keys_.read(gui::key_account(target.base_url)).has_value();
    }
    qsizetype at = -1;
    for (qsizetype i = 0; i < targets_.size(); ++i)
        if (targets_[i].base_url == target.base_url && targets_[i].model == target.model) at = i;
    if (at < 0) {
        targets_.append(target);
        at = targets_.size() - 1;
    } else {
        targets_[at] = target;
    }
    saveList();
    fill();
    setCurrent(static_cast<int>(at) + 1);
    return true;
}

void TargetPicker::removeCurrent() {
    reload();
    const int i = current() - 1;
    if (i < 0 || i >= targets_.size()) return;
    const gui::RemoteTarget gone = targets_.takeAt(i);
    saveList();
    // The key goes with the last endpoint of its account.
    bool shared = false;
    const QString account = gui::key_account(gone.base_url);
    for (const gui::RemoteTarget& t : targets_)
        shared = shared || gui::key_account(t.base_url) == account;
    if (gone.has_key && !shared) (void)keys_.remove(account);
    combo_->setCurrentIndex(0);
    fill();
    setCurrent(0);
}

std::optional<QString> TargetPicker::apiKey(QString* error) const {
    if (error) error->clear();
    const gui::RemoteTarget t = remote();
    if (!t.has_key) return QString();
    QString err;
    std::optional<QString> key = keys_.read(gui::key_account(t.base_url), &err);
    if (key) return key;
    if (error)
        *error = err.isEmpty() ? tr("no API key is stored for %1 in the desktop's secret store "
                                    "any more: add the endpoint again with its key")
                                     .arg(t.base_url)
                               : err;
    return std::nullopt;
}

void TargetPicker::addDialog() {
    QDialog d(this);
    d.setWindowTitle(tr("Add remote endpoint"));
    auto* form = new QFormLayout(&d);
    auto* url = new QLineEdit;
    url->setPlaceholderText(QStringLiteral("http://gpu-box:8000/v1"));
    auto* model = new QLineEdit;
    model->setPlaceholderText(tr("the endpoint's model id (empty: its default)"));
    auto* key = new QLineEdit;
    key->setEchoMode(QLineEdit::Password);
    key->setPlaceholderText(tr("optional; kept in the desktop's secret store"));
    form->addRow(tr("Base &URL:"), url);
    form->addRow(tr("&Model:"), model);
    form->addRow(tr("API &key:"), key);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &d, [&] {
        QString err;
        if (addTarget({url->text(), model->text(), false}, key->text(), &err)) {
            d.accept();
        } else {
            QMessageBox::warning(&d, tr("Endpoint not added"), err);
        }
    });
    connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    d.exec();
}

}  // namespace wb::ui
