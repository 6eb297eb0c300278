#include "wrap_label.h"

#include <QEvent>
#include <QLabel>

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

}  // namespace wb::ui
