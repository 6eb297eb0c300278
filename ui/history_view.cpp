#include "ui/history_view.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateEdit>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTextBrowser>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>

#include "runlog/history.h"
#include "runlog/run_diff.h"
#include "runlog/time_utc.h"
#include "ui/run_diff_dialog.h"

namespace wb::ui {

namespace {

// The table's columns (everything else is in the detail view).
const QStringList kColumns = {"ID",     "Started", "Run",    "Model",     "Request",   "Finish",
                              "Prompt", "Output",  "Tokens", "TTFT (ms)", "TPOT (ms)", "E2E (ms)"};

QStandardItem* cell(const QVariant& v) {
    auto* it = new QStandardItem;
    it->setData(v, Qt::DisplayRole);
    it->setEditable(false);
    return it;
}

// A time with a fixed number of decimals per column ("12.0", not "12"),
// right-aligned so the decimal points line up; empty when not measured.
QStandardItem* fixed(const std::optional<double>& v, int decimals) {
    QStandardItem* it = cell(v ? QVariant(QString::number(*v, 'f', decimals)) : QVariant());
    it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return it;
}

// The Run column: "<kind> #<id>", the run id as its UserRole data (for
// "Compare environments").
QStandardItem* run_cell(const runlog::HistoryRow& r) {
    QStandardItem* it =
        cell(QStringLiteral("%1 #%2").arg(QString::fromStdString(r.run_kind)).arg(r.run_id));
    it->setData(QVariant::fromValue(static_cast<qlonglong>(r.run_id)), Qt::UserRole);
    return it;
}

}  // namespace

HistoryView::HistoryView(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    auto* filters = new QHBoxLayout;
    modelFilter_ = new QComboBox;
    modelFilter_->setToolTip(tr("Only responses of this model"));
    runFilter_ = new QComboBox;
    runFilter_->setToolTip(tr("Only responses of this run"));
    reasonFilter_ = new QComboBox;
    reasonFilter_->addItem(tr("any finish"), QString());
    // "context": the sequence filled the context; "interrupted": a response
    // whose program was killed while it streamed (its row keeps the text
    // logged until then).
    for (const char* r :
         {"stop", "length", "context", "timeout", "cancelled", "rejected", "error", "interrupted"})
        reasonFilter_->addItem(r, QString::fromLatin1(r));
    dateOn_ = new QCheckBox(tr("From"));
    from_ = new QDateEdit(QDate::currentDate().addDays(-7));
    to_ = new QDateEdit(QDate::currentDate());
    for (QDateEdit* d : {from_, to_}) {
        d->setCalendarPopup(true);
        d->setEnabled(false);
    }
    search_ = new QLineEdit;
    search_->setPlaceholderText(tr("Search prompt and output"));
    search_->setClearButtonEnabled(true);
    // The model and run names can be long ("#12 batch stories20.jsonl"):
    // the combos show a few characters and full names in their popups, so
    // the search box keeps a usable width.
    for (QComboBox* c : {modelFilter_, runFilter_}) {
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(10);
    }
    search_->setMinimumWidth(search_->fontMetrics().horizontalAdvance(search_->placeholderText()) +
                             40);
    search_->setToolTip(tr("Search prompt and output (Ctrl+F)"));
    auto* find = new QAction(this);
    find->setShortcut(QKeySequence::Find);
    find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(find, &QAction::triggered, this, [this] {
        search_->setFocus(Qt::ShortcutFocusReason);
        search_->selectAll();
    });
    addAction(find);
    auto* exportBtn = new QPushButton(tr("Export…"));
    exportBtn_ = exportBtn;
    exportBtn->setToolTip(tr("Write the rows the filters match to CSV or JSON Lines"));
    // Two rows: search, dates and Export, then the other filters. In one
    // row the tab's minimum width squeezed the settings dock to a sliver;
    // the dates beside the search keep the tab narrow enough for a 1366 px
    // wide window with the settings and the charts beside it.
    auto* searchRow = new QHBoxLayout;
    searchRow->addWidget(search_, 1);
    searchRow->addWidget(dateOn_);
    searchRow->addWidget(from_);
    searchRow->addWidget(new QLabel(tr("to")));
    searchRow->addWidget(to_);
    searchRow->addWidget(exportBtn);
    // Environment drift between two runs: select rows of both.
    auto* compareBtn = new QPushButton(tr("Compare environments"));
    compareBtn->setObjectName("compareEnvironments");
    compareBtn->setToolTip(
        tr("Select rows of two runs: what differs between them (model, tokenizer, sampling, "
           "environment) and their outputs on the same prompts (Ctrl+Shift+D)"));
    compareBtn->setEnabled(false);
    compareBtn_ = compareBtn;
    layout->addLayout(searchRow);
    filters->addWidget(modelFilter_);
    filters->addWidget(runFilter_);
    filters->addWidget(reasonFilter_);
    filters->addStretch();
    filters->addWidget(compareBtn);  // this row has room; the search row does not
    layout->addLayout(filters);

    model_ = new QStandardItemModel(0, static_cast<int>(kColumns.size()), this);
    model_->setHorizontalHeaderLabels(kColumns);
    table_ = new QTableView;
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    compareAct_ = new QAction(tr("Compare environments"), this);
    compareAct_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
    compareAct_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    compareAct_->setEnabled(false);
    addAction(compareAct_);
    table_->setContextMenuPolicy(Qt::ActionsContextMenu);
    table_->addAction(compareAct_);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setWordWrap(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    table_->setToolTip(tr("Double-click a row to see the response with all its tags"));
    damage_ = new QLabel;
    damage_->setWordWrap(true);
    damage_->setTextFormat(Qt::PlainText);
    damage_->setStyleSheet("QLabel { background: #fff3cd; color: #664d03; padding: 6px; }");
    damage_->hide();
    layout->addWidget(damage_);
    layout->addWidget(table_, 1);
    // A server run's decisions (run_events): shown when the run filter
    // picks a run that has any, so a canary's steps and its promotion or
    // rollback read beside the requests they judged.
    auto* eventsBox = new QGroupBox(tr("Run events"));
    eventsBox->setObjectName("runEventsBox");
    eventsBox_ = eventsBox;
    auto* eventsLayout = new QVBoxLayout(eventsBox);
    events_ = new QTableWidget(0, 3);
    events_->setObjectName("runEvents");
    events_->setHorizontalHeaderLabels({tr("Time"), tr("Event"), tr("Details")});
    events_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    events_->setSelectionBehavior(QAbstractItemView::SelectRows);
    events_->verticalHeader()->hide();
    events_->horizontalHeader()->setStretchLastSection(true);
    events_->setWordWrap(false);
    events_->setToolTip(
        tr("What the server decided during this run: start, canary steps with "
           "their figures, promotion, rollback, stop (workbench-cli log events)"));
    eventsLayout->addWidget(events_);
    eventsBox_->hide();
    layout->addWidget(eventsBox_);
    count_ = new QLabel;
    count_->setWordWrap(true);  // long notices must not widen the tab
    layout->addWidget(count_);

    throttle_ = new QTimer(this);
    throttle_->setSingleShot(true);
    throttle_->setInterval(1000);
    connect(throttle_, &QTimer::timeout, this, &HistoryView::refresh);

    for (QComboBox* c : {modelFilter_, runFilter_, reasonFilter_})
        connect(c, &QComboBox::currentIndexChanged, this, &HistoryView::refresh);
    connect(dateOn_, &QCheckBox::toggled, this, [this](bool on) {
        from_->setEnabled(on);
        to_->setEnabled(on);
        refresh();
    });
    connect(from_, &QDateEdit::dateChanged, this, &HistoryView::refresh);
    connect(to_, &QDateEdit::dateChanged, this, &HistoryView::refresh);
    connect(search_, &QLineEdit::textChanged, this, [this] { throttle_->start(300); });
    connect(table_, &QTableView::doubleClicked, this, &HistoryView::openResponse);
    connect(exportBtn, &QPushButton::clicked, this, &HistoryView::exportDialog);
    connect(compareBtn, &QPushButton::clicked, this, &HistoryView::compareEnvironments);
    connect(compareAct_, &QAction::triggered, this, &HistoryView::compareEnvironments);
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const bool two = selectedRuns().first >= 0;
        compareBtn_->setEnabled(two);
        compareAct_->setEnabled(two);
    });
}

