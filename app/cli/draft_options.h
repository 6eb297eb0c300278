#pragma once
// --draft / --draft-k: speculative decoding on the command line
// (docs/speculative.md), shared by generate and bench.

#include <string>
#include <vector>

#include "args.h"
#include "scheduler/request.h"

namespace wb::cli {

/// --draft ngram|FILE, --draft-k N.
std::vector<OptionSpec> draft_options();

/// What --draft asked for: kind None without it; Ngram for "ngram"; else
/// DraftModel with `draft_path` set to the resolved file. k from --draft-k
/// (1..64, default 5), adaptive. Throws UsageError for --draft-k without
/// --draft or out of range, or a draft file that does not exist.
scheduler::SpeculativeParams draft_from_args(const ParsedArgs& args, std::string* draft_path);

/// The stats lines generate prints to stderr ("" when nothing speculated).
std::string describe_speculation(const scheduler::SpeculativeStats& s, size_t n_generated);

}  // namespace wb::cli
