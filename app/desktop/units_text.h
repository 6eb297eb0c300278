#pragma once
// Numbers as a person reads them in the GUI: byte sizes with a binary unit
// chosen for the size (KiB, MiB, GiB) and counts with thousands grouping.

#include <QString>
#include <cstdint>

namespace wb::gui {

/// `bytes` (B) in the largest binary unit that keeps the value >= 1:
/// "512 B", "1.5 KiB", "12.3 MiB", "7.63 GiB" (three significant figures
/// above 1 KiB). Never throws.
QString bytes_text(uint64_t bytes);

/// `n` with the current locale's group separator, e.g. "1,669,888" in
/// English ("1.669.888" in German): the C locale omits grouping, so the
/// separator is forced on. Never throws.
QString count_text(uint64_t n);

/// The one name the GUI shows for a backend (device picker, model bar,
/// status bar, chat footer, Compare captions): "CPU" for the backend
/// "cpu" (the threaded CPU executor), else `device_name` (the Vulkan
/// device, "llvmpipe (LLVM 15.0.6, 256 bits)"). Display only: stored
/// values (settings, run log) keep "cpu" / "vulkan". Never throws.
QString backend_label(const QString& backend, const QString& device_name);

}  // namespace wb::gui
