#include "ui/load_tab.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <cstdlib>

#include "cost/price.h"
#include "desktop/remote_target.h"
#include "desktop/run_recorder.h"
#include "load/prompts.h"
#include "ui/load_charts.h"
#include "ui/scroll_page.h"
#include "ui/server_tab.h"

namespace wb::ui {

namespace {

const QString kDefaultUrl = QStringLiteral("http://127.0.0.1:8080/v1");

QDoubleSpinBox* double_box(double lo, double hi, double step, int decimals, double value,
                           const QString& special = {}) {
    auto* b = new QDoubleSpinBox;
    b->setRange(lo, hi);
    b->setSingleStep(step);
    b->setDecimals(decimals);
    b->setValue(value);
    if (!special.isEmpty()) b->setSpecialValueText(special);  // shown at the minimum
    return b;
}

QSpinBox* int_box(int lo, int hi, int value, const QString& special = {}) {
    auto* b = new QSpinBox;
    b->setRange(lo, hi);
    b->setValue(value);
    if (!special.isEmpty()) b->setSpecialValueText(special);
    return b;
}

QString num(double v, int prec) {
    return std::isfinite(v) ? QString::number(v, 'f', prec) : QStringLiteral("–");
}

std::optional<double> limit(const QDoubleSpinBox* b) {
    return b->value() > 0 ? std::optional<double>(b->value()) : std::nullopt;
}

}  // namespace

LoadTab::LoadTab(gui::RunRecorder* recorder, QWidget* parent)
    : QWidget(parent), recorder_(recorder), runner_(new LoadRunner(this)) {
    build();
    connect(runner_, &LoadRunner::stepStarted, this, &LoadTab::onStepStarted);
    connect(runner_, &LoadRunner::requestDone, this, &LoadTab::onRequestDone);
    connect(runner_, &LoadRunner::stepDone, this, &LoadTab::onStepDone);
    connect(runner_, &LoadRunner::finished, this, &LoadTab::onFinished);
    updateFields();
}

LoadTab::~LoadTab() {
    runner_->stopAndWait();
}

void LoadTab::build() {
    QVBoxLayout* v = scroll_page(this);

    url_ = new QLineEdit;
    url_->setToolTip(tr("Base URL of an OpenAI-compatible endpoint (workbench-cli serve, vLLM, "
                        "llama-server, TGI, Ollama). Empty: the Server tab's URL while it serves, "
                        "else %1.")
                         .arg(kDefaultUrl));
    model_ = new QLineEdit;
    model_->setPlaceholderText(tr("the first of GET /v1/models"));
    keyEnv_ = new QLineEdit;
    keyEnv_->setPlaceholderText(tr("none"));
    keyEnv_->setToolTip(
        tr("The name of an environment variable that holds the API key, read when a "
           "test starts; empty: the key the desktop's secret store holds for this URL (an "
           "endpoint added under \"Send to\" in the Chat or Batch tab), else none. The key "
           "itself is never saved or logged."));
    compareUrl_ = new QLineEdit;
    compareUrl_->setObjectName("loadCompareUrl");
    compareUrl_->setPlaceholderText(tr("none: one target"));
    compareUrl_->setToolTip(
        tr("Compare under load: the same test runs on this second endpoint after the first "
           "(a sweep at the first one's rates); both are drawn on the same charts, the "
           "second dashed, and listed as B in the table."));
    compareModel_ = new QLineEdit;
    compareModel_->setPlaceholderText(tr("the first of its /v1/models"));
    compareKeyEnv_ = new QLineEdit;
    compareKeyEnv_->setPlaceholderText(tr("none"));
    compareKeyEnv_->setToolTip(keyEnv_->toolTip());
    arrival_ = new QComboBox;
    arrival_->addItem(tr("Poisson"), "poisson");
    arrival_->addItem(tr("constant"), "constant");
    arrival_->addItem(tr("gamma"), "gamma");
    arrival_->addItem(tr("concurrency N (closed loop)"), "concurrency");
    arrival_->setToolTip(
        tr("Open loop: requests go out on this schedule whatever the server does. "
           "Gamma: burstiness < 1 is burstier than Poisson. Closed loop: N requests "
           "kept in flight."));
    rate_ = double_box(0.01, 1e5, 1, 2, 1);
    rate_->setToolTip(tr("Offered requests/s of an open loop (a sweep picks its own rates)."));
    burstiness_ = double_box(0.01, 1000, 0.1, 2, 1);
    concurrency_ = int_box(1, 100000, 4);
    requests_ = int_box(1, 10000000, 100);
    requests_->setToolTip(tr("Requests per step (with a duration: a cap)."));
    duration_ = double_box(0, 1e6, 10, 0, 0, tr("none"));
    duration_->setToolTip(tr("Stop each step after this many seconds; none: by requests."));
    maxTokens_ = int_box(1, 1000000, 16);
    promptFile_ = new QLineEdit;
    promptFile_->setPlaceholderText(tr("synthetic prompts"));
    promptFile_->setToolTip(
        tr("A prompt set: one prompt per line, or JSON lines with \"prompt\". Empty: "
           "synthetic prompts of the lengths below."));
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Prompt set"));
        if (!p.isEmpty()) promptFile_->setText(p);
    });
    promptMean_ = double_box(1, 100000, 8, 0, 32);
    promptMean_->setToolTip(tr("Synthetic prompts: mean length in tokens (about one word each)."));
    promptSd_ = double_box(0, 100000, 4, 0, 0);
    promptSd_->setToolTip(tr("Synthetic prompts: standard deviation of the length in tokens."));
    prefixShare_ = double_box(0, 1, 0.1, 2, 0);
    prefixShare_->setToolTip(
        tr("Share (0..1) of each synthetic prompt common to all (a system prompt)."));
    sweep_ = int_box(0, 1000, 0, tr("off"));
    sweep_->setToolTip(
        tr("A rate sweep: a synchronous step, a throughput step, then N rates "
           "between them. Off: one step with the arrival above."));
    sweepConc_ = int_box(1, 100000, 64);
    sweepConc_->setToolTip(tr("Requests in flight in the sweep's throughput step."));
    sloTtft_ = double_box(0, 1e7, 50, 0, 0, tr("none"));
    sloItl_ = double_box(0, 1e7, 5, 0, 0, tr("none"));
    sloE2e_ = double_box(0, 1e7, 100, 0, 0, tr("none"));
    timeout_ = double_box(0.1, 86400, 10, 1, 60);
    timeout_->setToolTip(tr("A request fails after this many seconds without data, or in all."));
    pricePerHour_ = double_box(0, 1e9, 0.5, 4, 0, tr("none"));
    pricePerHour_->setToolTip(
        tr("Cost: the endpoint's price per hour (a GPU-hour), charged on each step's wall time "
           "(a remote endpoint is paid while it is up). Excludes the per-token prices."));
    priceIn_ = double_box(0, 1e9, 0.1, 4, 0, tr("none"));
    priceIn_->setToolTip(tr("Cost: price per million input (prompt) tokens."));
    priceOut_ = double_box(0, 1e9, 0.1, 4, 0, tr("none"));
    priceOut_->setToolTip(tr("Cost: price per million output (generated) tokens."));
    log_ = new QCheckBox(tr("Log requests"));
    log_->setChecked(true);
    log_->setToolTip(tr("Every request to the run log, under one run of kind load_test."));
    connect(arrival_, &QComboBox::currentIndexChanged, this, [this] { updateFields(); });
    connect(sweep_, &QSpinBox::valueChanged, this, [this] { updateFields(); });

    // Two label-field pairs a row: the tab fits beside the settings panel
    // on a small screen.
    auto* form = new QGridLayout;
    form->setColumnStretch(1, 1);
    form->setColumnStretch(3, 1);
    auto* prompt_row = new QHBoxLayout;
    prompt_row->addWidget(promptFile_, 1);
    prompt_row->addWidget(browse);
    int r = 0;
    form->addWidget(new QLabel(tr("Target URL:")), r, 0);
    form->addWidget(url_, r++, 1, 1, 3);
    form->addWidget(new QLabel(tr("Compare with:")), r, 0);
    form->addWidget(compareUrl_, r++, 1, 1, 3);
    const std::pair<QString, QWidget*> pairs[] = {
        {tr("Model:"), model_},
        {tr("API key env:"), keyEnv_},
        {tr("B's model:"), compareModel_},
        {tr("B's key env:"), compareKeyEnv_},
        {tr("Arrival:"), arrival_},
        {tr("Rate (req/s):"), rate_},
        {tr("Burstiness:"), burstiness_},
        {tr("Concurrency:"), concurrency_},
        {tr("Requests:"), requests_},
        {tr("Duration (s):"), duration_},
        {tr("Max tokens:"), maxTokens_},
        {tr("Timeout (s):"), timeout_},
    };
    int i = 0;
    for (const auto& [label, w] : pairs) {
        form->addWidget(new QLabel(label), r + i / 2, 2 * (i % 2));
        form->addWidget(w, r + i / 2, 2 * (i % 2) + 1);
        ++i;
    }
    r += (i + 1) / 2;
    form->addWidget(new QLabel(tr("Prompts:")), r, 0);
    form->addLayout(prompt_row, r++, 1, 1, 3);
    const std::pair<QString, QWidget*> more[] = {
        {tr("Prompt tokens:"), promptMean_},    {tr("Tokens sd:"), promptSd_},
        {tr("Shared prefix:"), prefixShare_},   {tr("Sweep steps:"), sweep_},
        {tr("Sweep in flight:"), sweepConc_},   {tr("SLO TTFT p99 (ms):"), sloTtft_},
        {tr("SLO ITL p99 (ms):"), sloItl_},     {tr("SLO e2e p99 (ms):"), sloE2e_},
        {tr("Price per hour:"), pricePerHour_}, {tr("Price per M input:"), priceIn_},
        {tr("Price per M output:"), priceOut_},
    };
    i = 0;
    for (const auto& [label, w] : more) {
        form->addWidget(new QLabel(label), r + i / 2, 2 * (i % 2));
        form->addWidget(w, r + i / 2, 2 * (i % 2) + 1);
        ++i;
    }
    r += (i + 1) / 2;
    form->addWidget(log_, r++, 0, 1, 2);
    v->addLayout(form);

    auto* buttons = new QHBoxLayout;
    start_ = new QPushButton(tr("Start"));
    stop_ = new QPushButton(tr("Stop"));
    exportJson_ = new QPushButton(tr("Export JSON…"));
    exportCsv_ = new QPushButton(tr("Export CSV…"));
    exportTelemetry_ = new QPushButton(tr("Export telemetry CSV…"));
    exportTelemetry_->setToolTip(
        tr("The target's scheduler passes (batch size, prefill and decode tokens, KV blocks, "
           "preemptions), a row each; our server reports them, other servers do not"));
    connect(start_, &QPushButton::clicked, this, [this] { start(); });
    connect(stop_, &QPushButton::clicked, this, &LoadTab::stop);
    connect(exportJson_, &QPushButton::clicked, this, [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("Export JSON"), "load.json", tr("JSON (*.json)"));
        if (!p.isEmpty()) exportJson(p);
    });
    connect(exportCsv_, &QPushButton::clicked, this, [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("Export CSV"), "load.csv", tr("CSV (*.csv)"));
        if (!p.isEmpty()) exportCsv(p);
    });
    connect(exportTelemetry_, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, tr("Export telemetry CSV"),
                                                       "telemetry.csv", tr("CSV (*.csv)"));
        if (!p.isEmpty()) exportTelemetryCsv(p);
    });
    buttons->addWidget(start_);
    buttons->addWidget(stop_);
    buttons->addStretch(1);
    buttons->addWidget(exportJson_);
    buttons->addWidget(exportCsv_);
    buttons->addWidget(exportTelemetry_);
    v->addLayout(buttons);

    status_ = new QLabel(tr("Idle"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    best_ = new QLabel;
    best_->setObjectName("loadBest");
    best_->setWordWrap(true);
    cost_ = new QLabel;
    cost_->setObjectName("loadCost");
    cost_->setWordWrap(true);
    cost_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(status_);
    v->addWidget(best_);
    v->addWidget(cost_);

    table_ = new QTableWidget(0, ColumnCount);
    table_->setObjectName("loadSteps");
    table_->setHorizontalHeaderLabels({tr("step"), tr("offered"), tr("achieved"), tr("done"),
                                       tr("err"), tr("req/s"), tr("out tok/s"), tr("goodput"),
                                       tr("TTFT p50"), tr("TTFT p99"), tr("ITL p50"), tr("ITL p99"),
                                       tr("TPOT p50"), tr("e2e p50"), tr("e2e p99"),
                                       tr("queue p50"), tr("queue p99"), tr("progress")});
    table_->horizontalHeaderItem(ColOffered)
        ->setToolTip(tr("Requests/s asked for; c=N for a closed loop"));
    for (const int c : {ColQueueP50, ColQueueP99}) {
        table_->horizontalHeaderItem(c)->setToolTip(
            tr("Queue wait (ms) as the target reports it: the time a request waited for a slot "
               "on the server. Our server sends it; OpenAI, vLLM and llama-server do not (-)."));
    }
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setMinimumHeight(140);
    table_->setToolTip(tr("Rates in requests/s, latencies in ms (docs/load.md)"));
    v->addWidget(table_);

    charts_ = new LoadCharts;
    v->addWidget(charts_, 1);
}

void LoadTab::showEvent(QShowEvent* e) {
    // The placeholder names the URL an empty field means now.
    url_->setPlaceholderText(effectiveUrl());
    QWidget::showEvent(e);
}

QString LoadTab::effectiveUrl() const {
    const QString typed = url_->text().trimmed();
    if (!typed.isEmpty()) return typed;
    if (const auto* server = window() ? window()->findChild<ServerTab*>() : nullptr) {
        if (server->isListening() && !server->baseUrl().isEmpty()) return server->baseUrl() + "/v1";
    }
    return kDefaultUrl;
}

void LoadTab::updateFields() {
    const bool closed = arrival_->currentData().toString() == "concurrency";
    const bool sweeping = sweep_->value() > 0;
    const bool running = runner_->running();
    concurrency_->setEnabled(closed && !sweeping);
    rate_->setEnabled(!closed && !sweeping);
    burstiness_->setEnabled(arrival_->currentData().toString() == "gamma");
    sweepConc_->setEnabled(sweeping);
    start_->setEnabled(!running);
    stop_->setEnabled(running);
    const bool have = !runner_->steps().empty() && !running;
    exportJson_->setEnabled(have);
    exportCsv_->setEnabled(have);
    exportTelemetry_->setEnabled(have && !runner_->telemetry().empty());
}

void LoadTab::setStatus(const QString& text, bool error) {
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
}

QString LoadTab::statusText() const {
    return status_->text();
}

QString LoadTab::costText() const {
    return cost_->text();
}

void LoadTab::setPrice(double per_hour, double per_m_input, double per_m_output) {
    pricePerHour_->setValue(per_hour);
    priceIn_->setValue(per_m_input);
    priceOut_->setValue(per_m_output);
}

QString LoadTab::bestText() const {
    return best_->text();
}

bool LoadTab::isRunning() const {
    return runner_->running();
}

QString LoadTab::explain(const QString& url, const QString& reason) const {
    if (reason.startsWith("could not connect")) {
        return tr("Nothing is listening at %1: start the server (Server tab) or check the "
                  "address. (%2)")
            .arg(url, reason);
    }
    if (reason.startsWith("HTTP 401") || reason.startsWith("HTTP 403")) {
        return tr("%1 refused the key (%2): set the API key variable to the name of an "
                  "environment variable holding a valid key.")
            .arg(url, reason);
    }
    if (reason.startsWith("HTTP 404")) {
        return tr("%1 has no OpenAI route there (%2): check the address (it usually ends in "
                  "/v1) and the model name.")
            .arg(url, reason);
    }
    if (reason.startsWith("TLS")) {
        return tr("%1: the secure connection failed (%2): check the certificate or use http.")
            .arg(url, reason);
    }
    return tr("The load test failed: %1").arg(reason);
}

bool LoadTab::start() {
    if (runner_->running()) {
        setStatus(tr("A load test is running: stop it first."), true);
        return false;
    }
    LoadJob job;
    runUrl_ = effectiveUrl();
    job.target.base_url = runUrl_.toStdString();
    try {
        load::check_base_url(job.target.base_url);
    } catch (const std::invalid_argument& e) {
        setStatus(tr("Target URL: %1").arg(QString::fromUtf8(e.what())), true);
        return false;
    }
    job.target.model = model_->text().trimmed().toStdString();
    job.target.timeout_s = timeout_->value();
    // A key from the environment variable a field names; with none named,
    // the key the desktop's secret store holds for the URL (an endpoint
    // added under "Send to" in the Chat or Batch tab), if any. False
    // (status says why) when a named variable is not set.
    const auto key_of = [this](const QLineEdit* field, const std::string& url, std::string& into) {
        const QString var = field->text().trimmed();
        if (var.isEmpty()) {
            // No stored key (or no store): the requests go without one,
            // and a 401 names the key variable.
            if (const std::optional<QString> k =
                    gui::KeyStore().read(gui::key_account(QString::fromStdString(url))))
                into = k->toStdString();
            return true;
        }
        const char* key = std::getenv(var.toLocal8Bit().constData());
        if (key == nullptr || *key == '\0') {
            setStatus(tr("The environment variable %1 (API key variable) is not set or empty: "
                         "set it before starting the app, or clear the field.")
                          .arg(var),
                      true);
            return false;
        }
        into = key;
        return true;
    };
    if (!key_of(keyEnv_, job.target.base_url, job.target.api_key)) return false;
    if (const QString b = compareUrl_->text().trimmed(); !b.isEmpty()) {
        load::Target t = job.target;
        t.base_url = b.toStdString();
        try {
            load::check_base_url(t.base_url);
        } catch (const std::invalid_argument& e) {
            setStatus(tr("Compare with: %1").arg(QString::fromUtf8(e.what())), true);
            return false;
        }
        t.model = compareModel_->text().trimmed().toStdString();
        t.api_key.clear();
        if (!key_of(compareKeyEnv_, t.base_url, t.api_key)) return false;
        job.compare_target = std::move(t);
    }
    const QString kind = arrival_->currentData().toString();
    job.sweep = sweep_->value();
    job.sweep_concurrency = sweepConc_->value();
    if (kind == "concurrency" && job.sweep == 0) {
        job.plan.concurrency = concurrency_->value();
    } else {
        job.plan.arrival =
            load::parse_arrival(kind == "concurrency" ? "poisson" : kind.toStdString());
    }
    job.plan.rate = rate_->value();
    job.plan.burstiness = burstiness_->value();
    job.plan.requests = static_cast<size_t>(requests_->value());
    if (duration_->value() > 0) job.plan.duration_s = duration_->value();
    job.max_tokens = maxTokens_->value();
    job.slo.ttft_p99_ms = limit(sloTtft_);
    job.slo.itl_p99_ms = limit(sloItl_);
    job.slo.e2e_p99_ms = limit(sloE2e_);
    try {
        job.price =
            cost::price_from_fields(pricePerHour_->value(), priceIn_->value(), priceOut_->value());
    } catch (const std::exception& e) {
        setStatus(tr("Price: %1").arg(QString::fromUtf8(e.what())), true);
        return false;
    }
    try {
        if (!promptFile_->text().trimmed().isEmpty()) {
            job.prompts = load::read_prompt_set(promptFile_->text().trimmed().toStdString());
        } else {
            load::SyntheticPrompts sp;
            sp.mean_tokens = promptMean_->value();
            sp.stddev_tokens = promptSd_->value();
            sp.shared_prefix_share = prefixShare_->value();
            job.prompts = load::synthetic_prompts(
                sp, std::min<size_t>(static_cast<size_t>(requests_->value()), 4096));
        }
    } catch (const std::exception& e) {
        setStatus(tr("Prompts: %1").arg(QString::fromUtf8(e.what())), true);
        return false;
    }
    QString logged;
    if (log_->isChecked()) {
        if (recorder_ && recorder_->isOpen()) {
            job.db_path = recorder_->path().toStdString();
        } else {
            logged = tr(" (not logged: no run log is open)");
        }
    }

    table_->setRowCount(0);
    charts_->clear();
    charts_->setTelemetry({});
    best_->clear();
    cost_->clear();
    steps_total_ = job.sweep > 0 ? job.sweep + 2 : 1;
    current_ = -1;
    if (!runner_->start(std::move(job))) return false;
    setStatus(tr("Running against %1%2").arg(runUrl_, logged), false);
    updateFields();
    return true;
}

void LoadTab::stop() {
    if (!runner_->running()) return;
    runner_->stop();
    setStatus(tr("Stopping: waiting for the requests in flight…"), false);
}

void LoadTab::stopAndWait() {
    runner_->stopAndWait();
}

QString LoadTab::progressText() const {
    if (!runner_->running() || current_ < 0) return {};
    const QString reqs = current_total_ > 0
                             ? tr("%1 of %2 requests").arg(current_done_).arg(current_total_)
                             : tr("%1 requests").arg(current_done_);
    return tr("step %1 of %2 (%3), %4")
        .arg(current_ + 1)
        .arg(steps_total_)
        .arg(current_label_, reqs);
}

void LoadTab::onStepStarted(int index, const QString& label, qint64 total) {
    current_ = index;
    current_label_ = label;
    current_total_ = total;
    current_done_ = 0;
    if (table_->rowCount() <= index) table_->setRowCount(index + 1);
    table_->setItem(index, ColStep, new QTableWidgetItem(label));
    auto* bar = new QProgressBar;
    bar->setRange(0, total > 0 ? static_cast<int>(total) : 0);  // 0..0: busy
    bar->setValue(0);
    bar->setFormat(total > 0 ? QStringLiteral("%v / %m") : tr("%v requests"));
    table_->setCellWidget(index, ColProgress, bar);
}

void LoadTab::onRequestDone(int index, bool) {
    if (index != current_) return;
    ++current_done_;
    if (auto* bar = qobject_cast<QProgressBar*>(table_->cellWidget(index, ColProgress))) {
        if (bar->maximum() > 0) {
            bar->setValue(static_cast<int>(std::min<qint64>(current_done_, bar->maximum())));
        } else {
            bar->setFormat(tr("%1 requests").arg(current_done_));
        }
    }
}

void LoadTab::onStepDone(int index) {
    if (auto* bar = qobject_cast<QProgressBar*>(table_->cellWidget(index, ColProgress))) {
        if (bar->maximum() == 0) bar->setRange(0, 1);
        bar->setValue(bar->maximum());
    }
    showResults();
}

void LoadTab::showResults() {
    const load::Report rep = runner_->report();
    const std::optional<load::Report> other = runner_->compareReport();
    // The first target's steps, then (a comparison) the second's as "B: ".
    const auto fill = [this](const load::Report& r, int first_row, const QString& prefix) {
        for (size_t i = 0; i < r.steps.size(); ++i) {
            const load::StepStats& s = r.steps[i].stats;
            const int row = first_row + static_cast<int>(i);
            if (table_->rowCount() <= row) table_->setRowCount(row + 1);
            const QString offered = s.offered_rate
                                        ? num(*s.offered_rate, 2)
                                        : QStringLiteral("c=%1").arg(s.concurrency.value_or(0));
            const QString cells[] = {
                prefix + QString::fromStdString(r.steps[i].label) +
                    (static_cast<int>(i) == r.best ? tr("  ← best within SLOs") : QString()),
                offered,
                num(s.achieved_rate, 2),
                QString::number(s.completed),
                QString::number(s.errors),
                num(s.request_throughput, 2),
                num(s.output_throughput, 1),
                num(s.goodput, 2),
                num(s.ttft.p50, 1),
                num(s.ttft.p99, 1),
                num(s.itl.p50, 1),
                num(s.itl.p99, 1),
                num(s.tpot.p50, 1),
                num(s.e2e.p50, 1),
                num(s.e2e.p99, 1),
                num(s.queue_wait.p50, 1),
                num(s.queue_wait.p99, 1)};
            for (int c = 0; c < ColProgress; ++c) {
                auto* item = new QTableWidgetItem(cells[c]);
                if (c > ColStep) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
                table_->setItem(row, c, item);
            }
        }
    };
    fill(rep, 0, QString());
    if (other) fill(*other, static_cast<int>(rep.steps.size()), QStringLiteral("B: "));
    charts_->setSteps(rep.steps, rep.best, rep.slo);
    charts_->setCompare(other ? other->steps : std::vector<load::SweepStep>{});
    charts_->setTelemetry(runner_->telemetry());
    const auto best_text = [this](const load::Report& r) {
        if (r.best >= 0) {
            const load::SweepStep& b = r.steps[static_cast<size_t>(r.best)];
            return tr("Highest rate within the SLOs: %1 (%2 requests/s)")
                .arg(QString::fromStdString(b.label))
                .arg(b.stats.request_throughput, 0, 'f', 2);
        }
        if (r.slo.any() && !r.steps.empty()) return tr("No step met the SLOs.");
        return QString();
    };
    QString best = best_text(rep);
    if (other && !other->steps.empty()) {
        best = tr("A (%1): %2\nB (%3): %4")
                   .arg(QString::fromStdString(rep.target), best.isEmpty() ? tr("–") : best,
                        QString::fromStdString(other->target),
                        best_text(*other).isEmpty() ? tr("–") : best_text(*other));
    }
    best_->setText(best);
    // Cost per step (load::step_cost): one short line each, the formulas
    // in the tooltip, so the table stays in view.
    QStringList lines, formulas;
    const auto costs = [&](const load::Report& r, const QString& prefix) {
        if (!r.price) return;
        for (const load::SweepStep& st : r.steps) {
            const cost::Figures c = load::step_cost(st.stats, *r.price);
            const QString label = prefix + QString::fromStdString(st.label);
            lines << tr("Cost of %1: %2 %3 a request, %4 per 1k requests, %5 per M output tokens")
                         .arg(label)
                         .arg(c.per_request, 0, 'g', 4)
                         .arg(QString::fromStdString(r.price->currency))
                         .arg(c.per_1k_requests, 0, 'g', 4)
                         .arg(c.per_m_output_tokens, 0, 'g', 4);
            formulas << label + QStringLiteral(": ") + QString::fromStdString(c.formula);
        }
    };
    costs(rep, QString());
    if (other) costs(*other, QStringLiteral("B: "));
    cost_->setText(lines.join('\n'));
    cost_->setToolTip(formulas.join('\n'));
}

void LoadTab::onFinished(const QString& error, bool stopped) {
    showResults();
    const load::Report rep = runner_->report();
    const QString run = rep.run_id ? tr("; run %1 in the run log").arg(*rep.run_id) : QString();
    if (!error.isEmpty()) {
        setStatus(explain(runUrl_, error), true);
    } else if (stopped) {
        setStatus(tr("Stopped after %n step(s)%1", "", static_cast<int>(rep.steps.size())).arg(run),
                  false);
    } else {
        setStatus(tr("Done: %n step(s) against %1%2", "", static_cast<int>(rep.steps.size()))
                      .arg(runUrl_, run),
                  false);
    }
    current_ = -1;
    updateFields();
    emit runFinished();
}

bool LoadTab::exportJson(const QString& path) {
    const load::Report rep = runner_->report();
    QFile f(path);
    nlohmann::json doc = load::report_json(rep);
    if (const auto other = runner_->compareReport()) doc["compare"] = load::report_json(*other);
    const std::string text =
        doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        f.write(text.data(), static_cast<qint64>(text.size())) !=
            static_cast<qint64>(text.size())) {
        setStatus(tr("%1: cannot write the JSON file (%2)").arg(path, f.errorString()), true);
        return false;
    }
    setStatus(tr("Exported JSON to %1").arg(path), false);
    return true;
}

