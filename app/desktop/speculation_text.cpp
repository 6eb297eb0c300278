#include "desktop/speculation_text.h"

#include <QObject>

namespace wb::gui {

scheduler::SpeculativeParams speculative_params(const SettingsStore::ChatDraft& d) {
    scheduler::SpeculativeParams p;
    p.k = static_cast<uint32_t>(d.k);
    p.adaptive = true;
    if (d.kind == "ngram") p.kind = scheduler::SpeculativeParams::Kind::Ngram;
    if (d.kind == "model") p.kind = scheduler::SpeculativeParams::Kind::DraftModel;
    return p;
}

QString speculation_footer(const scheduler::SpeculativeParams& asked,
                           const scheduler::SpeculativeStats& s) {
    using Kind = scheduler::SpeculativeParams::Kind;
    if (asked.kind == Kind::None) return {};
    const QString drafter = !s.drafter.empty()          ? QString::fromStdString(s.drafter)
                            : asked.kind == Kind::Ngram ? QStringLiteral("n-gram")
                                                        : QStringLiteral("draft model");
    if (s.verify_passes == 0)
        return QObject::tr(
                   " · speculation (%1) not used for this reply: no draft was proposed or none "
                   "fit (nothing earlier to look up, no free KV block, or the step's tokens went "
                   "to other requests)")
            .arg(drafter);
    QString t = QObject::tr(
                    " · draft %1: acceptance %2% (%3 of %4 drafted) · %5 accepted tokens per "
                    "target pass · draft %6 ms · verify %7 ms")
                    .arg(drafter)
                    .arg(100.0 * s.acceptance_rate(), 0, 'f', 1)
                    .arg(s.accepted)
                    .arg(s.drafted)
                    .arg(s.mean_accepted_per_pass(), 0, 'f', 2)
                    .arg(s.draft_ms, 0, 'f', 1)
                    .arg(s.verify_ms, 0, 'f', 1);
    if (s.shared_passes > 0)
        t += QObject::tr(" · %1 of %2 passes without a draft: other requests were running")
                 .arg(s.shared_passes)
                 .arg(s.target_passes);
    return t;
}

}  // namespace wb::gui
