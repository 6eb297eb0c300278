#pragma once
// The hostile chat templates of tests/data/repro/templates-and-limits and
// the words of the limit each must be stopped by (its README says what
// each did before the limits), shared by the template, CLI and GUI tests.

#include <QString>
#include <QTest>

namespace wbtest {

struct HostileTemplate {
    const char* file;  ///< under tests/data/repro/templates-and-limits
    const char* says;  ///< part of the Limit error every surface must show
};

inline constexpr HostileTemplate kHostileTemplates[] = {
    {"nested-value-200k.jinja", "nests deeper than 512"},
    {"print-nested-100k.jinja", "nests deeper than 512"},
    {"chain-plus-80k.jinja", "expression nests deeper than 256"},
    {"string-doubling.jinja", "memory budget"},
    {"list-doubling.jinja", "memory budget"},
    {"center-huge.jinja", "memory budget"},
    {"replace-blowup.jinja", "memory budget"},
};

/// QTest data rows "file" and "says", one per hostile template.
inline void add_hostile_template_rows() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("says");
    for (const HostileTemplate& h : kHostileTemplates)
        QTest::newRow(h.file) << QString(h.file) << QString(h.says);
}

}  // namespace wbtest
