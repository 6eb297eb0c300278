#include "draft_options.h"

#include <cstdio>
#include <filesystem>

#include "common_options.h"

namespace wb::cli {

std::vector<OptionSpec> draft_options() {
    return {
        {"draft", 0, "ngram|FILE",
         "speculative decoding: draft with prompt lookup (ngram) or with a draft model FILE "
         "sharing the model's vocabulary; greedy output is unchanged"},
        {"draft-k", 0, "N",
         "most draft tokens per target pass; each pass takes 0..N by measured cost (default: 5)"},
    };
}

scheduler::SpeculativeParams draft_from_args(const ParsedArgs& args, std::string* draft_path) {
    scheduler::SpeculativeParams sp;
    const auto draft = args.get("draft");
    if (!draft) {
        if (args.has("draft-k")) throw UsageError("--draft-k needs --draft ngram|FILE");
        return sp;
    }
    sp.k = static_cast<uint32_t>(args.get_int("draft-k", 5, 1, 64));
    sp.adaptive = true;
    if (*draft == "ngram") {
        sp.kind = scheduler::SpeculativeParams::Kind::Ngram;
        return sp;
    }
    if (!std::filesystem::exists(*draft))
        throw UsageError("--draft: no such file '" + *draft + "' (or give 'ngram')");
    sp.kind = scheduler::SpeculativeParams::Kind::DraftModel;
    if (draft_path) *draft_path = *draft;
    return sp;
}

std::string describe_speculation(const scheduler::SpeculativeStats& s, size_t n_generated) {
    if (s.drafter.empty()) return "";
    char buf[512];
    const double per_pass =
        s.target_passes > 0 ? double(n_generated > 0 ? n_generated - 1 : 0) / s.target_passes : 0;
    std::snprintf(buf, sizeof buf,
                  "speculative:      %s, %d drafted, %d accepted (acceptance %.1f%%)\n"
                  "target passes:    %d (%d checked a draft, %d shared with other requests), "
                  "%.2f tokens per pass, %.2f accepted per checking pass\n"
                  "draft / verify:   %.2f ms / %.2f ms\n",
                  s.drafter.c_str(), s.drafted, s.accepted, 100.0 * s.acceptance_rate(),
                  s.target_passes, s.verify_passes, s.shared_passes, per_pass,
                  s.mean_accepted_per_pass(), s.draft_ms, s.verify_ms);
    return buf;
}

}  // namespace wb::cli
