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

}  // namespace wb::gui