bool LoadTab::exportCsv(const QString& path) {
    try {
        const auto other = runner_->compareReport();
        load::write_csv(
            path.toStdString(),
            other ? load::compared_steps(runner_->steps(), other->steps) : runner_->steps(),
            runner_->report().price);
    } catch (const std::exception& e) {
        setStatus(QString::fromUtf8(e.what()), true);
        return false;
    }
    setStatus(tr("Exported CSV to %1").arg(path), false);
    return true;
}

std::vector<load::TelemetryRow> LoadTab::runnerTelemetry() const {
    return runner_->telemetry();
}

bool LoadTab::exportTelemetryCsv(const QString& path) {
    const std::vector<load::TelemetryRow> rows = runner_->telemetry();
    if (rows.empty()) {
        setStatus(tr("No scheduler telemetry to export: the target reports none"), true);
        return false;
    }
    try {
        load::write_telemetry_csv(path.toStdString(), rows, runner_->spans());
    } catch (const std::exception& e) {
        setStatus(QString::fromUtf8(e.what()), true);
        return false;
    }
    setStatus(
        tr("Exported %n scheduler pass(es) to %1", "", static_cast<int>(rows.size())).arg(path),
        false);
    return true;
}

void LoadTab::setCompareTarget(const QString& url, const QString& model) {
    compareUrl_->setText(url);
    compareModel_->setText(model);
}

