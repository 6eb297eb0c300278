#include "ui/compare/eval_inputs_dialog.h"

#include <QDialogButtonBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include "compare/compare.h"
#include "compare/testset.h"
#include "paths.h"
#include "ui/widgets/wrap_label.h"

namespace wb::ui::compare {

namespace {

QString sample(const char* name) {
    return QString::fromStdString(paths::find_sample(name).string());
}

QLabel* note(const QString& text, QWidget* parent) {
    auto* l = new QLabel(text, parent);
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The form grows only Expanding fields: a Preferred label kept the
    // width QLabel guesses for wrapped text, a third of the dialog.
    QSizePolicy p = l->sizePolicy();
    p.setHorizontalPolicy(QSizePolicy::Expanding);
    l->setSizePolicy(p);
    fit_wrapped_height(l);  // a form sizes it from a narrow wrap otherwise
    return l;
}

// A path field with a Browse… button.
QWidget* file_row(QLineEdit* edit, const QString& title, const QString& filter, QWidget* parent) {
    auto* w = new QWidget(parent);
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(edit, 1);
    auto* browse = new QPushButton(QObject::tr("Browse…"), w);
    h->addWidget(browse);
    QObject::connect(browse, &QPushButton::clicked, w, [edit, title, filter, w] {
        const QString p =
            QFileDialog::getOpenFileName(w, title, QFileInfo(edit->text()).path(), filter);
        if (!p.isEmpty()) edit->setText(p);
    });
    return w;
}

}  // namespace

EvalInputsDialog::EvalInputsDialog(QWidget* parent)
    : QDialog(parent),
      text_(new QLineEdit(this)),
      testset_(new QLineEdit(this)),
      window_(new QSpinBox(this)),
      textInfo_(note({}, this)),
      testsetInfo_(note({}, this)) {
    setWindowTitle(tr("Run test set"));
    setObjectName("compareTestInputs");
    text_->setObjectName("testText");
    testset_->setObjectName("testSet");
    window_->setObjectName("testPplWindow");
    text_->setPlaceholderText(tr("none: no perplexity or KL divergence"));
    testset_->setPlaceholderText(tr("none: no accuracy"));
    window_->setRange(4, 1 << 20);
    window_->setSuffix(tr(" tokens"));
    window_->setValue(static_cast<int>(wb::compare::CompareOptions{}.ppl_ctx));
    window_->setToolTip(tr("llama-perplexity -c; workbench-cli compare --ctx (default %1)")
                            .arg(wb::compare::CompareOptions{}.ppl_ctx));
    text_->setText(sample(paths::kSamplePerplexityText));
    testset_->setText(sample(paths::kSampleTestSet));

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::ExpandingFieldsGrow);
    form->addRow(note(tr("Every model scores the same inputs; A is the reference. Leave a field "
                         "empty to skip it. The bundled samples are simple children's stories "
                         "(what the default model knows)."),
                      this));
    form->addRow(tr("Text:"), file_row(text_, tr("Text for perplexity and KL divergence"),
                                       tr("Text (*.txt *.raw);;All files (*)"), this));
    form->addRow(QString(), note(tr("Plain UTF-8 text. It is cut into windows of the size below; "
                                    "each model's perplexity (PPL) is scored on the second half "
                                    "of every window, as llama-perplexity does, and its KL "
                                    "divergence from A on the same tokens."),
                                 this));
    form->addRow(QString(), textInfo_);
    form->addRow(tr("Perplexity window:"), window_);
    form->addRow(tr("Test set:"), file_row(testset_, tr("JSONL test set"),
                                           tr("JSONL (*.jsonl);;All files (*)"), this));
    form->addRow(QString(),
                 note(tr("JSON Lines, one item per line: {\"prompt\": \"…\", \"answer\": \"…\", "
                         "\"match\": \"contains\" or \"exact\", \"max_tokens\": 32, \"id\": "
                         "\"…\"}. Each model continues the prompt greedily; an item counts as "
                         "correct when the reply contains (or, trimmed, equals) the answer. "
                         "Lines starting with # are comments."),
                      this));
    form->addRow(QString(), testsetInfo_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* lay = new QVBoxLayout(this);
    lay->addLayout(form);
    lay->addWidget(buttons);
    connect(text_, &QLineEdit::textChanged, this, &EvalInputsDialog::refresh);
    connect(testset_, &QLineEdit::textChanged, this, &EvalInputsDialog::refresh);
    connect(window_, &QSpinBox::valueChanged, this, &EvalInputsDialog::refresh);
    refresh();
    // As tall as the notes need at this width: lay out once at the width
    // so each note knows its real width, pin the notes' heights to it,
    // then take the height the rows add up to (the size hint would wrap
    // the notes narrower and spread the extra height between the rows).
    constexpr int kWidth = 640;
    resize(kWidth, minimumSizeHint().height());
    layout()->activate();
    for (QLabel* l : findChildren<QLabel*>())
        if (l->wordWrap()) fit_wrapped_height(l);
    layout()->activate();
    resize(kWidth, minimumSizeHint().height());
}

QString EvalInputsDialog::textFile() const {
    return text_->text().trimmed();
}
QString EvalInputsDialog::testsetFile() const {
    return testset_->text().trimmed();
}
int EvalInputsDialog::perplexityWindow() const {
    return window_->value();
}
void EvalInputsDialog::setTextFile(const QString& path) {
    text_->setText(path);
}
void EvalInputsDialog::setTestsetFile(const QString& path) {
    testset_->setText(path);
}
void EvalInputsDialog::setPerplexityWindow(int n_ctx) {
    window_->setValue(n_ctx);
}

void EvalInputsDialog::refresh() {
    textInfo_->setText(describeText(textFile(), perplexityWindow()));
    testsetInfo_->setText(describeTestset(testsetFile()));
    fit_wrapped_height(textInfo_);
    fit_wrapped_height(testsetInfo_);
}

QString EvalInputsDialog::describeText(const QString& path, int window) {
    if (path.isEmpty()) return tr("Not part of the run.");
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return tr("Cannot read %1.").arg(path);
    const QString text = QString::fromUtf8(f.readAll());
    const qsizetype words =
        text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts).size();
    const qsizetype lines =
        text.isEmpty() ? 0 : text.count(QLatin1Char('\n')) + (text.endsWith('\n') ? 0 : 1);
    return tr("%1: %2 KiB, %3 words, %4 lines. A %5-token window needs at least %6 tokens of "
              "the model's tokenizer (two windows; a word is 1 to 4 tokens), and each further "
              "%5 tokens add a window.")
        .arg(QFileInfo(path).fileName())
        .arg(static_cast<double>(f.size()) / 1024.0, 0, 'f', 1)
        .arg(words)
        .arg(lines)
        .arg(window)
        .arg(2 * window);
}

QString EvalInputsDialog::describeTestset(const QString& path) {
    if (path.isEmpty()) return tr("Not part of the run.");
    try {
        const std::vector<wb::compare::TestItem> items =
            wb::compare::load_testset(path.toStdString());
        uint32_t most = 0;
        int exact = 0;
        for (const wb::compare::TestItem& it : items) {
            most = std::max(most, it.max_tokens);
            exact += it.mode == wb::compare::MatchMode::Exact ? 1 : 0;
        }
        return tr("%1: %2 items (%3 matched exactly, %4 by contains), up to %5 tokens each.")
            .arg(QFileInfo(path).fileName())
            .arg(items.size())
            .arg(exact)
            .arg(static_cast<qsizetype>(items.size()) - exact)
            .arg(most);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

}  // namespace wb::ui::compare