HistoryView::~HistoryView() = default;

bool HistoryView::setDatabase(const QString& path) {
    model_->removeRows(0, model_->rowCount());
    reader_.reset();
    dbPath_ = path;
    listedKey_ = {-1, -1};
    damage_->clear();
    damage_->hide();
    try {
        reader_ = std::make_unique<runlog::HistoryReader>(
            runlog::HistoryReader::open(QFile::encodeName(path).toStdString()));
    } catch (const std::exception& e) {
        count_->setText(
            tr("Cannot read the run log %1: %2").arg(path, QString::fromUtf8(e.what())));
        return false;
    }
    for (QWidget* w : std::initializer_list<QWidget*>{modelFilter_, runFilter_, reasonFilter_,
                                                      dateOn_, search_, exportBtn_})
        w->setEnabled(true);
    reloadFilterLists();
    refresh();
    return true;
}

void HistoryView::setDamage(const runlog::LogInspection& insp) {
    if (insp.state != runlog::LogState::Damaged) {
        damage_->clear();
        damage_->hide();
        return;
    }
    QString text = tr("The run log %1 is damaged: this list shows the %2 responses that could be "
                      "read")
                       .arg(QString::fromStdString(insp.path))
                       .arg(insp.readable_responses);
    if (insp.unreadable_responses > 0)
        text += tr("; up to %1 more lie on damaged pages and are not shown")
                    .arg(insp.unreadable_responses);
    text += tr(". Nothing new is logged to it. To keep logging, salvage it into a new log "
               "(workbench-cli log salvage --db %1) or start with --db at another path.")
                .arg(QString::fromStdString(insp.path));
    damage_->setText(text);
    damage_->show();
}

