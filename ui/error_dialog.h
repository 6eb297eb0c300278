#pragma once
// A dialog for an error the user can act on: the problem in one line, the
// engine's message verbatim, where it happened (file, byte offset, field),
// what to do, and buttons for the actions that apply (e.g. "Use CPU
// reference" when there is no Vulkan device). The app stays usable.

#include <QDialog>

#include "desktop/user_error.h"

namespace wb::ui {

class ErrorDialog : public QDialog {
    Q_OBJECT
  public:
    /// What the user chose.
    enum Choice { Close = 0, UseCpu = 1, OpenOther = 2 };

    explicit ErrorDialog(const gui::UserError& e, QWidget* parent = nullptr);

    /// Shows the dialog modally and returns the choice.
    static Choice ask(const gui::UserError& e, QWidget* parent);
};

}  // namespace wb::ui
