#include "ui/scroll_page.h"

#include <QFrame>
#include <QScrollArea>

namespace wb::ui {

QVBoxLayout* scroll_page(QWidget* tab) {
    auto* outer = new QVBoxLayout(tab);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    outer->addWidget(scroll);
    auto* page = new QWidget;
    scroll->setWidget(page);
    return new QVBoxLayout(page);
}

}  // namespace wb::ui
