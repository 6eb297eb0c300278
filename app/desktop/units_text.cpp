#include "desktop/units_text.h"

#include <QLocale>

namespace wb::gui {

QString bytes_text(uint64_t bytes) {
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) return QStringLiteral("%1 B").arg(bytes);
    double v = static_cast<double>(bytes) / 1024.0;
    int u = 0;
    while (v >= 1024.0 && u < 3) {
        v /= 1024.0;
        ++u;
    }
    // Three significant figures: 7.63 GiB, 12.3 MiB, 118 KiB.
    const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
    return QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(kUnits[u]));
}

QString count_text(uint64_t n) {
    QLocale l;
    l.setNumberOptions(l.numberOptions() & ~QLocale::OmitGroupSeparator);
    return l.toString(static_cast<qulonglong>(n));
}

QString backend_label(const QString& backend, const QString& device_name) {
    if (backend == QLatin1String("cpu")) return QStringLiteral("CPU");
    return device_name.isEmpty() ? backend : device_name;
}

}  // namespace wb::gui
