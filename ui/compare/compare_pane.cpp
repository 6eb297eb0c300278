#include "ui/compare/compare_pane.h"

#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTextCursor>
#include <QTextDocument>
#include <QVBoxLayout>

#include "compare/compare.h"
#include "desktop/speculation_text.h"
#include "load/client.h"
#include "ui/widgets/draft_picker.h"
#include "ui/widgets/wrap_label.h"

namespace wb::ui::compare {

QString ComparePane::breakable(const QString& text) {
    // QLabel wraps only at spaces; a file path or a long identifier in an
    // error would otherwise set the pane's minimum width and be clipped by
    // the splitter. A zero-width space after each separator of a long run
    // of non-space characters lets it wrap there.
    constexpr qsizetype kLongRun = 16;
    QString out;
    out.reserve(text.size() + text.size() / 8);
    qsizetype run = 0;
    for (const QChar c : text) {
        out += c;
        run = c.isSpace() ? 0 : run + 1;
        if (run >= kLongRun && (c == u'/' || c == u'\\' || c == u'_' || c == u'-' || c == u'.' ||
                                c == u',' || c == u':' || c == u'=' || run >= 3 * kLongRun)) {
            out += QChar(0x200B);
            run = 0;
        }
    }
    return out;
}

ComparePane::ComparePane(const QString& path, QWidget* parent)
    : QWidget(parent),
      path_(path),
      title_(new QLabel(this)),
      status_(new QLabel(this)),
      reply_(new QPlainTextEdit(this)),
      remove_(new QPushButton(tr("Remove"), this)),
      draft_(new DraftPicker(this)) {
    auto* top = new QHBoxLayout;
    top->addWidget(title_, 1);
    top->addWidget(remove_);
    auto* lay = new QVBoxLayout(this);
    lay->setContentsMargins(2, 2, 2, 2);
    lay->addLayout(top);
    draft_->kindBox()->setObjectName("compareDraft");
    draft_->kBox()->setObjectName("compareDraftK");
    auto* draftRow = new QHBoxLayout;
    draftRow->addWidget(draft_);
    draftRow->addStretch(1);
    lay->addLayout(draftRow);
    lay->addWidget(reply_, 1);
    lay->addWidget(status_);
    reply_->setReadOnly(true);
    // At least 8 lines of reply: a 48-token reply reads without scrolling.
    reply_->setMinimumHeight(reply_->fontMetrics().lineSpacing() * 8 + 2 * reply_->frameWidth() +
                             static_cast<int>(reply_->document()->documentMargin() * 2));
    reply_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    reply_->setObjectName("reply");
    title_->setToolTip(path);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Captions wrap inside the pane's width instead of widening it (and
    // being clipped); the full text is in the tooltip.
    for (QLabel* l : {title_, status_}) {
        l->setWordWrap(true);
        l->setMinimumWidth(1);
        l->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    }
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The box layout sizes wrapped labels from one line: in a squeezed
    // splitter a two-line caption was drawn over the reply.
    fit_wrapped_height(title_);
    fit_wrapped_height(status_);
    connect(remove_, &QPushButton::clicked, this, [this] { emit removeRequested(this); });
    setLabel(QStringLiteral("?"));
}

void ComparePane::setLabel(const QString& label) {
    label_ = label;
    title_->setText(QStringLiteral("<b>%1</b>%2 %3")
                        .arg(label.toHtmlEscaped(),
                             label == QLatin1String("A") ? tr(" (reference)") : QString(),
                             breakable(remote_ ? tr("remote: %1").arg(remote_->label())
                                               : QFileInfo(path_).fileName())
                                 .toHtmlEscaped()));
    fit_wrapped_height(title_);
}

void ComparePane::setRemote(const gui::RemoteTarget& target, const QString& api_key) {
    remote_ = target;
    apiKey_ = api_key;
    path_ = target.base_url;
    title_->setToolTip(target.base_url);
    draft_->hide();
    setLabel(label_);
}

void ComparePane::showRemoteResult(const wb::load::RequestResult& r, const QString& versus_a) {
    if (!r.ok) {
        finishReply(QString::fromStdString(r.error));
        return;
    }
    const QString source = r.output_tokens_source == "usage" ? tr("the endpoint's count")
                                                             : tr("approximate: chunks counted");
    auto ms = [](const std::optional<double>& v) {
        return v ? QString::number(*v, 'f', 1) + QStringLiteral(" ms") : QStringLiteral("—");
    };
    QString line = tr("%n token(s) (%1); client-side TTFT %2, e2e %3; %4", nullptr,
                      static_cast<int>(r.output_tokens))
                       .arg(source, ms(r.ttft_ms), ms(r.e2e_ms),
                            r.served_model.empty() ? tr("remote model")
                                                   : QString::fromStdString(r.served_model));
    if (!versus_a.isEmpty()) line += QStringLiteral("; ") + versus_a;
    status_->setText(breakable(line));
    status_->setToolTip(
        tr("A remote endpoint gives text, not logits: it is not in the figures table. Times "
           "are the client's, over the network, while the other panes run here."));
    fit_wrapped_height(status_);
}

void ComparePane::startReply() {
    tokens_.clear();
    costText_.clear();
    pieces_.clear();
    reply_->clear();
    status_->setText(tr("loading…"));
    fit_wrapped_height(status_);
    status_->setToolTip(QString());
}

void ComparePane::appendToken(int32_t id, const QString& piece) {
    tokens_.push_back(id);
    pieces_.push_back(piece);
    // insertPlainText at the end: no paragraph break per token.
    QTextCursor c(reply_->document());
    c.movePosition(QTextCursor::End);
    c.insertText(piece);
    status_->setText(tr("%n token(s)", nullptr, static_cast<int>(tokens_.size())));
    fit_wrapped_height(status_);
}

void ComparePane::finishReply(const QString& error) {
    if (!error.isEmpty()) {
        status_->setToolTip(error);
        status_->setText(breakable(tr("error: %1").arg(error)));
        fit_wrapped_height(status_);
        return;
    }
    status_->setText(tr("%n token(s); speed follows, measured one model at a time", nullptr,
                        static_cast<int>(tokens_.size())));
    status_->setToolTip(QString());
    fit_wrapped_height(status_);
}

void ComparePane::showSpeed(const wb::compare::ModelReport& m, uint32_t repetitions) {
    // median (min-max), as the table shows it
    auto fig = [](const wb::compare::SpeedFigure& f, int prec) {
        return QStringLiteral("%1 (%2-%3)")
            .arg(f.median, 0, 'f', prec)
            .arg(f.min, 0, 'f', prec)
            .arg(f.max, 0, 'f', prec);
    };
    status_->setText(tr("%n token(s); decode %1 tokens/s, prefill %2 tokens/s, TTFT %3 ms "
                        "(median (min-max) of %4 timed passes)",
                        nullptr, static_cast<int>(tokens_.size()))
                         .arg(fig(m.decode_tps, 1), fig(m.prefill_tps, 1), fig(m.ttft_ms, 2))
                         .arg(repetitions));
    status_->setToolTip(speedNote(repetitions));
    fit_wrapped_height(status_);
}

void ComparePane::showCost(const wb::cost::Figures& c, const wb::cost::Price& price) {
    const QString cur = QString::fromStdString(price.currency);
    costText_ = tr("cost %1 %2 a request, %3 per 1k requests, %4 per M output tokens")
                    .arg(c.per_request, 0, 'g', 4)
                    .arg(cur)
                    .arg(c.per_1k_requests, 0, 'g', 4)
                    .arg(c.per_m_output_tokens, 0, 'g', 4);
    status_->setText(status_->text() + QStringLiteral("; ") + costText_);
    status_->setToolTip(status_->toolTip() + QStringLiteral("\n") +
                        tr("Cost: %1").arg(QString::fromStdString(c.formula)));
    fit_wrapped_height(status_);
}

QString ComparePane::speedNote(uint32_t repetitions) {
    return tr("Speed: %1. The replies above stream side by side and are not timed.")
        .arg(QString::fromStdString(wb::compare::speed_method(repetitions)));
}

wb::compare::StreamDraft ComparePane::draft() const {
    wb::compare::StreamDraft d;
    d.params = gui::speculative_params(draft_->choice());
    d.model_path = draft_->draftFile().toStdString();
    return d;
}

void ComparePane::showDraftSpeed(const wb::compare::StreamResult& r) {
    const QString drafter = draft_->choice().kind == QLatin1String("ngram")
                                ? tr("n-gram")
                                : QFileInfo(draft_->draftFile()).fileName();
    QString line;
    if (!r.error.empty()) {
        line = tr("with draft %1: error: %2").arg(drafter, QString::fromStdString(r.error));
    } else {
        const scheduler::SpeculativeStats& s = r.speculative;
        line = tr("with draft %1 (run alone after the figures): decode %2 tokens/s, acceptance "
                  "%3% (%4 of %5 drafted), %6 accepted per target pass")
                   .arg(drafter)
                   .arg(r.run.decode_tps(), 0, 'f', 1)
                   .arg(100.0 * s.acceptance_rate(), 0, 'f', 1)
                   .arg(s.accepted)
                   .arg(s.drafted)
                   .arg(s.mean_accepted_per_pass(), 0, 'f', 2);
    }
    status_->setText(status_->text() + QStringLiteral("\n") + breakable(line));
    fit_wrapped_height(status_);
}

QString ComparePane::statusText() const {
    return QString(status_->text()).remove(QChar(0x200B));
}

QString ComparePane::replyText() const {
    return reply_->toPlainText();
}

void ComparePane::setRemovable(bool on) {
    remove_->setEnabled(on);
}

}  // namespace wb::ui::compare
