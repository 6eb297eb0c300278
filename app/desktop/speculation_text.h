#pragma once
// Speculative decoding (docs/speculative.md) as the desktop asks for it and
// tells of it: the request's parameters from the draft the user picked
// (ui::DraftPicker, SettingsStore::ChatDraft), and the reply footer's line
// on what speculation did.

#include <QString>

#include "desktop/settings_store.h"
#include "scheduler/request.h"

namespace wb::gui {

/// What a request should ask for with draft choice `d`: kind None / Ngram
/// / DraftModel ("none", "ngram", "model"; anything else is None), k
/// (d.k, 1..64), adaptive, as `workbench-cli generate --draft` does.
scheduler::SpeculativeParams speculative_params(const SettingsStore::ChatDraft& d);

/// The reply footer's part on speculation, "" when `asked` is None. Says
/// the acceptance rate (accepted / drafted), mean accepted tokens per target
/// pass that checked a draft, draft and verify ms; or, in plain words, why
/// speculation was not used (no draft was proposed, or none fit in the KV
/// pool's free blocks or the step's token budget).
QString speculation_footer(const scheduler::SpeculativeParams& asked,
                           const scheduler::SpeculativeStats& s);

}  // namespace wb::gui
