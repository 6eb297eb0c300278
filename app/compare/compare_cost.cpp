#include "compare/compare_cost.h"

#include <algorithm>
#include <vector>

namespace wb::compare {

cost::Figures model_cost(const ModelReport& m, const cost::Price& price) {
    std::vector<cost::Usage> passes;
    for (const std::vector<GreedyRun>& pass : m.timed_runs) {
        cost::Usage u;
        for (const GreedyRun& g : pass) {
            u.requests += 1;
            u.input_tokens += g.n_prompt;
            u.output_tokens += static_cast<double>(g.tokens.size());
            u.seconds += g.e2e_ms / 1000.0;
        }
        u.seconds_kind = "engine time of one timed pass (the median)";
        passes.push_back(u);
    }
    if (passes.empty()) return cost::figures(price, cost::Usage{});
    std::sort(passes.begin(), passes.end(),
              [](const cost::Usage& a, const cost::Usage& b) { return a.seconds < b.seconds; });
    return cost::figures(price, passes[passes.size() / 2]);
}

}  // namespace wb::compare
