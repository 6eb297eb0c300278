#pragma once
// The prompts a load test sends: a prompt set from a file, or synthetic
// prompts of a given length distribution with a share of every prompt
// common to all (a shared prefix, as system prompts are, which exercises a
// server's prefix cache).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace wb::load {

/// Reads a prompt set: one prompt per non-empty line; a line that starts
/// with '{' is a JSON object whose "prompt" string is the prompt (JSON
/// Lines as `batch` reads them). Throws std::runtime_error naming the file
/// and line for an unreadable file, a bad JSON line or an empty set.
std::vector<std::string> read_prompt_set(const std::string& path);

/// Synthetic prompt lengths: a normal distribution of words (a word of the
/// built-in list is about one token for common tokenizers; docs/load.md),
/// clamped to >= 1.
struct SyntheticPrompts {
    double mean_tokens = 128;
    double stddev_tokens = 0;
    double shared_prefix_share = 0;  ///< 0..1: this share of the mean length is common to all
    uint64_t seed = 0;
};

/// Parses "MEAN[:STDDEV]" (MEAN > 0, STDDEV >= 0). Throws
/// std::invalid_argument naming the value.
void parse_synthetic_lengths(const std::string& spec, SyntheticPrompts& out);

/// Most tokens (or words) of all synthetic prompts together.
inline constexpr size_t kMaxSyntheticTokens = size_t{4} << 20;

/// Counts the tokens a text is to the served model (its tokenizer, no BOS).
using PromptTokenCounter = std::function<size_t(const std::string& text)>;

/// `n` synthetic prompts: the shared prefix (share * mean) then random words
/// up to each prompt's drawn length. Without `count` a length is in words
/// (about one token each for common BPE and SentencePiece vocabularies);
/// with it, in the served model's tokens: each part holds the most words
/// whose text is at most that many tokens (at least one word), then "a"
/// while one more fits, so a prompt of mean M is M tokens where " a" is one
/// token (fewer by less than one word elsewhere), whatever the vocabulary
/// (a byte-level one spends several tokens a word). The server may add BOS
/// on top. Deterministic for a seed and counter. At most
/// max(1, kMaxSyntheticTokens / mean) prompts are made (fewer than `n` for
/// a huge mean: callers send them in turn).
/// Throws std::invalid_argument for a share outside [0, 1].
std::vector<std::string> synthetic_prompts(const SyntheticPrompts& s, size_t n,
                                           const PromptTokenCounter& count = {});

}  // namespace wb::load