QString HistoryView::damageWarning() const {
    return damage_->isHidden() ? QString() : damage_->text();
}

void HistoryView::setUnavailable(const QString& why) {
    model_->removeRows(0, model_->rowCount());
    reader_.reset();
    dbPath_.clear();
    for (QWidget* w : std::initializer_list<QWidget*>{modelFilter_, runFilter_, reasonFilter_,
                                                      dateOn_, search_, exportBtn_})
        w->setEnabled(false);
    count_->setText(why);
    events_->setRowCount(0);
    eventsBox_->hide();
}

void HistoryView::reloadFilterLists() {
    if (!reader_) return;
    try {
        const auto [models, newest_run] = reader_->lists_key();
        const QPair<qint64, qint64> key{models, newest_run};
        if (key == listedKey_) return;  // nothing new: leave the lists (and open popups) alone
        listedKey_ = key;
        const QVariant model_sel = modelFilter_->currentData();
        const QVariant run_sel = runFilter_->currentData();
        const QSignalBlocker b1(modelFilter_), b2(runFilter_);
        modelFilter_->clear();
        modelFilter_->addItem(tr("all models"), QVariant());
        for (const runlog::ModelChoice& m : reader_->models()) {
            modelFilter_->addItem(QString::fromStdString(m.label),
                                  QVariant::fromValue(static_cast<qlonglong>(m.id)));
            // general.name is what the file calls itself ("llama" for many).
            modelFilter_->setItemData(modelFilter_->count() - 1,
                                      tr("general.name: %1").arg(QString::fromStdString(m.name)),
                                      Qt::ToolTipRole);
        }
        runFilter_->clear();
        runFilter_->addItem(tr("all runs"), QVariant());
        for (const runlog::RunChoice& r : reader_->runs(500))
            runFilter_->addItem(
                QStringLiteral("#%1 %2 %3")
                    .arg(r.id)
                    .arg(QString::fromStdString(r.kind), QString::fromStdString(r.name)),
                QVariant::fromValue(static_cast<qlonglong>(r.id)));
        modelFilter_->setCurrentIndex(std::max(0, modelFilter_->findData(model_sel)));
        runFilter_->setCurrentIndex(std::max(0, runFilter_->findData(run_sel)));
    } catch (const std::exception& e) {
        count_->setText(tr("Cannot read the run log: %1").arg(QString::fromUtf8(e.what())));
    }
}

runlog::ExportFilter HistoryView::filter() const {
    runlog::ExportFilter f;
    if (modelFilter_->currentData().isValid())
        f.model_version_id = modelFilter_->currentData().toLongLong();
    if (runFilter_->currentData().isValid()) f.run_id = runFilter_->currentData().toLongLong();
    const QString reason = reasonFilter_->currentData().toString();
    if (!reason.isEmpty()) f.finish_reason = reason.toStdString();
    if (dateOn_->isChecked()) {
        // Local calendar days, as the date pickers show them.
        f.since_ms = QDateTime(from_->date(), QTime(0, 0)).toMSecsSinceEpoch();
        f.until_ms = QDateTime(to_->date().addDays(1), QTime(0, 0)).toMSecsSinceEpoch();
    }
    if (!search_->text().isEmpty()) f.text = search_->text().toStdString();
    return f;
}

