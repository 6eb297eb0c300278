#pragma once
// `workbench --screenshots DIR`: drives the real main window through a chat,
// a batch run and the history view on the bundled model and writes PNGs of
// the window (and of each live chart) to DIR. The README's screenshots come
// from this, so they always show real output of the current build.

#include <QString>

namespace wb::ui {
class MainWindow;
}

namespace wb::gui {

/// Runs the scripted session on `w` (already shown) and writes
/// DIR/chat.png, DIR/batch.png, DIR/history.png and DIR/charts.png. Returns
/// 0 on success, 1 with a message on stderr when a step fails or times out.
int take_screenshots(ui::MainWindow& w, const QString& dir, const QString& model_path);

/// Processes events until `pred` is true or `timeout_ms` passes; returns pred().
bool wait_until(const std::function<bool()>& pred, int timeout_ms);

}  // namespace wb::gui
