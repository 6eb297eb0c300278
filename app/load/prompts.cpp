#include "load/prompts.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

namespace wb::load {
namespace {

// Short common English words: each is one token in the BPE and SentencePiece
// vocabularies of common models, so a prompt of N words is about N tokens.
constexpr const char* kWords[] = {"the",  "cat",  "sat",   "on",  "a",      "mat",  "and",  "dog",
                                  "ran",  "to",   "see",   "big", "red",    "sun",  "in",   "sky",
                                  "was",  "very", "happy", "day", "he",     "she",  "they", "went",
                                  "home", "with", "her",   "his", "friend", "tree", "park", "ball",
                                  "play", "good", "one",   "time"};
constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);

}  // namespace

std::vector<std::string> read_prompt_set(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open the prompt set");
    std::vector<std::string> out;
    std::string line;
    size_t no = 0;
    while (std::getline(in, line)) {
        ++no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) continue;
        if (line.front() == '{') {
            const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
            if (j.is_discarded() || !j.is_object() || !j.contains("prompt") ||
                !j["prompt"].is_string()) {
                throw std::runtime_error(path + ":" + std::to_string(no) +
                                         ": a JSON line needs a \"prompt\" string");
            }
            out.push_back(j["prompt"].get<std::string>());
        } else {
            out.push_back(line);
        }
    }
    if (out.empty()) throw std::runtime_error(path + ": the prompt set has no prompts");
    return out;
}

void parse_synthetic_lengths(const std::string& spec, SyntheticPrompts& out) {
    const size_t colon = spec.find(':');
    try {
        size_t used = 0;
        const std::string m = spec.substr(0, colon);
        out.mean_tokens = std::stod(m, &used);
        if (used != m.size()) throw std::invalid_argument("");
        out.stddev_tokens = 0;
        if (colon != std::string::npos) {
            const std::string s = spec.substr(colon + 1);
            out.stddev_tokens = std::stod(s, &used);
            if (used != s.size()) throw std::invalid_argument("");
        }
    } catch (const std::exception&) {
        throw std::invalid_argument("synthetic prompt tokens '" + spec +
                                    "': expected MEAN[:STDDEV], e.g. 128:32");
    }
    if (!(out.mean_tokens >= 1 && out.mean_tokens < 1e6) ||
        !(out.stddev_tokens >= 0 && out.stddev_tokens < 1e6)) {
        throw std::invalid_argument("synthetic prompt tokens '" + spec +
                                    "': MEAN must be in [1, 1e6) and STDDEV >= 0");
    }
}

namespace {

std::string join_words(const std::string& head, const std::vector<std::string>& words, size_t k) {
    std::string t = head;
    for (size_t i = 0; i < k; ++i) {
        if (!t.empty()) t += ' ';
        t += words[i];
    }
    return t;
}

/// `head` then the most of `words` (at least one when there are any) whose
/// text is at most `limit` tokens by `count`. A word costs at least one
/// token, so `words` never needs more than `limit` entries; the count grows
/// with k, so a binary search finds the cut in log2(limit) tokenizations.
std::string fit_words(const std::string& head, const std::vector<std::string>& words, size_t limit,
                      const PromptTokenCounter& count) {
    size_t lo = words.empty() ? 0 : 1, hi = words.size();
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if (count(join_words(head, words, mid)) <= limit) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    // The cut leaves up to a word's tokens unused: fill them with the
    // shortest word, which most vocabularies hold as one token (" a").
    std::string text = join_words(head, words, lo);
    if (lo == 0) return text;
    for (size_t n = count(text); n < limit; ++n) {
        const std::string longer = text + " a";
        if (count(longer) > limit) break;
        text = longer;
    }
    return text;
}

}  // namespace

std::vector<std::string> synthetic_prompts(const SyntheticPrompts& s, size_t n,
                                           const PromptTokenCounter& count) {
    if (!(s.shared_prefix_share >= 0 && s.shared_prefix_share <= 1)) {
        throw std::invalid_argument("shared prefix share must be in [0, 1]");
    }
    std::mt19937_64 rng(s.seed);
    std::uniform_int_distribution<size_t> word(0, kNumWords - 1);
    std::normal_distribution<double> len(s.mean_tokens, s.stddev_tokens > 0 ? s.stddev_tokens : 1);
    const auto words = [&](size_t k) {
        std::vector<std::string> w;
        w.reserve(k);
        for (size_t i = 0; i < k; ++i) w.emplace_back(kWords[word(rng)]);
        return w;
    };
    const size_t prefix_len =
        static_cast<size_t>(std::llround(s.shared_prefix_share * s.mean_tokens));
    const std::vector<std::string> prefix_words = words(prefix_len);
    const std::string prefix = count ? fit_words("", prefix_words, prefix_len, count)
                                     : join_words("", prefix_words, prefix_words.size());
    const size_t prefix_cost = count ? count(prefix) : prefix_len;
    // At most kMaxSyntheticTokens in all: a huge mean gives fewer distinct
    // prompts (callers cycle them), never gigabytes of text.
    const auto cap = static_cast<size_t>(
        std::max(1.0, static_cast<double>(kMaxSyntheticTokens) / std::max(1.0, s.mean_tokens)));
    n = std::min(n, cap);
    std::vector<std::string> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const double drawn = s.stddev_tokens > 0 ? len(rng) : s.mean_tokens;
        const size_t total = static_cast<size_t>(std::max(1.0, std::round(drawn)));
        const size_t rest = total > prefix_cost ? total - prefix_cost : 0;
        const std::vector<std::string> tail = words(rest);
        out.push_back(count ? fit_words(prefix, tail, total, count)
                            : join_words(prefix, tail, tail.size()));
    }
    return out;
}

}  // namespace wb::load
