#include "ui/widgets/price_fields.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>

namespace wb::ui {

namespace {

QDoubleSpinBox* price_box(const QString& tip) {
    auto* b = new QDoubleSpinBox;
    b->setRange(0, 1e5);  // a narrow box: the tabs fit a 1366 px wide window
    b->setDecimals(3);
    b->setSingleStep(0.1);
    b->setSpecialValueText(QObject::tr("none"));
    b->setToolTip(tip);
    return b;
}

}  // namespace

PriceFields::PriceFields(const QString& hour_basis, QWidget* parent) : QWidget(parent) {
    perHour_ = price_box(tr("Cost: price per hour (a GPU-hour), charged on %1. Excludes the "
                            "per-token prices.")
                             .arg(hour_basis));
    perHour_->setObjectName("pricePerHour");
    perMInput_ = price_box(tr("Cost: price per million input (prompt) tokens"));
    perMInput_->setObjectName("pricePerMInput");
    perMOutput_ = price_box(tr("Cost: price per million output (generated) tokens"));
    perMOutput_->setObjectName("pricePerMOutput");
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Price per hour")));
    row->addWidget(perHour_);
    row->addWidget(new QLabel(tr("per M input")));
    row->addWidget(perMInput_);
    row->addWidget(new QLabel(tr("per M output")));
    row->addWidget(perMOutput_);
    row->addStretch();
}

std::optional<cost::Price> PriceFields::price() const {
    return cost::price_from_fields(perHour_->value(), perMInput_->value(), perMOutput_->value());
}

void PriceFields::setPrice(double per_hour, double per_m_input, double per_m_output) {
    perHour_->setValue(per_hour);
    perMInput_->setValue(per_m_input);
    perMOutput_->setValue(per_m_output);
}

}  // namespace wb::ui
