#pragma once
// The History tab: the run log (SQLite, app/runlog schema) as a table, newest
// first, filtered by model, run, date range, finish reason and a text
// search over prompt and output. Double-click opens one response with all
// its tags (model version, environment, settings, timings). Export writes
// the filtered rows to CSV (RFC 4180) or JSON Lines with a progress bar
// through the run log's own exporter (app/runlog/exporter.h, the one
// `workbench-cli export` uses) on a worker thread. The filters are one
// runlog::ExportFilter: the table's rows are selected with its filter_sql(),
// so the table and the export always select the same rows. Rows of two
// runs selected, "Compare environments" shows runlog::diff_runs of the two
// (RunDiffDialog): what differs between them and their outputs.
//
// Reads through the run log's query API (runlog::HistoryReader, its own
// read-only connection; no SQL here); the writer is the app's RunRecorder
// (WAL mode lets both work at once).

#include <QPair>
#include <QString>
#include <QStringList>
#include <QVariantList>
#include <QWidget>
#include <functional>
#include <memory>

#include "runlog/exporter.h"
#include "runlog/integrity.h"

class QComboBox;
class QDateEdit;
class QLabel;
class QLineEdit;
class QStandardItemModel;
class QTableView;
class QTableWidget;
class QTimer;
class QCheckBox;
class QAction;

namespace wb::runlog {
class HistoryReader;
}

namespace wb::ui {

class HistoryView : public QWidget {
    Q_OBJECT
  public:
    explicit HistoryView(QWidget* parent = nullptr);
    ~HistoryView() override;

    /// Opens the run log at `path` (read-only) and shows it.
    bool setDatabase(const QString& path);
    /// No run log to show (it could not be opened): says `why` in place of
    /// the row count and disables the filters and Export.
    void setUnavailable(const QString& why);
    /// Shows what is missing from a damaged run log opened read-only
    /// (runlog::inspect_log's counts) in a warning above the table, so the
    /// rows shown are never taken for the whole log; a healthy inspection
    /// hides it. The warning stays until the next setDatabase().
    void setDamage(const runlog::LogInspection& inspection);
    /// The warning's text ("" when none is shown).
    QString damageWarning() const;
    /// Re-runs the query (keeps the filters). Called when responses are logged.
    void refresh();
    /// Refreshes at most once a second however often it is asked.
    void refreshSoon();
    /// Rows the current filters match (shown in the table).
    int rowCount() const;
    void setSearchText(const QString& text);
    void setFinishReason(const QString& reason);  ///< "" = any

    /// The filters as set in the widgets (model version, run, finish
    /// reason, local-date range [from 00:00, to + 1 day 00:00), search text).
    runlog::ExportFilter filter() const;

    /// Writes the filtered rows to `path` as "csv" or "jsonl" (blocking; for
    /// tests, the Export button runs exportFile on a worker). Returns the
    /// number of rows written, or -1 with `error` set.
    qint64 exportTo(const QString& path, const QString& format, QString* error,
                    const runlog::ExportProgress& progress = {}) const;

    /// The export: runlog::export_responses_readonly() on the run log at
    /// `db_path` (its own read-only connection, so any thread), oldest
    /// first, to the file `path` ("csv" or "jsonl"). Returns the rows
    /// written, or -1 with `error` set to a sentence naming the file and
    /// the cause (a full disk, the exporter's message). A regular file left
    /// half written is removed; anything else (a device such as /dev/full)
    /// is never removed.
    /// The two runs the selected rows belong to, older (lower id) first;
    /// {-1, -1} unless the selection spans exactly two runs.
    QPair<qint64, qint64> selectedRuns() const;
    /// "Compare environments" (button, the table's context menu,
    /// Ctrl+Shift+D): runlog::diff_runs of selectedRuns() in a
    /// RunDiffDialog (non-modal, object name "runDiffDialog", deleted on
    /// close). Does nothing unless two runs are selected; a failure to read
    /// them is said in the row-count line.
    void compareEnvironments();

    static qint64 exportFile(const QString& db_path, const runlog::ExportFilter& filter,
                             const QString& path, const QString& format, QString* error,
                             const runlog::ExportProgress& progress = {});

  private:
    /// Refills the model and run lists when the log has gained a model
    /// version or a run since the last fill (keeps the selection).
    void reloadFilterLists();
    void openResponse(const QModelIndex& index);
    void exportDialog();

    /// Fills the events panel with the run filter's run's run_events
    /// (server start, canary steps, promotion, rollback, stop); hidden when
    /// no run is picked or it has none.
    void showRunEvents();

    std::unique_ptr<runlog::HistoryReader> reader_;  // null: no log shown
    QString dbPath_;
    QStandardItemModel* model_;
    QTableView* table_;
    QComboBox* modelFilter_;
    QComboBox* runFilter_;
    QComboBox* reasonFilter_;
    QCheckBox* dateOn_;
    QDateEdit* from_;
    QDateEdit* to_;
    QLineEdit* search_;
    QLabel* count_;
    QLabel* damage_;        // the damaged-log warning above the table (hidden when none)
    QWidget* eventsBox_;    // the picked run's events, under the table (hidden when none)
    QTableWidget* events_;  // [n_events, (time, event, details)]
    QTimer* throttle_;
    QWidget* exportBtn_;
    QWidget* compareBtn_;  // enabled while the selection spans exactly two runs
    QAction* compareAct_;
    // (model versions, newest run id) the filter lists were filled from.
    QPair<qint64, qint64> listedKey_{-1, -1};
};

}  // namespace wb::ui
