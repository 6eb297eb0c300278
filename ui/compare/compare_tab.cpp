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
#include <QtConcurrent/QtConcurrentRun>
#include <nlohmann/json.hpp>

#include "compare/compare.h"
#include "compare/compare_cost.h"
#include "compare/compare_jobs.h"
#include "desktop/settings_store.h"
#include "load/load_log.h"
#include "runlog/environment.h"
#include "runlog/run_log.h"
#include "ui/compare/compare_pane.h"
#include "ui/compare/eval_inputs_dialog.h"
#include "ui/compare/report_table.h"
#include "ui/compare/token_diff_view.h"
#include "ui/widgets/price_fields.h"

namespace wb::ui::compare {

using wb::compare::Cancelled;
using wb::compare::log_comparison;
using wb::compare::ModelLoadFn;
using wb::compare::responses_in;
using wb::compare::stream_reply;
using wb::compare::StreamResult;

CompareTab::CompareTab(QWidget* parent)
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
      cancel_(std::make_shared<std::atomic<bool>>(false)),
      loadFn_(&model::load_model) {
    setObjectName("compareTab");
    load_.backend = "vulkan";
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
    pool_.setMaxThreadCount(8);
    relabel();
}

CompareTab::~CompareTab() {
    cancel_->store(true);
    pool_.waitForDone();
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
    load_.backend = backend.toStdString();
    load_.device = device.toStdString();
}

void CompareTab::setModelLoader(ModelLoadFn load) {
    loadFn_ = load ? std::move(load) : ModelLoadFn(&model::load_model);
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
    cancel_->store(true);
    pool_.waitForDone();
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
    cancel_->store(true);
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
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    setBusy(true);
    const quint64 gen = ++gen_;
    pending_ = static_cast<int>(panes_.size());
    anyError_ = false;
    diff_->setRows({});
    paneVocab_.assign(panes_.size(), 0);
    paneError_.assign(panes_.size(), QString());
    streamed_.assign(panes_.size(), StreamedModel{});
    remoteReplies_.assign(panes_.size(), std::nullopt);
    streamedPrompt_ = prompt;
    showStatus(tr("generating on %n model(s)…", nullptr, pending_));
    const uint32_t n_predict = static_cast<uint32_t>(maxTokens_->value());
    for (size_t i = 0; i < panes_.size(); ++i) {
        ComparePane* pane = panes_[i];
        if (pane->isRemote()) {
            startRemoteReply(static_cast<int>(i), gen, prompt, n_predict);
            continue;
        }
        pane->startReply();
        const std::string path = pane->path().toStdString();
        streamed_[i].path = path;
        const int index = static_cast<int>(i);
        const model::LoadOptions lo = load_;
        const ModelLoadFn load = loadFn_;
        const auto cancel = cancel_;
        (void)QtConcurrent::run(
            &pool_, [this, gen, index, path, prompt, n_predict, lo, load, cancel] {
                StreamResult res = stream_reply(
                    path, prompt.toStdString(), n_predict, lo, load,
                    [this, gen, index](int32_t id, const std::string& piece) {
                        QMetaObject::invokeMethod(
                            this,
                            [this, gen, index, id, p = QString::fromStdString(piece)] {
                                if (gen == gen_ && index < static_cast<int>(panes_.size())) {
                                    panes_[size_t(index)]->appendToken(id, p);
                                }
                            },
                            Qt::QueuedConnection);
                    },
                    *cancel);
                // The model rides along to the UI thread and waits in streamed_
                // for the figures; a stale run's model is freed with the event.
                QMetaObject::invokeMethod(
                    this,
                    [this, gen, index, res = std::move(res)] {
                        if (gen != gen_ || index >= static_cast<int>(panes_.size())) return;
                        panes_[size_t(index)]->finishReply(QString::fromStdString(res.error));
                        paneVocab_[size_t(index)] = res.vocab_hash;
                        paneError_[size_t(index)] = QString::fromStdString(res.error);
                        if (size_t(index) < streamed_.size()) {
                            streamed_[size_t(index)].model = res.model;
                            streamed_[size_t(index)].load_ms = res.load_ms;
                        }
                        onReplyDone(index, gen, QString::fromStdString(res.error), res.cancelled);
                    },
                    Qt::QueuedConnection);
            });
    }
}

void CompareTab::startRemoteReply(int index, quint64 gen, const QString& prompt,
                                  uint32_t n_predict) {
    ComparePane* pane = panes_[size_t(index)];
    pane->startReply();
    const gui::RemoteTarget target = pane->remote();
    load::Target t;
    t.base_url = target.base_url.toStdString();
    t.model = target.model.toStdString();
    t.api_key = pane->apiKey().toStdString();
    // The raw prompt, as the local panes run it (BOS as the model asks),
    // not a chat template's rendering of it.
    t.api = load::Api::Completions;
    t.timeout_s = 120;
    load::RequestSpec s;
    s.prompt = prompt.toStdString();
    s.max_tokens = static_cast<int>(n_predict);
    s.temperature = 0.0;  // greedy, as the local panes
    s.cancel = cancel_;
    s.on_content = [this, gen, index](const std::string& piece) {
        QMetaObject::invokeMethod(
            this,
            [this, gen, index, p = QString::fromStdString(piece)] {
                if (gen == gen_ && index < static_cast<int>(panes_.size()))
                    panes_[size_t(index)]->appendToken(-1, p);
            },
            Qt::QueuedConnection);
    };
    const std::string label = pane->label().toStdString();
    (void)QtConcurrent::run(&pool_, [this, gen, index, t, s, target, label]() mutable {
        if (t.model.empty()) t.model = load::first_model_id(t);
        load::RequestResult r = load::send_request(t, s, load::steady_now_ms(), {});
        s.on_content = nullptr;
        s.cancel.reset();
        RemoteReply reply{target, t.model, label, std::move(s), std::move(r)};
        QMetaObject::invokeMethod(
            this,
            [this, gen, index, reply = std::move(reply)]() mutable {
                if (gen != gen_ || index >= static_cast<int>(panes_.size())) return;
                const load::RequestResult& res = reply.result;
                const QString error = res.ok ? QString() : QString::fromStdString(res.error);
                paneError_[size_t(index)] = error;
                if (!res.ok) panes_[size_t(index)]->finishReply(error);
                remoteReplies_[size_t(index)] = std::move(reply);
                onReplyDone(index, gen, error, !res.ok && res.error == "cancelled");
            },
            Qt::QueuedConnection);
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

void CompareTab::onReplyDone(int /*pane*/, quint64 gen, const QString& error, bool cancelled) {
    if (gen != gen_) return;
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
    std::vector<RemoteReply> remote;
    for (size_t i = 0; i < panes_.size() && i < remoteReplies_.size(); ++i) {
        if (!remoteReplies_[i]) continue;
        const RemoteReply& r = *remoteReplies_[i];
        if (r.result.ok)
            panes_[i]->showRemoteResult(
                r.result, i == 0
                              ? QString()
                              : versus_reference(a_text, QString::fromStdString(r.result.output)));
        remote.push_back(r);
    }
    remoteReplies_.clear();
    emit repliesFinished();
    std::vector<StreamedModel> all = std::move(streamed_);
    streamed_.clear();
    std::vector<StreamedModel> streamed;  // the local panes' models, in order
    for (size_t i = 0; i < all.size() && i < panes_.size(); ++i) {
        if (panes_[i]->isRemote()) continue;
        anyError_ = anyError_ || !all[i].model;
        streamed.push_back(std::move(all[i]));
    }
    all.clear();
    if (anyError_) {
        streamed.clear();  // the failed run's models are not needed any more
        setBusy(false);
        const QString msg = cancel_->load() ? tr("cancelled") : tr("a model failed: see its pane");
        showStatus(msg);
        emit comparisonFailed(msg);
        return;
    }
    // The figures use the prompt the panes streamed (the box may have been
    // edited since): the models' contexts were sized for it. Remote panes
    // only: no figures, their rows are logged under a run of their own.
    startComparison(tr("compare: %1").arg(streamedPrompt_.left(60)), {streamedPrompt_},
                    std::nullopt, std::nullopt, std::move(streamed), std::move(remote));
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
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    streamedPrompt_.clear();  // no streamed reply: no draft runs after these figures
    setBusy(true);
    ++gen_;
    QStringList prompts;
    if (!prompt_->text().isEmpty()) prompts << prompt_->text();
    const QString name = tr("compare test set: %1 %2")
                             .arg(QFileInfo(text).fileName(), QFileInfo(testset).fileName())
                             .trimmed();
    // Nothing was streamed: run_compare loads each file once, sized for the text.
    startComparison(name, prompts, text.isEmpty() ? std::nullopt : std::optional<QString>(text),
                    testset.isEmpty() ? std::nullopt : std::optional<QString>(testset), {});
}

int64_t CompareTab::logRemoteReplies(const std::string& db, int64_t run_id, const std::string& name,
                                     const std::vector<RemoteReply>& remote, bool no_text) {
    runlog::RunLog log = runlog::RunLog::open(db);
    const bool own_run = run_id == 0;
    if (own_run)
        run_id = log.begin_run("compare", name, nlohmann::json{{"remote_only", true}}, no_text);
    // The client machine's environment: it computes nothing but the client.
    const int64_t env = log.ensure_environment(runlog::collect_environment("cpu"));
    for (const RemoteReply& r : remote) {
        const std::string url = r.target.base_url.toStdString();
        runlog::ResponseRecord rec = load::remote_record(r.spec, r.result,
                                                         {{"target", url},
                                                          {"model", r.model},
                                                          {"api", "completions"},
                                                          {"temperature", 0.0},
                                                          {"compare_label", r.label}});
        rec.run_id = run_id;
        rec.request_id = r.label + "/p0";
        rec.model_version_id = load::remote_model_version(log, url, r.model);
        rec.environment_id = env;
        log.log_response(rec);
    }
    if (own_run) log.end_run(run_id);
    return run_id;
}

void CompareTab::startComparison(const QString& name, const QStringList& prompts,
                                 const std::optional<QString>& text,
                                 const std::optional<QString>& testset,
                                 std::vector<StreamedModel> streamed,
                                 std::vector<RemoteReply> remote) {
    wb::compare::CompareOptions o;
    if (streamed.empty()) {
        for (ComparePane* p : localPanes()) o.models.push_back(p->path().toStdString());
    } else {
        for (const StreamedModel& m : streamed) o.models.push_back(m.path);
    }
    for (const QString& p : prompts) o.prompts.push_back(p.toStdString());
    o.n_predict = static_cast<uint32_t>(maxTokens_->value());
    o.ppl_ctx = static_cast<uint32_t>(pplCtx_);
    o.repetitions = static_cast<uint32_t>(repetitions_);
    if (text) o.text_file = text->toStdString();
    if (testset) o.testset_file = testset->toStdString();
    const model::LoadOptions lo = load_;
    o.kv_type = lo.context.kv_type;  // the streamed models were loaded with it
    const ModelLoadFn load = loadFn_;
    const auto cancel = cancel_;
    const std::string db = runLogPath_.toStdString();
    const bool no_text = noText_ && noText_();
    const quint64 gen = gen_;
    // The figures' models carry their panes' letters (a remote A leaves the
    // first local model as the figures' reference).
    std::vector<std::string> labels;
    for (ComparePane* p : localPanes()) labels.push_back(p->label().toStdString());
    showStatus(tr("computing figures…"));
    if (o.models.empty()) {
        // Remote panes only: their text and client times are all there is.
        (void)QtConcurrent::run(&pool_, [this, db, no_text, gen, name, remote = std::move(remote)] {
            QString log_error;
            qint64 run_id = 0;
            if (!db.empty() && !remote.empty()) {
                try {
                    run_id = logRemoteReplies(db, 0, name.toStdString(), remote, no_text);
                } catch (const std::exception& e) {
                    log_error = QString::fromStdString(e.what());
                }
            }
            const int n = static_cast<int>(remote.size());
            QMetaObject::invokeMethod(
                this,
                [this, gen, log_error, run_id, n] {
                    if (gen != gen_) return;
                    setBusy(false);
                    QString s =
                        tr("done: remote endpoints only, so no figures (they need a "
                           "local model's logits)");
                    if (!log_error.isEmpty())
                        s += tr("; not logged: %1").arg(log_error);
                    else if (run_id > 0)
                        s += tr("; %n response(s) logged as run %1", nullptr, n).arg(run_id);
                    showStatus(s);
                    if (run_id > 0) emit runLogged(run_id, n);
                },
                Qt::QueuedConnection);
        });
        return;
    }
    const std::optional<cost::Price> price = price_;
    (void)QtConcurrent::run(&pool_, [this, o, lo, load, cancel, db, no_text, gen, name, labels,
                                     price, streamed = std::move(streamed),
                                     remote = std::move(remote)]() mutable {
        std::shared_ptr<wb::compare::CompareReport> rep;
        QString error, log_error;
        qint64 run_id = 0;
        int n_logged = 0;
        const wb::compare::CompareProgress progress = [this, cancel, gen](const std::string& msg) {
            // Progress comes between prompts / chunks / items: the place to stop.
            if (cancel->load()) throw Cancelled{};
            QMetaObject::invokeMethod(
                this,
                [this, gen, m = QString::fromStdString(msg)] {
                    if (gen == gen_) onProgress(m);
                },
                Qt::QueuedConnection);
        };
        try {
            if (streamed.empty()) {
                const wb::compare::ModelLoader loader =
                    [&lo, &load](const std::string& path, const model::ContextParams& cp) {
                        model::LoadOptions l = lo;
                        l.context = cp;
                        return load(path, l);
                    };
                rep = std::make_shared<wb::compare::CompareReport>(
                    wb::compare::run_compare(o, loader, progress));
            } else {
                std::vector<wb::compare::LoadedModel> models;  // [n_panes], borrowed
                for (const StreamedModel& m : streamed) {
                    models.push_back({m.model.get(), m.load_ms});
                }
                rep = std::make_shared<wb::compare::CompareReport>(
                    wb::compare::run_compare(o, models, progress));
            }
        } catch (const Cancelled&) {
            error = tr("cancelled");
        } catch (const std::exception& e) {
            error = QString::fromStdString(e.what());
        }
        streamed.clear();  // the models' memory goes back now, not when the task is deleted
        if (rep && labels.size() == rep->models.size()) {
            for (size_t i = 0; i < labels.size(); ++i) rep->models[i].label = labels[i];
            if (!labels.empty() && labels[0] != "A")
                rep->notes.push_back("the figures are against " + labels[0] +
                                     ", the first local model: A is a remote endpoint (no logits)");
        }
        if (rep && !db.empty()) {
            try {
                run_id = log_comparison(db, name.toStdString(), *rep, lo, no_text, price);
                n_logged = static_cast<int>(responses_in(*rep));
                if (!remote.empty()) {
                    logRemoteReplies(db, run_id, name.toStdString(), remote, no_text);
                    n_logged += static_cast<int>(remote.size());
                }
            } catch (const std::exception& e) {
                log_error = QString::fromStdString(e.what());
            }
        }
        QMetaObject::invokeMethod(
            this,
            [this, gen, rep, error, log_error, run_id, n_logged] {
                if (gen != gen_) return;
                if (!rep) {
                    setBusy(false);
                    showStatus(error);
                    emit comparisonFailed(error);
                    return;
                }
                onReport(rep, log_error, run_id, n_logged);
            },
            Qt::QueuedConnection);
    });
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

void CompareTab::onReport(std::shared_ptr<wb::compare::CompareReport> r, const QString& log_error,
                          qint64 run_id, int n_logged) {
    report_ = std::move(r);
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
    if (!log_error.isEmpty()) {
        s += tr("; not logged: %1").arg(log_error);
    } else if (run_id > 0) {
        s += tr("; %n response(s) logged as run %1", nullptr, n_logged).arg(run_id);
    }
    showStatus(s);
    emit reportReady();
    if (run_id > 0) emit runLogged(run_id, n_logged);
    measureDrafts();
}

void CompareTab::measureDrafts() {
    // "target + draft" panes: the same greedy reply again with the draft,
    // each alone (one after the other, after the figures), so its decode
    // speed is not mixed with other models' work.
    std::vector<std::pair<int, wb::compare::StreamDraft>> jobs;
    std::vector<std::string> paths;
    for (size_t i = 0; i < panes_.size(); ++i) {
        const wb::compare::StreamDraft d = panes_[i]->draft();
        if (d.params.kind == scheduler::SpeculativeParams::Kind::None) continue;
        jobs.emplace_back(static_cast<int>(i), d);
        paths.push_back(panes_[i]->path().toStdString());
    }
    if (jobs.empty() || streamedPrompt_.isEmpty() || !cancel_) return;
    const quint64 gen = gen_;
    const std::string prompt = streamedPrompt_.toStdString();
    const auto n_predict = static_cast<uint32_t>(maxTokens_->value());
    const model::LoadOptions lo = load_;
    const wb::compare::ModelLoadFn load = loadFn_;
    const auto cancel = cancel_;
    (void)QtConcurrent::run(&pool_, [this, gen, jobs, paths, prompt, n_predict, lo, load, cancel] {
        for (size_t j = 0; j < jobs.size(); ++j) {
            StreamResult res =
                stream_reply(paths[j], prompt, n_predict, lo, load, {}, *cancel, jobs[j].second);
            res.model.reset();  // nothing reuses it
            const int index = jobs[j].first;
            const bool last = j + 1 == jobs.size();
            QMetaObject::invokeMethod(
                this,
                [this, gen, index, last, res = std::move(res)] {
                    if (gen != gen_) return;
                    if (index < static_cast<int>(panes_.size()))
                        panes_[size_t(index)]->showDraftSpeed(res);
                    if (last) emit draftSpeedsReady();
                },
                Qt::QueuedConnection);
        }
    });
}

}  // namespace wb::ui::compare
