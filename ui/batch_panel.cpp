#include "ui/batch_panel.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <algorithm>

#include "core/batch_runner.h"
#include "core/settings_json.h"
#include "cost/price.h"
#include "desktop/engine_bridge.h"
#include "desktop/remote_client.h"
#include "desktop/remote_run_stats.h"
#include "desktop/run_recorder.h"
#include "ui/batch_results_model.h"
#include "ui/target_picker.h"
#include "ui/widgets/price_fields.h"
#include "ui/widgets/wrap_label.h"

namespace wb::ui {

BatchPanel::BatchPanel(gui::EngineBridge* bridge, gui::RunRecorder* recorder,
                       std::function<gui::GenSettings()> settings, QWidget* parent)
    : QWidget(parent), bridge_(bridge), recorder_(recorder), settings_(std::move(settings)) {
    qRegisterMetaType<Progress>();
    auto* layout = new QVBoxLayout(this);

    picker_ = new TargetPicker(QStringLiteral("batch"));
    layout->addWidget(picker_);
    remote_ = new gui::RemoteClient(recorder_, this);
    connect(remote_, &gui::RemoteClient::requestFinished, this, &BatchPanel::onRemoteFinished);

    auto* fileRow = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open prompt set…"));
    open->setToolTip(tr(
        "JSON Lines ({\"prompt\": ..., \"id\": ..., \"max_tokens\": ...}) or one prompt per line"));
    auto* sample = new QPushButton(tr("Sample set"));
    sample->setToolTip(tr("The bundled set of 20 short story prompts"));
    auto* shared = new QPushButton(tr("Shared system prompt set"));
    shared->setObjectName("sharedSystemSet");
    shared->setToolTip(
        tr("The bundled set of 12 prompts sharing one long system prompt: the "
           "prefix cache serves the shared part (see the hit rate)"));
    file_ = new ElideLabel(tr("No prompt set loaded"));
    file_->setObjectName("batchFile");
    fileRow->addWidget(open);
    fileRow->addWidget(sample);
    fileRow->addWidget(shared);
    fileRow->addWidget(file_, 1);
    layout->addLayout(fileRow);

    errors_ = new QListWidget;
    errors_->setMaximumHeight(80);
    errors_->setToolTip(
        tr("Lines that cannot be used (fix them or tick \"Skip malformed "
           "lines\") and lines with something ignored (warnings)"));
    errors_->hide();
    layout->addWidget(errors_);

    auto* systemRow = new QHBoxLayout;
    system_ = new QLineEdit;
    system_->setObjectName("batchSystemPrompt");
    system_->setPlaceholderText(tr("none"));
    system_->setToolTip(
        tr("Put before every prompt as a system message, rendered with the model's chat "
           "template (a model without one: plain text, the system prompt on its own line)"));
    auto* systemLabel = new QLabel(tr("&System prompt"));
    systemLabel->setBuddy(system_);
    systemRow->addWidget(systemLabel);
    systemRow->addWidget(system_, 1);
    layout->addLayout(systemRow);

    auto* opts = new QHBoxLayout;
    concurrency_ = new QSpinBox;
    concurrency_->setRange(1, 64);
    concurrency_->setValue(4);
    concurrency_->setToolTip(tr("Requests decoded together (scheduler slots)"));
    maxQueue_ = new QSpinBox;
    maxQueue_->setRange(1, 100000);
    maxQueue_->setValue(64);
    maxQueue_->setToolTip(tr("Requests that may wait for a slot; the panel never submits more"));
    timeout_ = new QSpinBox;
    timeout_->setRange(0, 3600 * 1000);
    timeout_->setSingleStep(1000);
    timeout_->setSuffix(tr(" ms"));
    timeout_->setSpecialValueText(tr("none"));
    timeout_->setToolTip(tr("Total time a request may take from submission; 0 = no limit"));
    // Cost: a price per hour of engine busy time, or per million tokens.
    prices_ = new PriceFields(tr("the engine's busy time"));
    skipInvalid_ = new QCheckBox(tr("Skip malformed lines"));
    run_ = new QPushButton(tr("Run"));
    run_->setToolTip(tr("Run every prompt of the set through the scheduler"));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setEnabled(false);
    // Three rows, so the tab fits beside the settings and the charts in a
    // 1366 px wide window: the run's limits, its price, then what to skip
    // and Run.
    opts->addWidget(new QLabel(tr("Concurrency")));
    opts->addWidget(concurrency_);
    opts->addWidget(new QLabel(tr("Max queue")));
    opts->addWidget(maxQueue_);
    opts->addWidget(new QLabel(tr("Timeout")));
    opts->addWidget(timeout_);
    opts->addStretch();
    layout->addLayout(opts);
    layout->addWidget(prices_);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(skipInvalid_);
    runRow->addStretch();
    runRow->addWidget(run_);
    runRow->addWidget(cancel_);
    layout->addLayout(runRow);

    bar_ = new QProgressBar;
    bar_->setRange(0, 1);
    bar_->setValue(0);
    status_ = new ElideLabel;
    status_->setObjectName("batchStatus");
    layout->addWidget(bar_);
    layout->addWidget(status_);

    // The run's summary, as `workbench-cli batch` prints it, once it ends.
    summaryBox_ = new QWidget;
    summaryBox_->setObjectName("batchSummary");
    auto* sumLay = new QVBoxLayout(summaryBox_);
    sumLay->setContentsMargins(0, 0, 0, 0);
    auto* sumBar = new QHBoxLayout;
    auto* sumTitle =
        new QLabel(tr("<b>Summary of the run</b> (latencies in ms; the same table "
                      "as workbench-cli batch)"));
    sumTitle->setWordWrap(true);  // beside its buttons in a narrow tab
    sumBar->addWidget(sumTitle, 1);
    auto* copy = new QPushButton(tr("Copy"));
    copy->setObjectName("copySummary");
    auto* csv = new QPushButton(tr("Export CSV…"));
    auto* json = new QPushButton(tr("Export JSON…"));
    sumBar->addWidget(copy);
    sumBar->addWidget(csv);
    sumBar->addWidget(json);
    sumLay->addLayout(sumBar);
    summaryView_ = new QPlainTextEdit;
    summaryView_->setReadOnly(true);
    summaryView_->setLineWrapMode(QPlainTextEdit::NoWrap);
    summaryView_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    summaryView_->setFixedHeight(summaryView_->fontMetrics().lineSpacing() * 12 + 8);
    sumLay->addWidget(summaryView_);
    summaryBox_->hide();
    layout->addWidget(summaryBox_);
    connect(copy, &QPushButton::clicked, this, &BatchPanel::copySummary);
    connect(csv, &QPushButton::clicked, this, [this] { exportSummaryDialog("csv"); });
    connect(json, &QPushButton::clicked, this, [this] { exportSummaryDialog("json"); });

    results_ = new BatchResultsModel(this);
    proxy_ = new QSortFilterProxyModel(this);
    proxy_->setSourceModel(results_);
    proxy_->setSortRole(Qt::UserRole);
    table_ = new QTableView;
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->hide();
    table_->setWordWrap(false);
    table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
    // Numbers and short words get columns as wide as their header or a
    // "99999.9" value, the prompt a fixed share, and the output the rest,
    // so the output stays readable at a normal window width (with default
    // 100 px sections the output column was squeezed to nothing).
    QHeaderView* header = table_->horizontalHeader();
    const QFontMetrics fm = header->fontMetrics();
    for (int c = 0; c < BatchResultsModel::kColumns; ++c) {
        if (c == BatchResultsModel::Prompt || c == BatchResultsModel::Output) continue;
        const QString title = results_->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString();
        const int value = fm.horizontalAdvance(c == BatchResultsModel::Finish   ? "cancelled"
                                               : c == BatchResultsModel::Id     ? "s000000"
                                               : c == BatchResultsModel::Tokens ? "9999"
                                               : c == BatchResultsModel::Cached ? "999/999"
                                                                                : "99999.9");
        header->resizeSection(c, std::max(fm.horizontalAdvance(title), value) + 14);
    }
    // The prompt is in its tooltip and the details dialog: a glimpse here.
    header->resizeSection(BatchResultsModel::Prompt, fm.horizontalAdvance(QString(10, 'x')));
    header->setSectionResizeMode(BatchResultsModel::Output, QHeaderView::Stretch);
    header->setMinimumSectionSize(fm.horizontalAdvance("xxxx"));
    // Rows in the order requests finish until a header is clicked (a sort
    // indicator on by default sorted the ids backwards: s20 first).
    header->setSortIndicator(-1, Qt::AscendingOrder);
    table_->setToolTip(tr("Double-click a row to see the whole response"));
    layout->addWidget(table_, 1);

    connect(open, &QPushButton::clicked, this, &BatchPanel::openPromptDialog);
    connect(sample, &QPushButton::clicked, this, &BatchPanel::loadSampleSet);
    connect(shared, &QPushButton::clicked, this, &BatchPanel::loadSharedSystemSet);
    connect(skipInvalid_, &QCheckBox::toggled, this, &BatchPanel::showSet);
    connect(run_, &QPushButton::clicked, this, &BatchPanel::run);
    connect(cancel_, &QPushButton::clicked, this, &BatchPanel::cancel);
    connect(table_, &QTableView::doubleClicked, this, &BatchPanel::showDetail);
    showSet();
}

bool BatchPanel::loadPromptFile(const QString& path) {
    set_ = gui::PromptSet::load(path);
    showSet();
    return !set_.items.isEmpty();
}

bool BatchPanel::loadSampleSet() {
    return loadPromptFile(QStringLiteral(":/prompts/stories20.jsonl"));
}

bool BatchPanel::loadSharedSystemSet() {
    return loadPromptFile(QStringLiteral(":/prompts/shared-system12.jsonl"));
}

void BatchPanel::setSystemPrompt(const QString& text) {
    system_->setText(text);
}

QString BatchPanel::systemPrompt() const {
    return system_->text();
}

void BatchPanel::openPromptDialog() {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open prompt set"), QString(), tr("Prompt sets (*.jsonl *.txt);;All files (*)"));
    if (!path.isEmpty()) loadPromptFile(path);
}

int BatchPanel::concurrency() const {
    return concurrency_->value();
}
int BatchPanel::maxQueue() const {
    return maxQueue_->value();
}
int BatchPanel::timeoutMs() const {
    return timeout_->value();
}

void BatchPanel::setConcurrency(int n) {
    concurrency_->setValue(n);
}
void BatchPanel::setPrice(double per_hour, double per_m_input, double per_m_output) {
    prices_->setPrice(per_hour, per_m_input, per_m_output);
}
void BatchPanel::setMaxQueue(int n) {
    maxQueue_->setValue(n);
}
void BatchPanel::setTimeoutMs(int ms) {
    timeout_->setValue(ms);
}

void BatchPanel::showSet() {
    const QString name = set_.path.startsWith(":/")
                             ? tr("sample set (%1)").arg(QFileInfo(set_.path).fileName())
                             : set_.path;
    if (set_.path.isEmpty())
        file_->setText(tr("No prompt set loaded"));
    else
        file_->setText(tr("%1: %2 prompts (%3), %4 malformed lines%5")
                           .arg(name)
                           .arg(set_.items.size())
                           .arg(set_.jsonl ? "JSON Lines" : "one per line")
                           .arg(set_.errors.size())
                           .arg(set_.warnings.isEmpty()
                                    ? QString()
                                    : tr(", %1 warnings").arg(set_.warnings.size())));
    errors_->clear();
    for (const gui::PromptLineError& e : set_.errors)
        errors_->addItem(e.line > 0 ? tr("line %1: %2").arg(e.line).arg(e.message) : e.message);
    // As the CLI prints them: "prompts.jsonl:3: unknown key "temprature" ignored".
    const QString file = QFileInfo(set_.path).fileName();
    for (const gui::PromptLineError& w : set_.warnings)
        errors_->addItem(tr("warning: %1:%2: %3").arg(file).arg(w.line).arg(w.message));
    errors_->setVisible(!set_.errors.isEmpty() || !set_.warnings.isEmpty());
    run_->setEnabled(!running_ && !set_.items.isEmpty() &&
                     (set_.errors.isEmpty() || skipInvalid_->isChecked()));
}

BatchPanel::~BatchPanel() = default;

bool BatchPanel::run() {
    if (running_) return false;
    const std::shared_ptr<core::EngineSession> session = bridge_->session();
    if (!session && !picker_->isRemote()) {
        status_->setText(tr("Load a model first."));
        return false;
    }
    if (set_.items.isEmpty()) {
        status_->setText(tr("Load a prompt set first."));
        return false;
    }
    std::optional<cost::Price> price;
    try {
        price = prices_->price();
    } catch (const std::exception& e) {
        status_->setText(tr("Price: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
    if (!set_.errors.isEmpty() && !skipInvalid_->isChecked()) {
        status_->setText(tr("The set has %1 malformed lines (listed above); fix them or tick "
                            "\"Skip malformed lines\".")
                             .arg(set_.errors.size()));
        return false;
    }
    if (picker_->isRemote()) return runRemote(price);
    // The run `workbench-cli batch` makes of these settings: each prompt's
    // seed is the base seed + its index (a fresh base unless the seed is
    // fixed), its own max_tokens and stop strings, the run's timeout.
    gui::GenSettings s = settings_();
    if (!s.fixed_seed) s.seed = gui::GenSettings::drawSeed();
    run_settings_ = s;
    core::BatchOptions bo;
    bo.base = s.request(core::SeedPolicy::BasePlusIndex);
    bo.base.client_id = "batch";
    bo.base.timeout_ms = timeout_->value() > 0 ? timeout_->value() : -1;
    bo.concurrency = static_cast<uint32_t>(concurrency_->value());
    bo.max_queue = static_cast<uint32_t>(maxQueue_->value());
    bo.system_prompt = system_->text().toStdString();
    nlohmann::json run_settings = core::settings_json(bo.base, s.seed, session->facts());
    run_settings["concurrency"] = bo.concurrency;
    run_settings["max_queue"] = bo.max_queue;
    if (!bo.system_prompt.empty()) run_settings["system_prompt"] = bo.system_prompt;
    if (price) run_settings["price"] = cost::to_json(*price);  // the exports price each row
    run_id_ =
        recorder_ ? recorder_->beginRun("batch", QFileInfo(set_.path).fileName(), run_settings) : 0;
    bo.base.run_id = run_id_;

    remoteRun_ = false;
    beginProgress(price);
    runStartMs_ = bridge_->metricsNowMs();
    job_ = bridge_->runBatch(set_.entries, bo, this,
                             [this](const core::BatchEvent& e) { onEvent(e); });
    // The one rule's note (chat::choose_template) when prompts are rendered
    // as conversations: e.g. a model without a template completes plain text.
    const bool conversations =
        !bo.system_prompt.empty() ||
        std::any_of(set_.entries.begin(), set_.entries.end(),
                    [](const core::PromptEntry& e) { return !e.messages.empty(); });
    templateNote_ =
        conversations ? QString::fromStdString(session->chat_template(bo.base.chat_template)->note)
                      : QString();
    updateProgress();
    return job_ != nullptr;
}

void BatchPanel::beginProgress(const std::optional<cost::Price>& price) {
    results_->clear();
    ownMaxTokens_.clear();
    progress_ = Progress{};
    progress_.total = static_cast<int>(set_.items.size());
    progress_.queued = progress_.total;
    summary_ = gui::BatchSummary{};
    summary_.concurrency = concurrency_->value();
    summary_.price = price;
    summaryBox_->hide();
    running_ = true;
    clock_.start();
    bar_->setRange(0, progress_.total);
    run_->setEnabled(false);
    cancel_->setEnabled(true);
    emit runStarted();
}

bool BatchPanel::runRemote(const std::optional<cost::Price>& price) {
    if (price && price->basis == cost::Price::Basis::PerHour) {
        status_->setText(
            tr("A remote endpoint is priced per million tokens: its busy time is not known "
               "here. Clear the per-hour price or give token prices."));
        return false;
    }
    QString err;
    const std::optional<QString> key = picker_->apiKey(&err);
    if (!key) {
        status_->setText(tr("Not started: %1").arg(err));
        return false;
    }
    const gui::RemoteTarget target = picker_->remote();
    gui::GenSettings s = settings_();
    if (!s.fixed_seed) s.seed = gui::GenSettings::drawSeed();
    run_settings_ = s;
    const int concurrency = concurrency_->value();
    const std::string system = system_->text().toStdString();
    nlohmann::json rs = {{"target", target.base_url.toStdString()},
                         {"model", target.model.toStdString()},
                         {"api", "chat"},
                         {"concurrency", concurrency},
                         {"max_tokens", s.max_tokens},
                         {"temperature", s.temperature},
                         {"top_p", s.top_p},
                         {"seed", s.seed},
                         {"seed_policy", "base_plus_index"}};
    if (!system.empty()) rs["system_prompt"] = system;
    if (price) rs["price"] = cost::to_json(*price);
    run_id_ = recorder_ ? recorder_->beginRun("batch", QFileInfo(set_.path).fileName(), rs) : 0;

    remoteRun_ = true;
    remoteStats_ = std::make_unique<gui::RemoteRunStats>();
    remote_->setMaxParallel(concurrency);
    // Without a usage block, the loaded model's tokenizer counts the
    // replies (approximate), else their chunks.
    remote_->countTokensWith(bridge_->vocab());
    templateNote_.clear();
    beginProgress(price);
    runStartMs_ = 0;
    for (size_t i = 0; i < set_.entries.size(); ++i) {
        const core::PromptEntry& e = set_.entries[i];
        gui::RequestSpec spec;
        spec.id = QString::fromStdString(e.id);
        spec.run_id = run_id_;
        // The endpoint renders messages with its own template: a prompt
        // line is one user message, after the system prompt when set.
        if (!system.empty()) spec.messages.push_back({"system", system});
        if (e.messages.empty())
            spec.messages.push_back({"user", e.prompt});
        else
            spec.messages.insert(spec.messages.end(), e.messages.begin(), e.messages.end());
        spec.settings = s;
        spec.settings.max_tokens = e.max_tokens.value_or(s.max_tokens);
        spec.settings.seed = s.seed + i;  // as the CLI's batch: base + index, sent
        spec.settings.fixed_seed = true;
        spec.stop = e.stop;
        ownMaxTokens_.insert(spec.id, e.max_tokens.has_value());
        if (!remote_->submit(target, *key, spec, &err)) {
            // The URL is the same for every line: nothing was sent.
            running_ = false;
            cancel_->setEnabled(false);
            showSet();
            status_->setText(tr("Not started: %1").arg(err));
            if (recorder_ && run_id_ != 0) recorder_->endRun(run_id_);
            return false;
        }
    }
    updateProgress();
    return true;
}

void BatchPanel::cancel() {
    if (!running_) return;
    if (remoteRun_) {
        remote_->cancelAll();  // each ends "cancelled"; the unsent ones at once
        return;
    }
    if (!job_) return;
    job_->cancel();  // every unfinished prompt ends "cancelled" (its events follow)
}

void BatchPanel::countFinished(const gui::RequestResult& r) {
    results_->append(r);
    summary_.addFinish(r.finish_reason);
    ++summary_.requests_submitted;
    if (r.prompt_cached_tokens >= 0) {
        progress_.prompt_tokens += r.prompt_tokens;
        progress_.cached_tokens += r.prompt_cached_tokens;
    }
    // "context": the request ran into the context size but delivered its output.
    if (r.finish_reason == "stop" || r.finish_reason == "length" || r.finish_reason == "context")
        ++progress_.done;
    else
        ++progress_.failed;
}

void BatchPanel::onEvent(const core::BatchEvent& e) {
    if (!running_ || !job_) return;
    if (e.type == core::BatchEvent::Type::Finished && e.result) {
        const gui::RequestResult r = gui::toResult(*e.result, run_settings_);
        if (e.index < set_.entries.size())
            ownMaxTokens_.insert(r.id, set_.entries[e.index].max_tokens.has_value());
        countFinished(r);
    }
    if (e.type != core::BatchEvent::Type::Token) updateProgress();
    endRunIfDone();
}

void BatchPanel::onRemoteFinished(const gui::RequestResult& r) {
    if (!running_ || !remoteRun_ || r.run_id != run_id_) return;
    // The client's samples on the run's clock (ms since Run).
    remoteStats_->record(r, static_cast<double>(clock_.elapsed()));
    countFinished(r);
    updateProgress();
    endRunIfDone();
}

void BatchPanel::endRunIfDone() {
    if (!running_ || progress_.done + progress_.failed < progress_.total) return;
    running_ = false;
    job_.reset();
    if (recorder_ && run_id_ != 0) recorder_->endRun(run_id_);
    cancel_->setEnabled(false);
    showSet();
    updateProgress();
    showSummary();
    emit runFinished(progress_);
}

void BatchPanel::showSummary() {
    // The store's samples over the run: every request of it has finished,
    // so its TTFT / ITL / e2e samples are in.
    if (remoteRun_ && remoteStats_) {
        summary_.stats = remoteStats_->summary();
    } else {
        summary_.stats = bridge_->spanStats(runStartMs_);
    }
    summaryView_->setPlainText(summary_.text());
    summaryBox_->show();
}

QString BatchPanel::summaryText() const {
    return summary_.text();
}

bool BatchPanel::exportSummary(const QString& path, QString* error) const {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) {
        if (error) *error = f.errorString();
        return false;
    }
    const QByteArray bytes = path.endsWith(".json", Qt::CaseInsensitive)
                                 ? QJsonDocument(summary_.json()).toJson(QJsonDocument::Indented)
                                 : summary_.csv().toUtf8();
    f.write(bytes);
    if (!f.commit()) {
        if (error) *error = f.errorString();
        return false;
    }
    return true;
}

void BatchPanel::copySummary() const {
    QApplication::clipboard()->setText(summaryText());
}

void BatchPanel::exportSummaryDialog(const QString& format) {
    QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    if (dir.isEmpty() || !QDir(dir).exists()) dir = QDir::homePath();
    const QString proposed = QDir(dir).filePath(
        QStringLiteral("batch-summary-%1.%2")
            .arg(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"), format));
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export summary"), proposed,
                                     format == "json" ? tr("JSON (*.json)") : tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    QString err;
    if (!exportSummary(path, &err))
        QMessageBox::warning(this, tr("Export failed"),
                             tr("Could not write %1: %2").arg(path, err));
}

void BatchPanel::updateProgress() {
    const int finished = progress_.done + progress_.failed;
    if (remoteRun_)
        progress_.running = running_ ? std::min(remote_->inFlight(), concurrency_->value()) : 0;
    else
        progress_.running = running_ && job_ ? static_cast<int>(job_->progress().running) : 0;
    progress_.queued = std::max(0, progress_.total - finished - progress_.running);
    bar_->setValue(finished);
    QString eta;
    if (running_ && finished > 0) {
        const double per = static_cast<double>(clock_.elapsed()) / finished;
        eta = tr(" · ETA %1 s").arg(per * (progress_.total - finished) / 1000.0, 0, 'f', 1);
    } else if (!running_ && progress_.total > 0) {
        eta = tr(" · took %1 s").arg(static_cast<double>(clock_.elapsed()) / 1000.0, 0, 'f', 1);
    }
    QString hit;
    if (progress_.prompt_tokens > 0) {
        // Worded and rounded as the summary's metrics table (and workbench-cli
        // batch) print it: engine/metrics/metrics_table.cpp.
        hit = tr(" · prefix cache: hit rate %1 (%2 of %3 prompt tokens cached)")
                  .arg(static_cast<double>(progress_.cached_tokens) /
                           static_cast<double>(progress_.prompt_tokens),
                       0, 'f', 3)
                  .arg(progress_.cached_tokens)
                  .arg(progress_.prompt_tokens);
    }
    QString warn;
    if (!set_.warnings.isEmpty())
        warn = tr(" · %1 warnings (listed above)").arg(set_.warnings.size());
    if (!templateNote_.isEmpty()) warn += tr(" · note: %1").arg(templateNote_);
    status_->setText(tr("done %1 · failed %2 · running %3 · queued %4 of %5%6%7%8")
                         .arg(progress_.done)
                         .arg(progress_.failed)
                         .arg(progress_.running)
                         .arg(progress_.queued)
                         .arg(progress_.total)
                         .arg(eta, hit, warn));
}

QString BatchPanel::detailHtml(int row) const {
    if (row < 0 || row >= results_->rowCount()) return {};
    const gui::RequestResult& r = results_->result(row);
    auto ms = [](double v) {
        return v < 0 ? QStringLiteral("—") : QString::number(v, 'f', 2) + " ms";
    };
    QString html = QStringLiteral("<h3>%1</h3>").arg(r.id.toHtmlEscaped());
    html += QStringLiteral("<p><b>Prompt</b> (%1 tokens)<br>%2</p>")
                .arg(r.prompt_tokens)
                .arg(r.prompt.toHtmlEscaped().replace('\n', "<br>"));
    html += QStringLiteral("<p><b>Output</b> (%1 tokens)<br>%2</p>")
                .arg(r.generated_tokens)
                .arg(r.output.toHtmlEscaped().replace('\n', "<br>"));
    html += QStringLiteral("<table>");
    const auto own = ownMaxTokens_.find(r.id);
    const QString max_source = own == ownMaxTokens_.end() ? QString()
                               : *own                     ? tr(" (the line's own max_tokens)")
                                                          : tr(" (the settings' default)");
    const QList<QPair<QString, QString>> rows{
        {tr("finish reason"), r.finish_reason + (r.error.isEmpty() ? QString() : " — " + r.error)},
        {tr("max tokens"), QString::number(r.settings.max_tokens) + max_source},
        {tr("queue wait"), ms(r.queue_wait_ms)},
        {tr("TTFT"), ms(r.ttft_ms)},
        {tr("TPOT"), ms(r.tpot_ms)},
        {tr("end-to-end"), ms(r.e2e_ms)},
        {tr("prefill"), QString::number(r.prefill_tps, 'f', 1) + " tokens/s"},
        {tr("prefix cache"), r.prompt_cached_tokens < 0
                                 ? QStringLiteral("—")
                                 : tr("%1 of %2 prompt tokens cached, %3 computed; %4 preemptions")
                                       .arg(r.prompt_cached_tokens)
                                       .arg(r.prompt_tokens)
                                       .arg(r.prompt_tokens - r.prompt_cached_tokens)
                                       .arg(r.preemptions)},
        {tr("decode"), QString::number(r.decode_tps, 'f', 1) + " tokens/s"},
        {tr("settings"), r.settings.summary()},
    };
    for (const auto& [k, v] : rows)
        html += QStringLiteral("<tr><td><i>%1</i></td><td>%2</td></tr>").arg(k, v.toHtmlEscaped());
    html += QStringLiteral("</table>");
    return html;
}

void BatchPanel::showDetail(const QModelIndex& proxy_index) {
    const QModelIndex src = proxy_->mapToSource(proxy_index);
    if (!src.isValid()) return;
    const gui::RequestResult& r = results_->result(src.row());
    QDialog d(this);
    d.setWindowTitle(tr("Response %1").arg(r.id));
    auto* l = new QVBoxLayout(&d);
    auto* b = new QTextBrowser;
    b->setHtml(detailHtml(src.row()));
    l->addWidget(b);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(box, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    l->addWidget(box);
    d.resize(600, 480);
    d.exec();
}

}  // namespace wb::ui
