#include "ui/compare/compare_tab.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>

#include "compare/compare.h"
#include "compare/compare_cost.h"
#include "desktop/settings_store.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/eval_inputs_dialog.h"
#include "ui/compare/report_table.h"
#include "ui/compare/token_diff_view.h"
#include "ui/widgets/price_fields.h"

namespace wb::ui::compare {

using wb::compare::StreamResult;

CompareTab::CompareTab(gui::CompareService* service, QWidget* parent)
    : QWidget(parent),
      paneSplit_(new QSplitter(Qt::Horizontal, this)),
      prompt_(new QLineEdit(this)),
      maxTokens_(new QSpinBox(this)),
      addBtn_(new QPushButton(tr("Add model…"), this)),
      addRemoteBtn_(new QPushButton(tr("Add endpoint…"), this)),
      runBtn_(new QPushButton(tr("Run"), this)),
      testBtn_(new QPushButton(tr("Run test set…"), this)),
      cancelBtn_(new QPushButton(tr("Cancel"), this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      table_(new ReportTable(this)),
      diff_(new TokenDiffView(this)),
      pplCtx_(static_cast<int>(wb::compare::CompareOptions{}.ppl_ctx)),
      repetitions_(static_cast<int>(wb::compare::CompareOptions{}.repetitions)),
      service_(service ? service : new gui::CompareService(this)) {
    setObjectName("compareTab");
    prompt_->setObjectName("comparePrompt");
    prompt_->setPlaceholderText(tr("Prompt sent to every model (greedy, same settings)"));
    prompt_->setText(QStringLiteral("Once upon a time"));
    maxTokens_->setRange(1, 4096);
    maxTokens_->setValue(48);
    maxTokens_->setToolTip(tr("Greedy tokens per model (no stop token, so replies line up)"));
    runBtn_->setObjectName("compareRun");
    testBtn_->setObjectName("compareTestSet");
    testBtn_->setToolTip(
        tr("Perplexity and KL divergence on a text file, accuracy on a JSONL test set"));
    cancelBtn_->setEnabled(false);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setObjectName("compareProgress");
    progress_->hide();  // shown while a run goes: a 0% bar before any run read as stuck
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    // The models row, then the prompt with its run buttons: the prompt keeps
    // the width of the tab however many buttons the models row has.
    auto* modelsRow = new QHBoxLayout;
    modelsRow->addWidget(addBtn_);
    modelsRow->addWidget(addRemoteBtn_);
    modelsRow->addStretch(1);
    auto* input = new QHBoxLayout;
    addRemoteBtn_->setToolTip(
        tr("Add a remote OpenAI-compatible endpoint saved under \"Send to\" in the Chat or "
           "Batch tab: its greedy reply streams beside the local models' and its text is "
           "compared with A's (no logits: not in the figures table)"));
    input->addWidget(new QLabel(tr("Prompt"), this));
    input->addWidget(prompt_, 1);
    input->addWidget(new QLabel(tr("max tokens"), this));
    input->addWidget(maxTokens_);
    input->addWidget(runBtn_);
    input->addWidget(testBtn_);
    input->addWidget(cancelBtn_);
    auto* prog = new QHBoxLayout;
    prog->addWidget(progress_, 1);
    prog->addWidget(status_, 2);

    // Before any model is added the panes' place says what to do, instead
    // of a blank area over an empty figures table.
    empty_ = new QLabel(
        tr("<p style='font-size:large'>Choose models to compare…</p>"
           "<p><b>Add model…</b> the reference first (A), then one or more variants of it "
           "(B, C, …), e.g. a copy from <i>Tools › Make quantized copy…</i>.</p>"
           "<p><b>Run</b> streams each model's greedy reply to the same prompt side by side, "
           "then fills the figures table (speed timed one model at a time, after a warm-up) "
           "and marks the tokens where a variant leaves A. "
           "<b>Run test set…</b> scores perplexity, KL divergence and accuracy.</p>"),
        this);
    empty_->setObjectName("compareEmptyState");
    empty_->setWordWrap(true);
    empty_->setAlignment(Qt::AlignCenter);
    empty_->setMargin(24);
    paneStack_ = new QStackedWidget(this);
    paneStack_->addWidget(empty_);
    paneStack_->addWidget(paneSplit_);
    auto* vsplit = new QSplitter(Qt::Vertical, this);
    vsplit->addWidget(paneStack_);
    vsplit->addWidget(table_);
    vsplit->addWidget(diff_);
    vsplit->setStretchFactor(0, 3);
    vsplit->setStretchFactor(1, 2);
    vsplit->setStretchFactor(2, 1);
    // The replies are what the tab is for: they keep at least the panes'
    // minimum (ComparePane, ~8 lines) and are never collapsed to nothing
    // by the figures table growing.
    vsplit->setChildrenCollapsible(false);
    vsplit->setObjectName("compareVSplit");
    paneSplit_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    // A price per model (one pass of the prompts priced, as `compare
    // --price-*`): a row of its own, so the prompt row keeps its width.
    prices_ = new PriceFields(tr("each model's engine time of one pass of the prompt"), this);
    auto* lay = new QVBoxLayout(this);
    lay->addLayout(modelsRow);
    lay->addLayout(input);
    lay->addWidget(prices_);
    lay->addWidget(vsplit, 1);
    lay->addLayout(prog);

    connect(addBtn_, &QPushButton::clicked, this, [this] {
        const QString p =
            QFileDialog::getOpenFileName(this, tr("Add a model to compare"), QString(),
                                         tr("GGUF models (*.gguf);;All files (*)"));
        if (!p.isEmpty()) addModel(p);
    });
    connect(addRemoteBtn_, &QPushButton::clicked, this, &CompareTab::addEndpointMenu);
    connect(runBtn_, &QPushButton::clicked, this, &CompareTab::runPrompt);
    connect(prompt_, &QLineEdit::returnPressed, this, &CompareTab::runPrompt);
    connect(testBtn_, &QPushButton::clicked, this, &CompareTab::runTestSet);
    connect(cancelBtn_, &QPushButton::clicked, this, &CompareTab::cancel);
    relabel();
}

CompareTab::~CompareTab() {
    // Before the panes go: no callback of a worker reaches them after this.
    if (service_) service_->stopAndWait();
}

ComparePane* CompareTab::addModel(const QString& path) {
    auto* pane = new ComparePane(path, paneSplit_);
    paneSplit_->addWidget(pane);
    panes_.push_back(pane);
    pane->setRemovable(!busy_);
    connect(pane, &ComparePane::removeRequested, this, &CompareTab::removeModel);
    relabel();
    return pane;
}

ComparePane* CompareTab::addRemote(const gui::RemoteTarget& target, const QString& api_key) {
    ComparePane* pane = addModel(target.base_url);
    pane->setRemote(target, api_key);
    return pane;
}

std::vector<ComparePane*> CompareTab::localPanes() const {
    std::vector<ComparePane*> out;
    for (ComparePane* p : panes_)
        if (!p->isRemote()) out.push_back(p);
    return out;
}

void CompareTab::addEndpointMenu() {
    const QList<gui::RemoteTarget> targets =
        store_ ? gui::read_remote_targets(store_->raw()) : QList<gui::RemoteTarget>{};
    if (targets.isEmpty()) {
        QMessageBox::information(
            this, tr("No endpoint saved"),
            tr("Add an endpoint first: \"Add endpoint…\" beside \"Send to\" in the Chat or "
               "Batch tab (its base URL, model id and API key)."));
        return;
    }
    QMenu menu(this);
    for (qsizetype i = 0; i < targets.size(); ++i)
        menu.addAction(targets[i].label())->setData(static_cast<int>(i));
    const QAction* chosen =
        menu.exec(addRemoteBtn_->mapToGlobal(QPoint(0, addRemoteBtn_->height())));
    if (!chosen) return;
    const gui::RemoteTarget t = targets[chosen->data().toInt()];
    QString key;
    if (t.has_key) {
        QString err;
        const std::optional<QString> k = gui::KeyStore().read(gui::key_account(t.base_url), &err);
        if (!k) {
            QMessageBox::warning(this, tr("Endpoint not added"),
                                 err.isEmpty() ? tr("No API key is stored for %1 any more: add "
                                                    "the endpoint again with its key.")
                                                     .arg(t.base_url)
                                               : err);
            return;
        }
        key = *k;
    }
    addRemote(t, key);
}

void CompareTab::removeModel(ComparePane* pane) {
    if (busy_) return;
    const auto it = std::find(panes_.begin(), panes_.end(), pane);
    if (it == panes_.end()) return;
    panes_.erase(it);
    pane->deleteLater();
    relabel();
}

void CompareTab::relabel() {
    for (size_t i = 0; i < panes_.size(); ++i) {
        panes_[i]->setLabel(QString(QChar(static_cast<char16_t>(u'A' + (i % 26)))));
    }
    // The empty state stands for the panes, the figures and the token view
    // until the first model is added.
    const bool empty = panes_.empty();
    paneStack_->setCurrentWidget(empty ? static_cast<QWidget*>(empty_) : paneSplit_);
    table_->setVisible(!empty);
    diff_->setVisible(!empty);
    // The hint follows the models added (it kept asking for two or more
    // models after three were added).
    if (busy_) return;
    if (panes_.size() < 2)
        showStatus(tr("Add two or more models (the first is the reference A)."));
    else
        showStatus(tr("%1 models. Run: each answers the prompt greedily; Run test set…: "
                      "perplexity and KL divergence against A.")
                       .arg(panes_.size()));
}

void CompareTab::setBackend(const QString& backend, const QString& device) {
    service_->setBackend(backend, device);
}

void CompareTab::setModelLoader(wb::compare::ModelLoadFn load) {
    service_->setModelLoader(std::move(load));
}

void CompareTab::setRecorder(gui::RunRecorder* recorder) {
    service_->setRecorder(recorder);
}

void CompareTab::setTestFiles(const QString& text_file, const QString& testset_file) {
    textFile_ = text_file;
    testsetFile_ = testset_file;
}

void CompareTab::setPrompt(const QString& prompt) {
    prompt_->setText(prompt);
}
void CompareTab::setMaxTokens(int n) {
    maxTokens_->setValue(n);
}
QString CompareTab::prompt() const {
    return prompt_->text();
}
int CompareTab::maxTokens() const {
    return maxTokens_->value();
}
void CompareTab::stopAndWait() {
    service_->stopAndWait();
}
QString CompareTab::statusText() const {
    return status_->text();
}
void CompareTab::showStatus(const QString& s) {
    status_->setText(s);
}

void CompareTab::setBusy(bool on) {
    busy_ = on;
    runBtn_->setEnabled(!on);
    testBtn_->setEnabled(!on);
    addBtn_->setEnabled(!on);
    cancelBtn_->setEnabled(on);
    for (ComparePane* p : panes_) p->setRemovable(!on);
    progress_->setVisible(on);
    if (on) {
        progress_->setRange(0, 0);  // busy until a progress message gives a fraction
    } else {
        progress_->setRange(0, 1);
        progress_->setValue(1);
    }
}

void CompareTab::cancel() {
    service_->cancel();
    showStatus(tr("cancelling…"));
}

void CompareTab::setPrice(double per_hour, double per_m_input, double per_m_output) {
    prices_->setPrice(per_hour, per_m_input, per_m_output);
}

void CompareTab::runPrompt() {
    if (busy_) return;
    if (panes_.size() < 2) {
        showStatus(tr("Add at least two models: A (reference) and a variant."));
        return;
    }
    const QString prompt = prompt_->text();
    if (prompt.isEmpty()) {
        showStatus(tr("Type a prompt first."));
        return;
    }
    try {
        price_ = prices_->price();
    } catch (const std::invalid_argument& e) {
        showStatus(tr("Price: %1").arg(QString::fromUtf8(e.what())));
        return;
    }
    service_->begin();
    setBusy(true);
    pending_ = static_cast<int>(panes_.size());
    anyError_ = false;
    diff_->setRows({});
    paneVocab_.assign(panes_.size(), 0);
    paneError_.assign(panes_.size(), QString());
    remoteResults_.assign(panes_.size(), std::nullopt);
    streamedPrompt_ = prompt;
    showStatus(tr("generating on %n model(s)…", nullptr, pending_));
    const uint32_t n_predict = static_cast<uint32_t>(maxTokens_->value());
    for (size_t i = 0; i < panes_.size(); ++i) startReply(static_cast<int>(i), prompt, n_predict);
}

void CompareTab::startReply(int index, const QString& prompt, uint32_t n_predict) {
    ComparePane* pane = panes_[size_t(index)];
    pane->startReply();
    if (pane->isRemote()) {
        service_->streamRemote(
            index, pane->remote(), pane->apiKey(), pane->label(), prompt, n_predict, pane,
            [pane](const QString& piece) { pane->appendToken(-1, piece); },
            [this, index](const load::RequestResult& r) {
                const QString error = r.ok ? QString() : QString::fromStdString(r.error);
                paneError_[size_t(index)] = error;
                if (!r.ok) panes_[size_t(index)]->finishReply(error);
                remoteResults_[size_t(index)] = r;
                onReplyDone(error, !r.ok && r.error == "cancelled");
            });
        return;
    }
    service_->streamLocal(
        index, pane->path(), prompt, n_predict, pane,
        [pane](int32_t id, const QString& piece) { pane->appendToken(id, piece); },
        [this, index](const StreamResult& r) {
            const QString error = QString::fromStdString(r.error);
            panes_[size_t(index)]->finishReply(error);
            paneVocab_[size_t(index)] = r.vocab_hash;
            paneError_[size_t(index)] = error;
            onReplyDone(error, r.cancelled);
        });
}

namespace {

// How a remote reply's text compares with A's (both greedy, same prompt).
QString versus_reference(const QString& a, const QString& text) {
    if (text == a) return QObject::tr("the same text as A");
    qsizetype i = 0;
    while (i < a.size() && i < text.size() && a[i] == text[i]) ++i;
    if (i == text.size())
        return QObject::tr("A's text up to character %1 of %2, where this reply stopped")
            .arg(i)
            .arg(a.size());
    if (i == a.size())
        return QObject::tr("A's text, then %1 more characters").arg(text.size() - a.size());
    return QObject::tr("differs from A at character %1 (\"%2\" against A's \"%3\")")
        .arg(i)
        .arg(text.mid(i, 12), a.mid(i, 12));
}

}  // namespace

void CompareTab::onReplyDone(const QString& error, bool cancelled) {
    if (!error.isEmpty() || cancelled) anyError_ = true;
    if (--pending_ > 0) return;
    // Every reply is in: the per-token view from the local panes' tokens
    // (a remote pane has text, not token ids).
    std::vector<TokenRow> rows;
    size_t ref = panes_.size();
    for (size_t i = 0; i < panes_.size() && i < paneVocab_.size(); ++i) {
        if (panes_[i]->isRemote()) continue;
        if (ref == panes_.size()) ref = i;
        rows.push_back(TokenRow{panes_[i]->label(), panes_[i]->tokens(), panes_[i]->pieces(),
                                paneVocab_[i] == paneVocab_[ref], paneError_[i]});
    }
    diff_->setRows(rows);
    // The remote panes' text against A's (A itself when it is remote).
    const QString a_text = panes_.empty() ? QString() : panes_[0]->replyText();
    for (size_t i = 0; i < panes_.size() && i < remoteResults_.size(); ++i) {
        if (!remoteResults_[i] || !remoteResults_[i]->ok) continue;
        const load::RequestResult& r = *remoteResults_[i];
        panes_[i]->showRemoteResult(
            r, i == 0 ? QString() : versus_reference(a_text, QString::fromStdString(r.output)));
    }
    remoteResults_.clear();
    emit repliesFinished();
    if (anyError_) {
        setBusy(false);
        const QString msg =
            service_->cancelRequested() ? tr("cancelled") : tr("a model failed: see its pane");
        showStatus(msg);
        emit comparisonFailed(msg);
        return;
    }
    // The figures use the prompt the panes streamed (the box may have been
    // edited since): the models' contexts were sized for it. Remote panes
    // only: no figures, their rows are logged under a run of their own.
    startComparison(tr("compare: %1").arg(streamedPrompt_.left(60)), {streamedPrompt_},
                    std::nullopt, std::nullopt, true);
}

void CompareTab::runTestSet() {
    if (busy_) return;
    if (panes_.size() < 2) {
        showStatus(tr("Add at least two models: A (reference) and a variant."));
        return;
    }
    if (localPanes().empty()) {
        showStatus(tr("A test set needs a local model: remote endpoints give no logits."));
        return;
    }
    QString text = textFile_.value_or(QString());
    QString testset = testsetFile_.value_or(QString());
    if (!textFile_ && !testsetFile_) {
        // One dialog: both inputs (the bundled samples unless chosen
        // before), their formats and sizes, and the perplexity window.
        EvalInputsDialog d(this);
        if (lastChosen_) {
            d.setTextFile(lastText_);
            d.setTestsetFile(lastTestset_);
        }
        d.setPerplexityWindow(pplCtx_);
        if (d.exec() != QDialog::Accepted) return;
        text = d.textFile();
        testset = d.testsetFile();
        pplCtx_ = d.perplexityWindow();
        lastText_ = text;
        lastTestset_ = testset;
        lastChosen_ = true;
    }
    if (text.isEmpty() && testset.isEmpty()) {
        showStatus(tr("No text file or test set chosen."));
        return;
    }
    service_->begin();
    streamedPrompt_.clear();  // no streamed reply: no draft runs after these figures
    setBusy(true);
    QStringList prompts;
    if (!prompt_->text().isEmpty()) prompts << prompt_->text();
    const QString name = tr("compare test set: %1 %2")
                             .arg(QFileInfo(text).fileName(), QFileInfo(testset).fileName())
                             .trimmed();
    // Nothing was streamed: run_compare loads each file once, sized for the text.
    startComparison(name, prompts, text.isEmpty() ? std::nullopt : std::optional<QString>(text),
                    testset.isEmpty() ? std::nullopt : std::optional<QString>(testset), false);
}

void CompareTab::startComparison(const QString& name, const QStringList& prompts,
                                 const std::optional<QString>& text,
                                 const std::optional<QString>& testset, bool streamed) {
    gui::FiguresRequest req;
    req.name = name;
    req.prompts = prompts;
    req.n_predict = static_cast<uint32_t>(maxTokens_->value());
    req.ppl_ctx = static_cast<uint32_t>(pplCtx_);
    req.repetitions = static_cast<uint32_t>(repetitions_);
    req.text = text;
    req.testset = testset;
    req.price = price_;
    // The figures' models carry their panes' letters (a remote A leaves the
    // first local model as the figures' reference).
    for (size_t i = 0; i < panes_.size(); ++i) {
        ComparePane* p = panes_[i];
        if (p->isRemote()) {
            if (streamed) req.remote_slots.push_back(static_cast<int>(i));
            continue;
        }
        if (streamed)
            req.model_slots.push_back(static_cast<int>(i));
        else
            req.paths.push_back(p->path());
        req.labels.push_back(p->label().toStdString());
    }
    showStatus(tr("computing figures…"));
    service_->runFigures(
        req, this, [this](const QString& msg) { onProgress(msg); },
        [this](const gui::FiguresResult& r) { onFigures(r); });
}

void CompareTab::onFigures(const gui::FiguresResult& r) {
    if (r.report) {
        onReport(r);
        return;
    }
    setBusy(false);
    if (!r.error.isEmpty()) {
        showStatus(r.error);
        emit comparisonFailed(r.error);
        return;
    }
    // Remote panes only: their text and client times are all there is.
    QString s = tr("done: remote endpoints only, so no figures (they need a local model's logits)");
    if (!r.log_error.isEmpty())
        s += tr("; not logged: %1").arg(r.log_error);
    else if (r.run_id > 0)
        s += tr("; %n response(s) logged as run %1", nullptr, r.logged).arg(r.run_id);
    showStatus(s);
    if (r.run_id > 0) emit runLogged(r.run_id, r.logged);
}

void CompareTab::onProgress(const QString& msg) {
    showStatus(msg);
    // "perplexity/KLD chunk 3/14", "test item 2/5", "prompt 1/3": a fraction.
    static const QRegularExpression frac(QStringLiteral("(\\d+)/(\\d+)\\s*$"));
    const QRegularExpressionMatch m = frac.match(msg);
    if (m.hasMatch() && m.captured(2).toInt() > 0) {
        progress_->setRange(0, m.captured(2).toInt());
        progress_->setValue(m.captured(1).toInt());
    } else {
        progress_->setRange(0, 0);
    }
}

void CompareTab::onReport(const gui::FiguresResult& r) {
    report_ = r.report;
    table_->setReport(*report_);
    // Each local pane's speed is its column's in the table: one set of
    // figures (remote panes keep their client-side line).
    const std::vector<ComparePane*> local = localPanes();
    for (size_t i = 0; i < local.size() && i < report_->models.size(); ++i) {
        local[i]->showSpeed(report_->models[i], report_->repetitions);
        // The same figure as `compare --price-*` (compare::model_cost).
        if (price_ && !report_->models[i].timed_runs.empty())
            local[i]->showCost(wb::compare::model_cost(report_->models[i], *price_), *price_);
    }
    setBusy(false);
    QString s = tr("done");
    for (const std::string& n : report_->notes)
        s += QStringLiteral("; ") + QString::fromStdString(n);
    if (!r.log_error.isEmpty()) {
        s += tr("; not logged: %1").arg(r.log_error);
    } else if (r.run_id > 0) {
        s += tr("; %n response(s) logged as run %1", nullptr, r.logged).arg(r.run_id);
    }
    showStatus(s);
    emit reportReady();
    if (r.run_id > 0) emit runLogged(r.run_id, r.logged);
    measureDrafts();
}

void CompareTab::measureDrafts() {
    // "target + draft" panes: the same greedy reply again with the draft,
    // each alone (one after the other, after the figures), so its decode
    // speed is not mixed with other models' work.
    std::vector<gui::DraftJob> jobs;
    for (size_t i = 0; i < panes_.size(); ++i) {
        const wb::compare::StreamDraft d = panes_[i]->draft();
        if (d.params.kind == scheduler::SpeculativeParams::Kind::None) continue;
        jobs.push_back({static_cast<int>(i), panes_[i]->path(), d});
    }
    if (jobs.empty() || streamedPrompt_.isEmpty()) return;
    service_->measureDrafts(
        std::move(jobs), streamedPrompt_, static_cast<uint32_t>(maxTokens_->value()), this,
        [this](int index, const StreamResult& res) {
            if (index < static_cast<int>(panes_.size())) panes_[size_t(index)]->showDraftSpeed(res);
        },
        [this] { emit draftSpeedsReady(); });
}

}  // namespace wb::ui::compare
