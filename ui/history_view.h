#pragma once
// The History tab: the run log (SQLite, app/runlog schema) as a table, newest
// first, filtered by model, run, date range, finish reason and a text
// search over prompt and output. Double-click opens one response with all
// its tags (model version, environment, settings, timings). Export writes
// the filtered rows to CSV (RFC 4180) or JSON Lines with a progress bar,
// streaming rows from a forward-only query in a worker thread.
//
// Reads through its own read-only QSQLITE connection; the writer is the
// app's RunRecorder (WAL mode lets both work at once).

#include <QString>
#include <QStringList>
#include <QVariantList>
#include <QWidget>
#include <functional>

class QComboBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QSqlQueryModel;
class QTableView;
class QTimer;
class QCheckBox;

namespace wb::ui {

class HistoryView : public QWidget {
    Q_OBJECT
  public:
    explicit HistoryView(QWidget* parent = nullptr);
    ~HistoryView() override;

    /// Opens the run log at `path` (read-only) and shows it.
    bool setDatabase(const QString& path);
    /// Re-runs the query (keeps the filters). Called when responses are logged.
    void refresh();
    /// Refreshes at most once a second however often it is asked.
    void refreshSoon();
    /// Rows the current filters match (shown in the table).
    int rowCount() const;
    void setSearchText(const QString& text);
    void setFinishReason(const QString& reason);  ///< "" = any

    /// Writes the filtered rows to `path` as "csv" or "jsonl" (blocking;
    /// used by the Export button's worker and by tests). Returns the number
    /// of rows written, or -1 with `error` set.
    qint64 exportTo(const QString& path, const QString& format, QString* error,
                    const std::function<void(qint64 done, qint64 total)>& progress = {}) const;

    /// The export itself: opens its own connection to `db_path` (so it may
    /// run on any thread), selects the rows `where`/`binds` match, oldest
    /// first, and streams them to `path`.
    static qint64 exportRows(const QString& db_path, const QString& where,
                             const QVariantList& binds, const QString& path, const QString& format,
                             QString* error,
                             const std::function<void(qint64 done, qint64 total)>& progress);

  private:
    /// WHERE clause and its bound values for the current filters.
    QString whereClause(QVariantList* binds) const;
    void reloadFilterLists();
    void openResponse(const QModelIndex& index);
    void exportDialog();

    QString conn_;  // QSqlDatabase connection name
    QString dbPath_;
    QSqlQueryModel* model_;
    QTableView* table_;
    QComboBox* modelFilter_;
    QComboBox* runFilter_;
    QComboBox* reasonFilter_;
    QCheckBox* dateOn_;
    QDateEdit* from_;
    QDateEdit* to_;
    QLineEdit* search_;
    QLabel* count_;
    QTimer* throttle_;
};

}  // namespace wb::ui