void LoadTab::setTargetUrl(const QString& url) {
    url_->setText(url);
}
void LoadTab::setModel(const QString& model) {
    model_->setText(model);
}
void LoadTab::setApiKeyEnv(const QString& var) {
    keyEnv_->setText(var);
}
void LoadTab::setArrival(const QString& kind) {
    const int i = arrival_->findData(kind);
    if (i >= 0) arrival_->setCurrentIndex(i);
}
void LoadTab::setRate(double rps) {
    rate_->setValue(rps);
}
void LoadTab::setBurstiness(double b) {
    burstiness_->setValue(b);
}
void LoadTab::setConcurrency(int n) {
    concurrency_->setValue(n);
}
void LoadTab::setRequests(int n) {
    requests_->setValue(n);
}
void LoadTab::setDurationS(double s) {
    duration_->setValue(s);
}
void LoadTab::setMaxTokens(int n) {
    maxTokens_->setValue(n);
}
void LoadTab::setPromptFile(const QString& path) {
    promptFile_->setText(path);
}
void LoadTab::setSynthetic(double mean_tokens, double stddev_tokens, double shared_prefix_share) {
    promptMean_->setValue(mean_tokens);
    promptSd_->setValue(stddev_tokens);
    prefixShare_->setValue(shared_prefix_share);
}
void LoadTab::setSweepSteps(int n) {
    sweep_->setValue(n);
}
void LoadTab::setSweepConcurrency(int n) {
    sweepConc_->setValue(n);
}
void LoadTab::setSlo(double ttft_p99_ms, double itl_p99_ms, double e2e_p99_ms) {
    sloTtft_->setValue(ttft_p99_ms);
    sloItl_->setValue(itl_p99_ms);
    sloE2e_->setValue(e2e_p99_ms);
}
void LoadTab::setLogEnabled(bool on) {
    log_->setChecked(on);
}
void LoadTab::setTimeoutS(double s) {
    timeout_->setValue(s);
}

