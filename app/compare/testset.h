#pragma once
// Test sets for accuracy: JSONL, one item per line:
//   {"prompt": "...", "answer": "...", "match": "contains"|"exact",
//    "max_tokens": 32, "id": "optional name"}
// "expected" is accepted for "answer"; "match" defaults to "contains" and
// "max_tokens" to the set's default. Blank lines and lines starting with
// '#' are skipped. Matching (after generation with greedy decoding that
// stops at end-of-generation):
//  - exact: the output with leading/trailing whitespace trimmed equals the
//    trimmed answer;
//  - contains: the output contains the answer (case-sensitive).

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace wb::compare {

/// A malformed test set. what(): "<file>:<line>: <problem>", or
/// "<file>: test set has no items".
class TestSetError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class MatchMode { Contains, Exact };

struct TestItem {
    std::string id;  ///< "id" field, else "line N"
    std::string prompt;
    std::string answer;
    MatchMode mode = MatchMode::Contains;
    uint32_t max_tokens = 32;  ///< tokens generated at most
    size_t line = 0;           ///< 1-based line in the file
};

/// Reads `path`. Throws TestSetError for an unreadable file, invalid JSON, a
/// line that is not an object, an item without "prompt" or without "answer"
/// (both must be strings; an empty answer is refused since it matches
/// everything), an unknown "match", or a set with no items.
std::vector<TestItem> load_testset(const std::string& path, uint32_t default_max_tokens = 32);

/// Whether `output` answers `item` (see the top of this file).
bool answer_matches(const std::string& output, const TestItem& item);

/// Whitespace (space, \t, \n, \r, \f, \v) trimmed from both ends.
std::string trim(const std::string& s);

/// Prompts for the speed and agreement runs: one per line, blank lines
/// skipped; a line starting with '{' is a JSON object whose "prompt" is used
/// (so a test-set file works too). Throws TestSetError ("<file>:<line>: ...")
/// for bad JSON or an empty result.
std::vector<std::string> load_prompts(const std::string& path);

}  // namespace wb::compare
