#include "compare/compare_tab.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "compare/compare.h"
#include "compare/compare_cost.h"
#include "compare/compare_jobs.h"
#include "compare/compare_pane.h"
#include "compare/eval_inputs_dialog.h"
#include "compare/report_table.h"
#include "compare/token_diff_view.h"
#include "price_fields.h"

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

    auto* input = new QHBoxLayout;
    input->addWidget(addBtn_);
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
    streamedPrompt_ = prompt;
    showStatus(tr("generating on %n model(s)…", nullptr, pending_));
    const uint32_t n_predict = static_cast<uint32_t>(maxTokens_->value());
    for (size_t i = 0; i < panes_.size(); ++i) {
        ComparePane* pane = panes_[i];
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

void CompareTab::onReplyDone(int /*pane*/, quint64 gen, const QString& error, bool cancelled) {
    if (gen != gen_) return;
    if (!error.isEmpty() || cancelled) anyError_ = true;
    if (--pending_ > 0) return;
    // Every reply is in: the per-token view from the streamed tokens.
    std::vector<TokenRow> rows;
    for (size_t i = 0; i < panes_.size() && i < paneVocab_.size(); ++i) {
        rows.push_back(TokenRow{panes_[i]->label(), panes_[i]->tokens(), panes_[i]->pieces(),
                                paneVocab_[i] == paneVocab_[0], paneError_[i]});
    }
    diff_->setRows(rows);
    emit repliesFinished();
    std::vector<StreamedModel> streamed = std::move(streamed_);
    streamed_.clear();
    for (const StreamedModel& m : streamed) anyError_ = anyError_ || !m.model;
    if (anyError_) {
        streamed.clear();  // the failed run's models are not needed any more
        setBusy(false);
        const QString msg = cancel_->load() ? tr("cancelled") : tr("a model failed: see its pane");
        showStatus(msg);
        emit comparisonFailed(msg);
        return;
    }
    // The figures use the prompt the panes streamed (the box may have been
    // edited since): the models' contexts were sized for it.
    startComparison(tr("compare: %1").arg(streamedPrompt_.left(60)), {streamedPrompt_},
                    std::nullopt, std::nullopt, std::move(streamed));
}

void CompareTab::runTestSet() {
    if (busy_) return;
    if (panes_.size() < 2) {
        showStatus(tr("Add at least two models: A (reference) and a variant."));
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

void CompareTab::startComparison(const QString& name, const QStringList& prompts,
                                 const std::optional<QString>& text,
                                 const std::optional<QString>& testset,
                                 std::vector<StreamedModel> streamed) {
    wb::compare::CompareOptions o;
    if (streamed.empty()) {
        for (ComparePane* p : panes_) o.models.push_back(p->path().toStdString());
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
    showStatus(tr("computing figures…"));
    (void)QtConcurrent::run(&pool_, [this, o, lo, load, cancel, db, no_text, gen, name,
                                     streamed = std::move(streamed)]() mutable {
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
        if (rep && !db.empty()) {
            try {
                run_id = log_comparison(db, name.toStdString(), *rep, lo, no_text);
                n_logged = static_cast<int>(responses_in(*rep));
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
    // Each pane's speed is its column's in the table: one set of figures.
    for (size_t i = 0; i < panes_.size() && i < report_->models.size(); ++i) {
        panes_[i]->showSpeed(report_->models[i], report_->repetitions);
        // The same figure as `compare --price-*` (compare::model_cost).
        if (price_ && !report_->models[i].timed_runs.empty())
            panes_[i]->showCost(wb::compare::model_cost(report_->models[i], *price_), *price_);
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
