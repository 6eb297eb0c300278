#pragma once
// A tab whose content scrolls: the Server and Load tabs hold a tall form
// over charts, which on a 1366x768 screen would otherwise squeeze the
// charts to nothing or push the window past the screen.

#include <QVBoxLayout>
#include <QWidget>

namespace wb::ui {

/// Fills `tab` (which must have no layout yet) with a frameless,
/// widget-resizable QScrollArea holding one page, and returns the page's
/// vertical layout for the caller to fill. Qt owns everything created.
QVBoxLayout* scroll_page(QWidget* tab);

}  // namespace wb::ui
