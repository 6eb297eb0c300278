#include "ui/server_tab.h"

#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <cmath>

#include "desktop/engine_bridge.h"
#include "desktop/run_recorder.h"
#include "server/auth.h"
#include "ui/scroll_page.h"
#include "ui/server_charts.h"

namespace wb::ui {

namespace {

QDoubleSpinBox* double_box(double lo, double hi, double step, int decimals, double value) {
    auto* b = new QDoubleSpinBox;
    b->setRange(lo, hi);
    b->setSingleStep(step);
    b->setDecimals(decimals);
    b->setValue(value);
    return b;
}

QSpinBox* int_box(int lo, int hi, int value) {
    auto* b = new QSpinBox;
    b->setRange(lo, hi);
    b->setValue(value);
    return b;
}

QString figure(const QJsonValue& v) {
    return v.isDouble() ? QString::number(v.toDouble(), 'g', 4) : QStringLiteral("–");
}

}  // namespace

ServerTab::ServerTab(gui::EngineBridge* bridge, gui::RunRecorder* recorder, QWidget* parent)
    : QWidget(parent),
      bridge_(bridge),
      recorder_(recorder),
      runner_(new ServerRunner(this)),
      clock_(std::make_unique<QElapsedTimer>()) {
    build();
    connect(runner_, &ServerRunner::loading, this,
            [this](const QString& w) { setStatus(w, false); });
    connect(runner_, &ServerRunner::listeningAt, this, [this](const QString& url, qint64 run) {
        url_ = url;
        run_id_ = run;
        urlEdit_->setText(url + "/v1");  // what OpenAI clients take as base_url
        setStatus(tr("Listening on %1").arg(url), false);
        clock_->start();
        sampler_->start();
        updateButtons();
        emit listeningAt(url);
    });
    connect(runner_, &ServerRunner::failed, this, [this](const QString& why) {
        setStatus(why, true);
        url_.clear();
        updateButtons();
        emit serverStopped();
    });
    connect(runner_, &ServerRunner::stopped, this, [this](const QStringList& warnings) {
        sample();  // the last figures
        sampler_->stop();
        url_.clear();
        setStatus(warnings.isEmpty() ? tr("Stopped") : tr("Stopped; %1").arg(warnings.join("; ")),
                  !warnings.isEmpty());
        updateButtons();
        emit serverStopped();
    });
    connect(runner_, &ServerRunner::decided, this, &ServerTab::addDecision);
    updateButtons();
}

ServerTab::~ServerTab() {
    runner_->stopAndWait();
}

void ServerTab::build() {
    QVBoxLayout* v = scroll_page(this);

    auto* form = new QGridLayout;
    model_ = new QLineEdit;
    model_->setPlaceholderText(tr("the model loaded in the app"));
    model_->setToolTip(
        tr("The GGUF file to serve; empty: the model loaded in the app, opened "
           "again for the server with its own slots on the same device."));
    auto* browse_model = new QPushButton(tr("Browse…"));
    connect(browse_model, &QPushButton::clicked, this, [this] {
        const QString p = browse(tr("Model to serve"));
        if (!p.isEmpty()) model_->setText(p);
    });
    host_ = new QLineEdit(QStringLiteral("127.0.0.1"));
    host_->setToolTip(
        tr("Bind address. Anything but 127.0.0.1, ::1 or localhost is reachable "
           "from other computers and needs an API key."));
    port_ = int_box(0, 65535, 8080);
    port_->setToolTip(tr("TCP port; 0 picks a free one."));
    parallel_ = int_box(1, 256, 4);
    parallel_->setToolTip(tr("Requests running at once (continuous batching over one KV pool)."));
    maxQueue_ = int_box(0, 1 << 20, 64);
    maxQueue_->setToolTip(tr("Requests waiting for a slot; more get 429 with Retry-After."));
    apiKey_ = new QLineEdit;
    apiKey_->setEchoMode(QLineEdit::Password);
    apiKey_->setPlaceholderText(tr("none (loopback only)"));
    apiKey_->setToolTip(tr("Clients send 'Authorization: Bearer KEY'. Never saved."));
    noText_ = new QCheckBox(tr("Do not log text"));
    noText_->setToolTip(
        tr("Log requests without their prompt and answer text (counts, hashes "
           "and timings only)."));
    if (recorder_) noText_->setChecked(recorder_->noText());

    // Two label-field pairs a row, so the tab fits beside the settings
    // and the live charts on a small screen.
    auto* model_row = new QHBoxLayout;
    model_row->addWidget(model_, 1);
    model_row->addWidget(browse_model);
    form->addWidget(new QLabel(tr("Model:")), 0, 0);
    form->addLayout(model_row, 0, 1, 1, 3);
    form->addWidget(new QLabel(tr("Address:")), 1, 0);
    form->addWidget(host_, 1, 1);
    form->addWidget(new QLabel(tr("Port:")), 1, 2);
    form->addWidget(port_, 1, 3);
    form->addWidget(new QLabel(tr("API key:")), 2, 0);
    form->addWidget(apiKey_, 2, 1);
    form->addWidget(new QLabel(tr("Parallel:")), 2, 2);
    form->addWidget(parallel_, 2, 3);
    form->addWidget(new QLabel(tr("Max queue:")), 3, 0);
    form->addWidget(maxQueue_, 3, 1);
    form->addWidget(noText_, 3, 2, 1, 2);
    form->setColumnStretch(1, 1);
    form->setColumnStretch(3, 1);
    v->addLayout(form);

    auto* buttons = new QHBoxLayout;
    start_ = new QPushButton(tr("Start server"));
    stop_ = new QPushButton(tr("Stop"));
    urlEdit_ = new QLineEdit;
    urlEdit_->setReadOnly(true);
    urlEdit_->setPlaceholderText(tr("base URL"));
    urlEdit_->setToolTip(
        tr("The base URL for OpenAI clients (base_url); /health and /metrics "
           "are at the server's root."));
    copy_ = new QPushButton(tr("Copy URL"));
    copy_->setObjectName("copyUrl");
    connect(start_, &QPushButton::clicked, this, [this] { start(); });
    connect(stop_, &QPushButton::clicked, this, &ServerTab::stop);
    connect(copy_, &QPushButton::clicked, this, [this] {
        if (!url_.isEmpty()) QApplication::clipboard()->setText(urlEdit_->text());
    });
    buttons->addWidget(start_);
    buttons->addWidget(stop_);
    buttons->addWidget(urlEdit_, 1);
    buttons->addWidget(copy_);
    v->addLayout(buttons);
    status_ = new QLabel(tr("Stopped"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    counters_ = new QLabel;
    counters_->setWordWrap(true);
    v->addWidget(status_);
    v->addWidget(counters_);

    // The canary: the serve --canary-* options with their defaults.
    const rollout::Policy def;
    canary_ = new QGroupBox(tr("Canary rollout"));
    canary_->setCheckable(true);
    canary_->setChecked(false);
    auto* cg = new QGridLayout(canary_);
    cg->setColumnStretch(1, 1);
    cg->setColumnStretch(3, 1);
    canaryModel_ = new QLineEdit;
    canaryModel_->setPlaceholderText(tr("the new version's GGUF file"));
    auto* browse_canary = new QPushButton(tr("Browse…"));
    connect(browse_canary, &QPushButton::clicked, this, [this] {
        const QString p = browse(tr("Canary model"));
        if (!p.isEmpty()) canaryModel_->setText(p);
    });
    steps_ = new QLineEdit(QStringLiteral("5,10,25,50,100"));
    steps_->setToolTip(tr("The canary's share at each step, percent, increasing, ending at 100."));
    stepS_ = double_box(0.05, 86400.0 * 30, 10, 2, def.step_seconds);
    maxFailures_ = int_box(1, 1000, static_cast<int>(def.max_failures));
    shadow_ = double_box(0, 1, 0.05, 2, def.shadow_share);
    shadow_->setToolTip(tr("Share of canary requests also run on the stable version (drift)."));
    const rollout::Limits& l = def.limits;
    minRequests_ = int_box(1, 1 << 20, static_cast<int>(l.min_requests));
    minShadow_ = int_box(0, 1 << 20, static_cast<int>(l.min_shadow));
    ttftRatio_ = double_box(1, 1e6, 0.05, 2, l.max_ttft_p99_ratio);
    itlRatio_ = double_box(1, 1e6, 0.05, 2, l.max_itl_p99_ratio);
    errorIncrease_ = double_box(0, 1, 0.01, 3, l.max_error_rate_increase);
    minAgreement_ = double_box(0, 1, 0.01, 3, l.min_token_agreement);
    maxKld_ = double_box(0, 1e6, 0.01, 4, l.max_mean_kld);
    int r = 0;
    auto* canary_row = new QHBoxLayout;
    canary_row->addWidget(canaryModel_, 1);
    canary_row->addWidget(browse_canary);
    cg->addWidget(new QLabel(tr("Canary model:")), r, 0);
    cg->addLayout(canary_row, r++, 1, 1, 3);
    const std::pair<QString, QWidget*> fields[] = {
        {tr("Steps (%):"), steps_},
        {tr("Step interval (s):"), stepS_},
        {tr("Max failures:"), maxFailures_},
        {tr("Shadow share:"), shadow_},
        {tr("Min requests:"), minRequests_},
        {tr("Min shadow pairs:"), minShadow_},
        {tr("Max TTFT p99 ratio:"), ttftRatio_},
        {tr("Max ITL p99 ratio:"), itlRatio_},
        {tr("Max error rise:"), errorIncrease_},
        {tr("Min token agreement:"), minAgreement_},
        {tr("Max mean KLD (nats):"), maxKld_},
    };
    int i = 0;
    for (const auto& [label, w] : fields) {
        cg->addWidget(new QLabel(label), r + i / 2, 2 * (i % 2));
        cg->addWidget(w, r + i / 2, 2 * (i % 2) + 1);
        ++i;
    }
    r += (i + 1) / 2;
    auto* decide = new QHBoxLayout;
    promote_ = new QPushButton(tr("Promote now"));
    rollBack_ = new QPushButton(tr("Roll back now"));
    phase_ = new QLabel;
    connect(promote_, &QPushButton::clicked, this, [this] { promote(); });
    connect(rollBack_, &QPushButton::clicked, this, [this] { rollBack(); });
    decide->addWidget(promote_);
    decide->addWidget(rollBack_);
    decide->addWidget(phase_, 1);
    cg->addLayout(decide, r++, 0, 1, 4);
    timeline_ = new QTableWidget(0, 6);
    timeline_->setHorizontalHeaderLabels({tr("Time (s)"), tr("Step"), tr("Share"), tr("Verdict"),
                                          tr("Requests (stable / canary / shadow)"),
                                          tr("Checks (value vs bound)")});
    timeline_->horizontalHeader()->setStretchLastSection(true);
    timeline_->verticalHeader()->setVisible(false);
    timeline_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    timeline_->setMinimumHeight(120);
    cg->addWidget(timeline_, r++, 0, 1, 4);
    v->addWidget(canary_);

    charts_ = new ServerCharts;
    v->addWidget(charts_);

    sampler_ = new QTimer(this);
    sampler_->setInterval(250);
    connect(sampler_, &QTimer::timeout, this, &ServerTab::sample);
}

QString ServerTab::browse(const QString& title) {
    return QFileDialog::getOpenFileName(this, title, QString(), tr("GGUF models (*.gguf)"));
}

bool ServerTab::start() {
    if (runner_->running()) {
        setStatus(tr("The server is already running: stop it first."), true);
        return false;
    }
    ServerLaunch l;
    l.model_path = model_->text().trimmed();
    if (l.model_path.isEmpty() && bridge_ && bridge_->hasModel())
        l.model_path = bridge_->loadedRequest().path;
    if (l.model_path.isEmpty()) {
        setStatus(tr("No model: load one in the app, or choose a file to serve."), true);
        return false;
    }
    if (!QFileInfo(l.model_path).isFile()) {
        setStatus(tr("%1 is not a file: choose the GGUF file to serve.").arg(l.model_path), true);
        return false;
    }
    if (bridge_ && bridge_->hasModel()) {
        l.backend = bridge_->loadedRequest().backend;
        l.device = bridge_->loadedRequest().device;
    }
    server::ServeConfig& c = l.config;
    c.server.host = host().toStdString();
    c.server.port = port();
    c.server.api_key = apiKey_->text().toStdString();
    if (!server::is_loopback_host(c.server.host) && c.server.api_key.empty()) {
        setStatus(explainServeError("needs an API key", host(), port()), true);
        return false;
    }
    c.parallel = static_cast<uint32_t>(parallel());
    c.max_queue = static_cast<uint32_t>(maxQueue());
    c.no_text = noText();
    if (canaryEnabled()) {
        l.canary_path = canaryPath();
        if (!QFileInfo(l.canary_path).isFile()) {
            setStatus(tr("Canary rollout: choose the new version's GGUF file."), true);
            return false;
        }
        rollout::Policy& p = c.canary_policy;
        try {
            p.steps = rollout::parse_steps(canarySteps().toStdString());
        } catch (const std::invalid_argument& e) {
            setStatus(tr("Canary steps: %1").arg(QString::fromUtf8(e.what())), true);
            return false;
        }
        p.step_seconds = canaryStepSeconds();
        p.max_failures = static_cast<uint32_t>(canaryMaxFailures());
        p.shadow_share = canaryShadow();
        p.limits = canaryLimits();
        if (p.limits.min_shadow > 0 && p.shadow_share == 0) {
            setStatus(tr("A shadow share of 0 runs no shadow pairs: set min shadow pairs to 0 "
                         "(no drift checks) or a shadow share above 0."),
                      true);
            return false;
        }
        if (const std::string why = rollout::validate(p); !why.empty()) {
            setStatus(tr("Canary rollout: %1").arg(QString::fromStdString(why)), true);
            return false;
        }
    }
    if (recorder_ && recorder_->isOpen()) l.db_path = recorder_->path();
    charts_->clear();
    timeline_->setRowCount(0);
    run_id_ = 0;
    runner_->start(std::move(l));
    updateButtons();
    return true;
}

void ServerTab::stop() {
    if (!runner_->running()) return;
    setStatus(tr("Stopping…"), false);
    runner_->stop();
}

void ServerTab::stopAndWait() {
    runner_->stopAndWait();
    sampler_->stop();
}

bool ServerTab::isServing() const {
    return runner_->running();
}

bool ServerTab::isListening() const {
    return runner_->listening();
}

bool ServerTab::promote() {
    QString why;
    if (runner_->decideByHand(rollout::Verdict::Promote, &why)) return true;
    setStatus(tr("Cannot promote: %1").arg(why), true);
    return false;
}

bool ServerTab::rollBack() {
    QString why;
    if (runner_->decideByHand(rollout::Verdict::Rollback, &why)) return true;
    setStatus(tr("Cannot roll back: %1").arg(why), true);
    return false;
}

QString ServerTab::statusText() const {
    return status_->text();
}

QString ServerTab::countersText() const {
    return counters_->text();
}

void ServerTab::setStatus(const QString& text, bool error) {
    status_error_ = error;
    status_->setText(text);
    status_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
}

void ServerTab::sample() {
    const std::vector<server::VersionSnapshot> snap = runner_->snapshot();
    if (snap.empty()) return;
    charts_->addSample(static_cast<double>(clock_->elapsed()) / 1000.0, snap);
    QStringList lines;
    for (const server::VersionSnapshot& s : snap)
        lines << tr("%1 (%2): %3 requests, %4 answered 200, %5 tokens generated, %6 running, "
                    "%7 queued")
                     .arg(s.canary ? tr("canary") : tr("stable"), QString::fromStdString(s.version))
                     .arg(s.figures.requests)
                     .arg(s.figures.requests_ok)
                     .arg(s.figures.generated_tokens)
                     .arg(s.gauges.running)
                     .arg(s.gauges.queued);
    counters_->setText(lines.join('\n'));
}

void ServerTab::addDecision(const QString& json) {
    const QJsonObject d = QJsonDocument::fromJson(json.toUtf8()).object();
    const int row = timeline_->rowCount();
    timeline_->insertRow(row);
    QStringList checks;
    for (const QJsonValue& cv : d.value("checks").toArray()) {
        const QJsonObject c = cv.toObject();
        checks << QStringLiteral("%1 %2 vs %3: %4")
                      .arg(c.value("name").toString(), figure(c.value("value")),
                           figure(c.value("limit")), c.value("result").toString());
    }
    QString verdict = d.value("verdict").toString();
    if (d.value("manual").toBool()) verdict += tr(" (by hand)");
    const QStringList cells = {QString::number(d.value("time_s").toDouble(), 'f', 1),
                               QString::number(d.value("step").toInt() + 1),
                               QStringLiteral("%1% → %2%")
                                   .arg(100 * d.value("share_before").toDouble())
                                   .arg(100 * d.value("share_after").toDouble()),
                               verdict,
                               QStringLiteral("%1 / %2 / %3")
                                   .arg(d.value("n_stable").toInt())
                                   .arg(d.value("n_canary").toInt())
                                   .arg(d.value("n_shadow").toInt()),
                               checks.join(QStringLiteral("; "))};
    for (int c = 0; c < cells.size(); ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        QStringList details;
        for (const QJsonValue& cv : d.value("checks").toArray())
            details << cv.toObject().value("detail").toString();
        item->setToolTip(details.join('\n'));
        timeline_->setItem(row, c, item);
    }
    timeline_->resizeColumnsToContents();
    timeline_->scrollToBottom();
    phase_->setText(tr("Canary share now %1%").arg(100 * d.value("share_after").toDouble()));
    updateButtons();
    emit decisionAdded();
}

void ServerTab::updateButtons() {
    const bool running = runner_->running();
    start_->setEnabled(!running);
    stop_->setEnabled(running);
    copy_->setEnabled(!url_.isEmpty());
    const bool rolling = running && canaryEnabled();
    promote_->setEnabled(rolling);
    rollBack_->setEnabled(rolling);
    if (!running) urlEdit_->clear();
}

QString ServerTab::modelPath() const {
    return model_->text().trimmed();
}
void ServerTab::setModelPath(const QString& p) {
    model_->setText(p);
}
QString ServerTab::host() const {
    return host_->text().trimmed();
}
void ServerTab::setHost(const QString& h) {
    host_->setText(h);
}
int ServerTab::port() const {
    return port_->value();
}
void ServerTab::setPort(int p) {
    port_->setValue(p);
}
int ServerTab::parallel() const {
    return parallel_->value();
}
void ServerTab::setParallel(int n) {
    parallel_->setValue(n);
}
int ServerTab::maxQueue() const {
    return maxQueue_->value();
}
void ServerTab::setMaxQueue(int n) {
    maxQueue_->setValue(n);
}
void ServerTab::setApiKey(const QString& key) {
    apiKey_->setText(key);
}
bool ServerTab::noText() const {
    return noText_->isChecked();
}
void ServerTab::setNoText(bool on) {
    noText_->setChecked(on);
}
bool ServerTab::canaryEnabled() const {
    return canary_->isChecked();
}
void ServerTab::setCanaryEnabled(bool on) {
    canary_->setChecked(on);
}
QString ServerTab::canaryPath() const {
    return canaryModel_->text().trimmed();
}
void ServerTab::setCanaryPath(const QString& p) {
    canaryModel_->setText(p);
}
QString ServerTab::canarySteps() const {
    return steps_->text().trimmed();
}
void ServerTab::setCanarySteps(const QString& s) {
    steps_->setText(s);
}
double ServerTab::canaryStepSeconds() const {
    return stepS_->value();
}
void ServerTab::setCanaryStepSeconds(double s) {
    stepS_->setValue(s);
}
int ServerTab::canaryMaxFailures() const {
    return maxFailures_->value();
}
void ServerTab::setCanaryMaxFailures(int n) {
    maxFailures_->setValue(n);
}
double ServerTab::canaryShadow() const {
    return shadow_->value();
}
void ServerTab::setCanaryShadow(double share) {
    shadow_->setValue(share);
}

rollout::Limits ServerTab::canaryLimits() const {
    rollout::Limits l;
    l.min_requests = static_cast<uint32_t>(minRequests_->value());
    l.min_shadow = static_cast<uint32_t>(minShadow_->value());
    l.max_ttft_p99_ratio = ttftRatio_->value();
    l.max_itl_p99_ratio = itlRatio_->value();
    l.max_error_rate_increase = errorIncrease_->value();
    l.min_token_agreement = minAgreement_->value();
    l.max_mean_kld = maxKld_->value();
    return l;
}

void ServerTab::setCanaryLimits(const rollout::Limits& l) {
    minRequests_->setValue(static_cast<int>(l.min_requests));
    minShadow_->setValue(static_cast<int>(l.min_shadow));
    ttftRatio_->setValue(l.max_ttft_p99_ratio);
    itlRatio_->setValue(l.max_itl_p99_ratio);
    errorIncrease_->setValue(l.max_error_rate_increase);
    minAgreement_->setValue(l.min_token_agreement);
    maxKld_->setValue(l.max_mean_kld);
}

}  // namespace wb::ui
