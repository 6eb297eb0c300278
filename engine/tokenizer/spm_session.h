#pragma once
// One run of the SentencePiece-style merge over one piece of text
// (llama.cpp llm_tokenizer_spm_session). Internal to wb_tokenizer.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/bigram_merge.h"
#include "tokenizer/vocab.h"

namespace wb::tokenizer {

/// Splits `text` into UTF-8 characters, then repeatedly merges the adjacent
/// pair whose concatenation is a token with the highest score (ties: the
/// leftmost pair), until no pair is a token. Each final symbol is emitted as
/// its token id; a symbol that is not a token becomes byte tokens.
///
/// Only pairs whose text is a token are ever queued, and a queued pair is
/// merged only if both sides are still exactly as they were, so every merged
/// symbol is a token. A symbol that is not a token is therefore one
/// unmerged character; llama.cpp's `resegment` via `rev_merge` can only reach
/// its byte-fallback branch for it, which is what this class does directly.
/// `text` must already have spaces escaped to "▁" and must outlive the
/// session. Cost O(n log n) for n characters.
class SpmSession {
  public:
    explicit SpmSession(const Vocab& vocab) : vocab_(vocab) {}

    /// Appends the ids of `text` to `out`. Throws std::runtime_error if a
    /// byte needs fallback and the vocab has neither its byte token nor UNK.
    void tokenize(std::string_view text, std::vector<int32_t>& out);

  private:
    void emit_bytes(std::string_view bytes, std::vector<int32_t>& out) const;

    const Vocab& vocab_;
    BigramMerge merge_;
};

}  // namespace wb::tokenizer
