#include "ui/widgets/wrap_label.h"

#include <QEvent>
#include <QHelpEvent>
#include <QPainter>
#include <QStyle>
#include <QToolTip>

namespace wb::ui {

namespace {

// QLabel's heightForWidth never answers less than the minimum height, so
// measure without it (else a height needed at a narrow width sticks).
void refit(QLabel* label) {
    const int before = label->minimumHeight();
    label->setMinimumHeight(0);
    const int h = label->heightForWidth(label->width());
    label->setMinimumHeight(h > 0 ? h : before);
}

class WrapHeightFilter : public QObject {
  public:
    using QObject::QObject;
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() == QEvent::Resize) refit(static_cast<QLabel*>(watched));
        return QObject::eventFilter(watched, event);
    }
};

}  // namespace

void fit_wrapped_height(QLabel* label) {
    if (!label) return;
    if (!label->findChild<WrapHeightFilter*>(QString(), Qt::FindDirectChildrenOnly))
        label->installEventFilter(new WrapHeightFilter(label));
    refit(label);
}

ElideLabel::ElideLabel(const QString& text, QWidget* parent) : QLabel(text, parent) {
    setTextFormat(Qt::PlainText);
}

QSize ElideLabel::minimumSizeHint() const {
    const QMargins m = contentsMargins();
    return {fontMetrics().horizontalAdvance(QStringLiteral("xxxx…")) + m.left() + m.right() +
                2 * margin(),
            QLabel::minimumSizeHint().height()};
}

QRect ElideLabel::textRect() const {
    return contentsRect().adjusted(margin(), margin(), -margin(), -margin());
}

bool ElideLabel::isElided() const {
    return fontMetrics().horizontalAdvance(text()) > textRect().width();
}

QString ElideLabel::shownText() const {
    return fontMetrics().elidedText(text(), Qt::ElideRight, textRect().width());
}

void ElideLabel::paintEvent(QPaintEvent* e) {
    if (!isElided()) {
        QLabel::paintEvent(e);
        return;
    }
    QPainter p(this);
    drawFrame(&p);
    style()->drawItemText(&p, textRect(), QStyle::visualAlignment(layoutDirection(), alignment()),
                          palette(), isEnabled(), shownText(), foregroundRole());
}

bool ElideLabel::event(QEvent* e) {
    if (e->type() == QEvent::ToolTip && isElided()) {
        const QString tip = toolTip().isEmpty() || toolTip() == text()
                                ? text()
                                : text() + QStringLiteral("\n") + toolTip();
        QToolTip::showText(static_cast<QHelpEvent*>(e)->globalPos(), tip, this);
        return true;
    }
    return QLabel::event(e);
}

}  // namespace wb::ui
