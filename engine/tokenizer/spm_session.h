#pragma once
// One run of the SentencePiece-style merge over one piece of text
// (llama.cpp llm_tokenizer_spm_session). Internal to wb_tokenizer.

#include <cstddef>
#include <cstdint>
#include <queue>
#include <string_view>
#include <vector>

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
    /// One symbol of the doubly linked list over the text: bytes
    /// [offset, offset + n) of the text; n == 0 once merged into its left
    /// neighbour.
    struct Symbol {
        int prev = -1;
        int next = -1;
        size_t offset = 0;
        size_t n = 0;
    };
    /// A candidate merge of symbols left and right (adjacent at push time).
    /// `size` is the byte length the pair had then; a stale entry whose
    /// symbols changed since is recognised by a different length.
    struct Bigram {
        int left = -1;
        int right = -1;
        float score = 0.0f;
        size_t size = 0;
    };
    /// Max-heap order: higher score first, then lower `left`.
    struct BigramLess {
        bool operator()(const Bigram& a, const Bigram& b) const {
            return a.score < b.score || (a.score == b.score && a.left > b.left);
        }
    };

    void try_add_bigram(int left, int right);
    void emit_bytes(std::string_view bytes, std::vector<int32_t>& out) const;

    const Vocab& vocab_;
    std::string_view text_;
    std::vector<Symbol> symbols_;                                         // [n_chars]
    std::priority_queue<Bigram, std::vector<Bigram>, BigramLess> queue_;  // pending merges
};

}  // namespace wb::tokenizer
