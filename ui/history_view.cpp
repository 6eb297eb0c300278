#include "history_view.h"

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
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlQueryModel>
#include <QSqlRecord>
#include <QTableView>
#include <QTextBrowser>
#include <QThread>
#include <QTimer>
#include <QUuid>
#include <QVBoxLayout>
#include <QtConcurrent>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>

#include "runlog/model_label.h"

namespace wb::ui {

namespace {

// The table: newest first, a few columns; everything else is in the detail
// view. Models by their label (file name · quantization · short hash).
QString list_sql() {
    return QString::fromUtf8(
        std::string(
            "SELECT r.id AS id, "
            "strftime('%Y-%m-%d %H:%M:%S', r.started_ms / 1000, 'unixepoch', 'localtime') AS "
            "started, u.kind || ' #' || u.id AS run, ") +
        runlog::kModelLabelSql +
        " AS model, r.request_id AS request, r.finish_reason AS finish, "
        "COALESCE(substr(replace(r.prompt, char(10), ' '), 1, 60), '(redacted)') AS prompt, "
        "COALESCE(substr(replace(r.output, char(10), ' '), 1, 100), '(redacted)') AS output, "
        "r.output_tokens AS tokens, round(r.ttft_ms, 1) AS ttft_ms, round(r.tpot_ms, 2) AS "
        "tpot_ms, round(r.e2e_ms, 1) AS e2e_ms "
        "FROM responses r JOIN runs u ON u.id = r.run_id "
        "JOIN model_versions m ON m.id = r.model_version_id ");
}

// Every tag of a response, for the detail view.
const char* const kFullSql =
    "SELECT r.id AS response_id, "
    "strftime('%Y-%m-%dT%H:%M:%fZ', r.started_ms / 1000.0, 'unixepoch') AS started_utc, "
    "r.run_id AS run_id, ru.kind AS run_kind, ru.name AS run_name, r.request_id AS request_id, "
    "mv.name AS model_name, mv.sha256 AS model_sha256, mv.path AS model_path, "
    "mv.architecture AS architecture, mv.file_type_name AS file_type, "
    "mv.tensor_types AS tensor_types, mv.n_params AS n_params, "
    "e.app_version AS app_version, e.git_commit AS git_commit, e.os AS os, e.cpu AS cpu, "
    "e.backend AS backend, e.vk_device_name AS device, e.vk_driver_name AS driver, "
    "e.vk_driver_version AS driver_version, e.vk_api_version AS vulkan_api, "
    "r.settings AS settings, r.redacted AS redacted, r.prompt AS prompt, "
    "r.prompt_tokens AS prompt_tokens, r.output AS output, r.output_tokens AS output_tokens, "
    "r.finish_reason AS finish_reason, r.error AS error, r.queue_wait_ms AS queue_wait_ms, "
    "r.ttft_ms AS ttft_ms, r.tpot_ms AS tpot_ms, r.e2e_ms AS e2e_ms, "
    "r.prefill_tps AS prefill_tps, r.decode_tps AS decode_tps "
    "FROM responses r JOIN runs ru ON ru.id = r.run_id "
    "JOIN model_versions mv ON mv.id = r.model_version_id "
    "JOIN environments e ON e.id = r.environment_id ";

QSqlDatabase open_readonly(const QString& name, const QString& path) {
    QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", name);
    db.setDatabaseName(path);
    db.setConnectOptions("QSQLITE_OPEN_READONLY;QSQLITE_BUSY_TIMEOUT=2000");
    db.open();
    return db;
}

// Forwards to a file's buffer and keeps the errno of the first failed
// write: std::ofstream only says that a write failed, and errno is
// overwritten before the exporter's exception reaches the caller.
class ErrnoBuf : public std::streambuf {
  public:
    explicit ErrnoBuf(std::streambuf* inner) : inner_(inner) {}
    int error() const { return error_; }

  protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof()))
            return sync() == 0 ? traits_type::not_eof(c) : traits_type::eof();
        errno = 0;
        const int_type r = inner_->sputc(traits_type::to_char_type(c));
        if (traits_type::eq_int_type(r, traits_type::eof())) note();
        return r;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        errno = 0;
        const std::streamsize w = inner_->sputn(s, n);
        if (w < n) note();
        return w;
    }
    int sync() override {
        errno = 0;
        const int r = inner_->pubsync();
        if (r != 0) note();
        return r;
    }

  private:
    void note() {
        if (error_ == 0) error_ = errno != 0 ? errno : EIO;
    }
    std::streambuf* inner_;
    int error_ = 0;
};

}  // namespace

HistoryView::HistoryView(QWidget* parent)
    : QWidget(parent), conn_("history-" + QUuid::createUuid().toString(QUuid::WithoutBraces)) {
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
    // Two rows: search and Export, then the filters. In one row the tab's
    // minimum width squeezed the settings dock to a sliver.
    auto* searchRow = new QHBoxLayout;
    searchRow->addWidget(search_, 1);
    searchRow->addWidget(exportBtn);
    layout->addLayout(searchRow);
    filters->addWidget(modelFilter_);
    filters->addWidget(runFilter_);
    filters->addWidget(reasonFilter_);
    filters->addWidget(dateOn_);
    filters->addWidget(from_);
    filters->addWidget(new QLabel(tr("to")));
    filters->addWidget(to_);
    filters->addStretch();
    layout->addLayout(filters);

    model_ = new QSqlQueryModel(this);
    table_ = new QTableView;
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
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
}

HistoryView::~HistoryView() {
    model_->clear();
    { QSqlDatabase::database(conn_, false).close(); }
    QSqlDatabase::removeDatabase(conn_);
}