void HistoryView::refresh() {
    if (!reader_) return;
    reloadFilterLists();  // runs and models logged since the last refresh
    std::vector<runlog::HistoryRow> rows;
    try {
        rows = reader_->rows(filter(), 10000);
    } catch (const std::exception& e) {
        count_->setText(tr("Query failed: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    model_->removeRows(0, model_->rowCount());
    const QString redacted = QStringLiteral("[redacted]");
    for (const runlog::HistoryRow& r : rows) {
        const QDateTime started = QDateTime::fromMSecsSinceEpoch(r.started_ms);
        model_->appendRow(QList<QStandardItem*>{
            cell(QVariant::fromValue(static_cast<qlonglong>(r.id))),
            cell(started.toString("yyyy-MM-dd HH:mm:ss")),
            run_cell(r),
            cell(QString::fromStdString(r.model)),
            cell(QString::fromStdString(r.request_id)),
            cell(QString::fromStdString(r.finish_reason)),
            cell(r.prompt_preview ? QString::fromStdString(*r.prompt_preview) : redacted),
            cell(r.output_preview ? QString::fromStdString(*r.output_preview) : redacted),
            cell(r.output_tokens ? QVariant::fromValue(static_cast<qlonglong>(*r.output_tokens))
                                 : QVariant()),
            fixed(r.ttft_ms, 1),
            fixed(r.tpot_ms, 2),
            fixed(r.e2e_ms, 1),
        });
    }
    table_->resizeColumnsToContents();
    table_->setColumnWidth(6, 220);  // prompt
    table_->setColumnWidth(7, 420);  // output
    count_->setText(tr("%1 responses match · %2").arg(model_->rowCount()).arg(dbPath_));
    showRunEvents();
}

void HistoryView::showRunEvents() {
    events_->setRowCount(0);
    const QVariant run = runFilter_->currentData();
    std::vector<runlog::RunEventRow> rows;
    if (reader_ && run.isValid()) {
        try {
            rows = reader_->run_events(run.toLongLong());
        } catch (const std::exception& e) {
            count_->setText(count_->text() +
                            tr(" · the run's events cannot be read: %1").arg(e.what()));
        }
    }
    for (const runlog::RunEventRow& e : rows) {
        const int r = events_->rowCount();
        events_->insertRow(r);
        events_->setItem(r, 0,
                         new QTableWidgetItem(QDateTime::fromMSecsSinceEpoch(e.t_ms).toString(
                             "yyyy-MM-dd HH:mm:ss.zzz")));
        events_->setItem(r, 1, new QTableWidgetItem(QString::fromStdString(e.kind)));
        auto* details = new QTableWidgetItem(QString::fromStdString(e.details));
        details->setToolTip(QString::fromStdString(e.details));
        events_->setItem(r, 2, details);
    }
    events_->resizeColumnToContents(0);
    events_->resizeColumnToContents(1);
    // At most about six rows tall: the responses stay the main view.
    const int shown = std::min(events_->rowCount(), 6);
    events_->setFixedHeight(events_->horizontalHeader()->height() +
                            (shown + 1) * (events_->fontMetrics().height() + 8));
    eventsBox_->setVisible(!rows.empty());
}

QPair<qint64, qint64> HistoryView::selectedRuns() const {
    QList<qint64> runs;
    for (const QModelIndex& i : table_->selectionModel()->selectedRows(2)) {
        const qint64 id = i.data(Qt::UserRole).toLongLong();
        if (!runs.contains(id)) runs << id;
    }
    if (runs.size() != 2) return {-1, -1};
    return {std::min(runs[0], runs[1]), std::max(runs[0], runs[1])};
}

void HistoryView::compareEnvironments() {
    const auto [a, b] = selectedRuns();
    if (a < 0 || !reader_) return;
    runlog::RunDiff d;
    try {
        d = runlog::diff_runs(reader_->db(), a, b);
    } catch (const std::exception& e) {
        count_->setText(tr("Cannot compare runs %1 and %2: %3").arg(a).arg(b).arg(e.what()));
        return;
    }
    auto* dlg = new RunDiffDialog(d, this);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    dlg->show();
}

void HistoryView::refreshSoon() {
    if (!throttle_->isActive()) throttle_->start(1000);
}

int HistoryView::rowCount() const {
    return model_->rowCount();
}

void HistoryView::setSearchText(const QString& text) {
    search_->setText(text);
    refresh();
}

void HistoryView::setFinishReason(const QString& reason) {
    reasonFilter_->setCurrentIndex(std::max(0, reasonFilter_->findData(reason)));
}

void HistoryView::openResponse(const QModelIndex& index) {
    if (!reader_) return;
    const QVariant id = model_->data(model_->index(index.row(), 0));
    runlog::ResponseDetail detail;
    try {
        detail = reader_->detail(id.toLongLong());
    } catch (const std::exception& e) {
        count_->setText(tr("Cannot read response %1: %2").arg(id.toString(), e.what()));
        return;
    }
    if (detail.empty()) return;
    QString html = QStringLiteral("<h3>Response %1</h3><table>").arg(id.toString());
    for (const auto& [name, value] : detail) {
        QString v = value ? QString::fromStdString(*value) : QStringLiteral("—");
        html += QStringLiteral("<tr><td valign='top'><i>%1</i></td><td>%2</td></tr>")
                    .arg(QString::fromStdString(name), v.toHtmlEscaped().replace('\n', "<br>"));
    }
    html += "</table>";
    QDialog d(this);
    d.setWindowTitle(tr("Response %1").arg(id.toString()));
    auto* l = new QVBoxLayout(&d);
    auto* b = new QTextBrowser;
    b->setHtml(html);
    l->addWidget(b);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(box, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    l->addWidget(box);
    d.resize(700, 600);
    d.exec();
}

qint64 HistoryView::exportTo(const QString& path, const QString& format, QString* error,
                             const runlog::ExportProgress& progress) const {
    return exportFile(dbPath_, filter(), path, format, error, progress);
}

qint64 HistoryView::exportFile(const QString& db_path, const runlog::ExportFilter& filter,
                               const QString& path, const QString& format, QString* error,
                               const runlog::ExportProgress& progress) {
    auto fail = [&](const QString& message) {
        if (error) *error = message;
        return qint64{-1};
    };
    if (format != "csv" && format != "jsonl")
        return fail(tr("unknown export format \"%1\" (csv or jsonl)").arg(format));
    try {
        return runlog::export_responses_to_file(
            QFile::encodeName(db_path).toStdString(), filter,
            format == "csv" ? runlog::ExportFormat::Csv : runlog::ExportFormat::Jsonl,
            QFile::encodeName(path).toStdString(), progress);
    } catch (const std::exception& e) {
        return fail(QString::fromUtf8(e.what()));
    }
}

void HistoryView::exportDialog() {
    QString selected;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export responses"), "responses.csv",
                                     tr("CSV (*.csv);;JSON Lines (*.jsonl)"), &selected);
    if (path.isEmpty()) return;
    const QString format = path.endsWith(".jsonl") || selected.contains("jsonl") ? "jsonl" : "csv";
    const runlog::ExportFilter f = filter();
    auto* dlg = new QProgressDialog(tr("Exporting responses…"), tr("Hide"), 0, 100, this);
    dlg->setWindowModality(Qt::WindowModal);
    dlg->setMinimumDuration(300);
    dlg->setAttribute(Qt::WA_DeleteOnClose);
    const QString db = dbPath_;
    QPointer<QProgressDialog> guard(dlg);
    auto* watcher = new QFutureWatcher<QPair<qint64, QString>>(this);
    connect(watcher, &QFutureWatcherBase::progressValueChanged, dlg, &QProgressDialog::setValue);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, guard, path] {
        const auto [n, err] = watcher->result();
        if (guard) guard->close();
        if (n < 0)
            QMessageBox::warning(this, tr("Export failed"), err);
        else
            count_->setText(tr("Exported %1 responses to %2").arg(n).arg(path));
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run([db, f, path,
                                          format](QPromise<QPair<qint64, QString>>& p) {
        p.setProgressRange(0, 100);
        QString err;
        const qint64 n = exportFile(db, f, path, format, &err, [&p](int64_t done, int64_t total) {
            p.setProgressValue(total > 0 ? static_cast<int>(100 * done / total) : 100);
        });
        p.addResult(qMakePair(n, err));
    }));
}

}  // namespace wb::ui