void LoadTab::saveSettings(QSettings& s) const {
    s.setValue("url", url_->text());
    s.setValue("model", model_->text());
    s.setValue("api_key_env", keyEnv_->text());  // the variable's name, never its value
    s.setValue("compare_url", compareUrl_->text());
    s.setValue("compare_model", compareModel_->text());
    s.setValue("compare_api_key_env", compareKeyEnv_->text());
    s.setValue("arrival", arrival_->currentData().toString());
    s.setValue("rate", rate_->value());
    s.setValue("burstiness", burstiness_->value());
    s.setValue("concurrency", concurrency_->value());
    s.setValue("requests", requests_->value());
    s.setValue("duration_s", duration_->value());
    s.setValue("max_tokens", maxTokens_->value());
    s.setValue("timeout_s", timeout_->value());
    s.setValue("prompts", promptFile_->text());
    s.setValue("prompt_mean", promptMean_->value());
    s.setValue("prompt_sd", promptSd_->value());
    s.setValue("prefix_share", prefixShare_->value());
    s.setValue("sweep", sweep_->value());
    s.setValue("sweep_concurrency", sweepConc_->value());
    s.setValue("slo_ttft_p99_ms", sloTtft_->value());
    s.setValue("slo_itl_p99_ms", sloItl_->value());
    s.setValue("slo_e2e_p99_ms", sloE2e_->value());
    s.setValue("log", log_->isChecked());
    s.setValue("price_per_hour", pricePerHour_->value());
    s.setValue("price_per_m_input", priceIn_->value());
    s.setValue("price_per_m_output", priceOut_->value());
}

