#include "ui/error_dialog.h"

#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

namespace wb::ui {

ErrorDialog::ErrorDialog(const gui::UserError& e, QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Inference Workbench"));
    setObjectName("errorDialog");
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    auto* icon = new QLabel;
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(40, 40));
    icon->setAlignment(Qt::AlignTop);
    top->addWidget(icon);
    auto* text = new QVBoxLayout;
    auto* title = new QLabel(QStringLiteral("<b>%1</b>").arg(e.title.toHtmlEscaped()));
    title->setWordWrap(true);
    text->addWidget(title);
    auto add_row = [&](const QString& label, const QString& value) {
        if (value.isEmpty()) return;
        auto* l = new QLabel(QStringLiteral("<i>%1</i> %2").arg(label, value.toHtmlEscaped()));
        l->setWordWrap(true);
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
        text->addWidget(l);
    };
    add_row(tr("What:"), e.what);
    add_row(tr("Where:"), e.where);
    add_row(tr("What to do:"), e.action);
    top->addLayout(text, 1);
    layout->addLayout(top);

    auto* buttons = new QDialogButtonBox;
    if (e.kind == gui::UserError::Kind::NoVulkanDevice ||
        e.kind == gui::UserError::Kind::ModelTooLarge) {
        QPushButton* cpu = buttons->addButton(tr("Use CPU"), QDialogButtonBox::AcceptRole);
        connect(cpu, &QPushButton::clicked, this, [this] { done(UseCpu); });
        cpu->setDefault(true);
    }
    if (e.kind != gui::UserError::Kind::NoVulkanDevice && e.kind != gui::UserError::Kind::Other) {
        QPushButton* other =
            buttons->addButton(tr("Open another model…"), QDialogButtonBox::ActionRole);
        connect(other, &QPushButton::clicked, this, [this] { done(OpenOther); });
    }
    QPushButton* close = buttons->addButton(QDialogButtonBox::Close);
    connect(close, &QPushButton::clicked, this, [this] { done(Close); });
    layout->addWidget(buttons);
    setMinimumWidth(480);
}

ErrorDialog::Choice ErrorDialog::ask(const gui::UserError& e, QWidget* parent) {
    ErrorDialog d(e, parent);
    return static_cast<Choice>(d.exec());
}

}  // namespace wb::ui
