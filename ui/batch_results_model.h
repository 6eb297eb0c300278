#pragma once
// Table model of a batch run's finished requests: id, prompt, output,
// finish reason, queue wait, TTFT, TPOT, end-to-end (ms) and generated
// tokens. Rows are appended as requests finish. Qt::UserRole gives the raw
// value (numbers as double) so a proxy sorts numerically.

#include <QAbstractTableModel>
#include <QList>

#include "desktop/request_types.h"

namespace wb::ui {

class BatchResultsModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        Id,
        Prompt,
        Output,
        Finish,
        QueueWait,
        Ttft,
        Tpot,
        E2e,
        Tokens,
        Cached,
        kColumns
    };

    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    void append(const gui::RequestResult& r);
    void clear();
    const gui::RequestResult& result(int row) const { return rows_[row]; }

  private:
    QList<gui::RequestResult> rows_;
};

}  // namespace wb::ui