void LoadTab::restoreSettings(const QSettings& s) {
    if (s.contains("url")) url_->setText(s.value("url").toString());
    if (s.contains("model")) model_->setText(s.value("model").toString());
    if (s.contains("api_key_env")) keyEnv_->setText(s.value("api_key_env").toString());
    if (s.contains("compare_url")) compareUrl_->setText(s.value("compare_url").toString());
    if (s.contains("compare_model")) compareModel_->setText(s.value("compare_model").toString());
    if (s.contains("compare_api_key_env"))
        compareKeyEnv_->setText(s.value("compare_api_key_env").toString());
    if (s.contains("arrival")) setArrival(s.value("arrival").toString());
    const auto dbl = [&s](const char* key, QDoubleSpinBox* b) {
        if (s.contains(key)) b->setValue(s.value(key).toDouble());
    };
    const auto num_ = [&s](const char* key, QSpinBox* b) {
        if (s.contains(key)) b->setValue(s.value(key).toInt());
    };
    dbl("rate", rate_);
    dbl("burstiness", burstiness_);
    num_("concurrency", concurrency_);
    num_("requests", requests_);
    dbl("duration_s", duration_);
    num_("max_tokens", maxTokens_);
    dbl("timeout_s", timeout_);
    if (s.contains("prompts")) promptFile_->setText(s.value("prompts").toString());
    dbl("prompt_mean", promptMean_);
    dbl("prompt_sd", promptSd_);
    dbl("prefix_share", prefixShare_);
    num_("sweep", sweep_);
    num_("sweep_concurrency", sweepConc_);
    dbl("slo_ttft_p99_ms", sloTtft_);
    dbl("slo_itl_p99_ms", sloItl_);
    dbl("slo_e2e_p99_ms", sloE2e_);
    dbl("price_per_hour", pricePerHour_);
    dbl("price_per_m_input", priceIn_);
    dbl("price_per_m_output", priceOut_);
    if (s.contains("log")) log_->setChecked(s.value("log").toBool());
    updateFields();
}

}  // namespace wb::ui
