#pragma once
// What a comparison's model costs at a price (cost/price.h): one definition
// for `workbench-cli compare` and the Compare tab, so both price a pane alike.

#include "compare/compare.h"
#include "cost/price.h"

namespace wb::compare {

/// The cost of one pass of the prompts on model `m` at `price`: the timed
/// pass (ModelReport::timed_runs) of median engine time, each request
/// counted once with its prompt tokens (n_prompt), output tokens and
/// end-to-end time (requests run one at a time, each model alone, so a
/// pass's engine busy time is the sum of its requests' e2e). Figures of
/// cost::Usage{} (NaN per request) when `m` has no timed pass. Never throws
/// but bad_alloc.
cost::Figures model_cost(const ModelReport& m, const cost::Price& price);

}  // namespace wb::compare
