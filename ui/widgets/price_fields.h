#pragma once
// A target's price as three fields on one row: per hour, per million input
// tokens, per million output tokens (cost/price.h). 0 shows "none"; a price
// per hour beside per-token prices is refused by price(). The Batch and
// Compare tabs use it.

#include <QString>
#include <QWidget>
#include <optional>

#include "cost/price.h"

class QDoubleSpinBox;

namespace wb::ui {

class PriceFields : public QWidget {
    Q_OBJECT
  public:
    /// `hour_basis`: what the price per hour is charged on, for its tooltip
    /// ("the engine's busy time").
    explicit PriceFields(const QString& hour_basis, QWidget* parent = nullptr);

    /// The price the fields give: nullopt when all are 0. Throws
    /// std::invalid_argument (cost::price_from_fields' sentence) for a
    /// price per hour beside per-token prices.
    std::optional<cost::Price> price() const;
    /// Sets the three fields (0 = none).
    void setPrice(double per_hour, double per_m_input, double per_m_output);

  private:
    QDoubleSpinBox* perHour_;
    QDoubleSpinBox* perMInput_;
    QDoubleSpinBox* perMOutput_;
};

}  // namespace wb::ui