bool HistoryView::setDatabase(const QString& path) {
    model_->clear();
    { QSqlDatabase::database(conn_, false).close(); }
    QSqlDatabase::removeDatabase(conn_);
    dbPath_ = path;
    listedKey_ = {-1, -1};
    damage_->clear();
    damage_->hide();
    QSqlDatabase db = open_readonly(conn_, path);
    if (!db.isOpen()) {
        count_->setText(tr("Cannot read the run log %1: %2").arg(path, db.lastError().text()));
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
    model_->clear();
    dbPath_.clear();
    for (QWidget* w : std::initializer_list<QWidget*>{modelFilter_, runFilter_, reasonFilter_,
                                                      dateOn_, search_, exportBtn_})
        w->setEnabled(false);
    count_->setText(why);
}

void HistoryView::reloadFilterLists() {
    QSqlDatabase db = QSqlDatabase::database(conn_, false);
    if (!db.isOpen()) return;
    QSqlQuery k(db);
    if (k.exec("SELECT (SELECT COUNT(*) FROM model_versions), (SELECT COALESCE(MAX(id), 0) FROM "
               "runs)") &&
        k.next()) {
        const QPair<qint64, qint64> key{k.value(0).toLongLong(), k.value(1).toLongLong()};
        if (key == listedKey_) return;  // nothing new: leave the lists (and open popups) alone
        listedKey_ = key;
    }
    const QVariant model_sel = modelFilter_->currentData();
    const QVariant run_sel = runFilter_->currentData();
    const QSignalBlocker b1(modelFilter_), b2(runFilter_);
    modelFilter_->clear();
    modelFilter_->addItem(tr("all models"), QVariant());
    QSqlQuery q(db);
    q.exec(QString::fromUtf8(std::string("SELECT m.id, ") + runlog::kModelLabelSql +
                             ", m.name FROM model_versions m ORDER BY m.id"));
    while (q.next()) {
        modelFilter_->addItem(q.value(1).toString(), q.value(0));
        // general.name is what the file calls itself ("llama" for many).
        modelFilter_->setItemData(modelFilter_->count() - 1,
                                  tr("general.name: %1").arg(q.value(2).toString()),
                                  Qt::ToolTipRole);
    }
    runFilter_->clear();
    runFilter_->addItem(tr("all runs"), QVariant());
    q.exec("SELECT id, kind, name FROM runs ORDER BY id DESC LIMIT 500");
    while (q.next())
        runFilter_->addItem(
            QStringLiteral("#%1 %2 %3")
                .arg(q.value(0).toString(), q.value(1).toString(), q.value(2).toString()),
            q.value(0));
    modelFilter_->setCurrentIndex(std::max(0, modelFilter_->findData(model_sel)));
    runFilter_->setCurrentIndex(std::max(0, runFilter_->findData(run_sel)));
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

QString HistoryView::whereClause(QVariantList* binds) const {
    // The exporter's own SQL for the filter, so the table shows exactly the
    // rows an export writes; values are bound, never spliced.
    const runlog::FilterSql q = runlog::filter_sql(filter());
    for (const runlog::SqlValue& v : q.binds) {
        if (const auto* n = std::get_if<int64_t>(&v))
            binds->append(QVariant::fromValue(static_cast<qlonglong>(*n)));
        else
            binds->append(QString::fromStdString(std::get<std::string>(v)));
    }
    return "WHERE " + QString::fromStdString(q.condition) + " ";
}

void HistoryView::refresh() {
    QSqlDatabase db = QSqlDatabase::database(conn_, false);
    if (!db.isOpen()) return;
    reloadFilterLists();  // runs and models logged since the last refresh
    QVariantList binds;
    const QString sql =
        list_sql() + whereClause(&binds) + "ORDER BY r.started_ms DESC, r.id DESC LIMIT 10000";
    QSqlQuery q(db);
    q.prepare(sql);
    for (const QVariant& v : binds) q.addBindValue(v);
    if (!q.exec()) {
        count_->setText(tr("Query failed: %1").arg(q.lastError().text()));
        return;
    }
    model_->setQuery(std::move(q));
    while (model_->canFetchMore()) model_->fetchMore();
    table_->resizeColumnsToContents();
    table_->setColumnWidth(6, 220);  // prompt
    table_->setColumnWidth(7, 420);  // output
    count_->setText(tr("%1 responses match · %2").arg(model_->rowCount()).arg(dbPath_));
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
    const QVariant id = model_->data(model_->index(index.row(), 0));
    QSqlQuery q(QSqlDatabase::database(conn_, false));
    q.prepare(QString::fromLatin1(kFullSql) + "WHERE r.id = ?");
    q.addBindValue(id);
    if (!q.exec() || !q.next()) return;
    QString html = QStringLiteral("<h3>Response %1</h3><table>").arg(id.toString());
    const QSqlRecord rec = q.record();
    for (int i = 0; i < rec.count(); ++i) {
        QString v = q.value(i).isNull() ? QStringLiteral("—") : q.value(i).toString();
        html += QStringLiteral("<tr><td valign='top'><i>%1</i></td><td>%2</td></tr>")
                    .arg(rec.fieldName(i), v.toHtmlEscaped().replace('\n', "<br>"));
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
    std::filebuf file;
    if (!file.open(QFile::encodeName(path).toStdString(),
                   std::ios::out | std::ios::binary | std::ios::trunc))
        return fail(
            tr("Cannot write %1: %2.").arg(path, QString::fromLocal8Bit(std::strerror(errno))));
    ErrnoBuf buf(&file);
    std::ostream out(&buf);
    // Only a regular file this export wrote in part is removed: removing
    // /dev/full after a failed write (as root) deleted the device node.
    auto remove_partial = [&] {
        return QFileInfo(path).isFile() && !QFileInfo(path).isSymLink() && QFile::remove(path);
    };
    auto write_failed = [&](bool removed) {
        return tr("Cannot write %1: %2%3.")
            .arg(path, QString::fromLocal8Bit(std::strerror(buf.error() != 0 ? buf.error() : EIO)),
                 removed ? tr("; the incomplete export was removed") : QString());
    };
    try {
        const int64_t n = runlog::export_responses_readonly(
            QFile::encodeName(db_path).toStdString(), filter,
            format == "csv" ? runlog::ExportFormat::Csv : runlog::ExportFormat::Jsonl, out,
            progress);
        out.flush();
        const bool closed = file.close() != nullptr;
        if (!out || !closed || buf.error() != 0) return fail(write_failed(remove_partial()));
        return n;
    } catch (const std::exception& e) {
        const bool output_failed = !out || buf.error() != 0;
        file.close();
        const bool removed = remove_partial();
        return fail(output_failed ? write_failed(removed) : QString::fromUtf8(e.what()));
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
