#pragma once
// The bigram merge at the heart of llama.cpp's SentencePiece and BPE
// sessions (llm_tokenizer_spm_session, llm_tokenizer_bpe_session): a text
// split into UTF-8 characters, kept as a doubly linked list of symbols, and
// a priority queue of adjacent pairs that may merge. Internal to
// wb_tokenizer; SpmSession and BpeTokenizer differ only in which pairs may
// merge and in what order (the `rank` function).

#include <algorithm>
#include <cstddef>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "tokenizer/utf8.h"

namespace wb::tokenizer {

/// Reusable state of the merge (its buffers keep their capacity between
/// runs). Cost O(n log n) for n characters.
class BigramMerge {
  public:
    /// Splits `text` into UTF-8 characters (by lead byte, the last clipped
    /// at the end), then repeatedly merges the adjacent pair of lowest
    /// rank (ties: the leftmost pair) until no pair has one. `rank(left,
    /// right)` gets the two symbols' texts (adjacent in `text`) and returns
    /// the pair's rank, or nullopt when it may not merge. A queued pair is
    /// merged only if both sides are still as they were when queued.
    /// Then calls `piece(text)` for each final symbol, left to right.
    /// `text` must outlive the call.
    template <class RankFn, class PieceFn>
    void run(std::string_view text, RankFn rank, PieceFn piece) {
        symbols_.clear();
        queue_ = {};
        for (size_t offset = 0; offset < text.size();) {
            Symbol sym;
            sym.offset = offset;
            sym.n = std::min(utf8_sequence_length(static_cast<unsigned char>(text[offset])),
                             text.size() - offset);
            offset += sym.n;
            const int index = static_cast<int>(symbols_.size());
            sym.prev = index - 1;
            sym.next = offset == text.size() ? -1 : index + 1;
            symbols_.push_back(sym);
        }
        const auto try_add = [&](int left, int right) {
            if (left == -1 || right == -1) return;
            const Symbol& l = symbols_[static_cast<size_t>(left)];
            const Symbol& r = symbols_[static_cast<size_t>(right)];
            const std::optional<double> k =
                rank(text.substr(l.offset, l.n), text.substr(r.offset, r.n));
            if (k) queue_.push(Bigram{left, right, *k, l.n + r.n});
        };
        for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add(i - 1, i);

        while (!queue_.empty()) {
            const Bigram bigram = queue_.top();
            queue_.pop();
            Symbol& left = symbols_[static_cast<size_t>(bigram.left)];
            Symbol& right = symbols_[static_cast<size_t>(bigram.right)];
            // Stale: a side was merged away (n == 0) or grew since this
            // pair was queued. A symbol only grows by absorbing its right
            // neighbour, so equal sizes mean equal text.
            if (left.n == 0 || right.n == 0 || left.n + right.n != bigram.size) continue;
            left.n += right.n;
            right.n = 0;
            left.next = right.next;
            if (right.next >= 0) symbols_[static_cast<size_t>(right.next)].prev = bigram.left;
            try_add(left.prev, bigram.left);
            try_add(bigram.left, left.next);
        }
        for (const Symbol& s : symbols_)
            if (s.n > 0) piece(text.substr(s.offset, s.n));
    }

  private:
    /// Bytes [offset, offset + n) of the text; n == 0 once merged into its
    /// left neighbour. prev/next: neighbours in the list, -1 at the ends.
    struct Symbol {
        int prev = -1;
        int next = -1;
        size_t offset = 0;
        size_t n = 0;
    };
    /// A candidate merge of adjacent symbols; `size` is the pair's byte
    /// length when queued (a stale entry has another).
    struct Bigram {
        int left = -1;
        int right = -1;
        double rank = 0.0;
        size_t size = 0;
    };
    /// Min-heap order: lower rank first, then lower `left`.
    struct BigramAfter {
        bool operator()(const Bigram& a, const Bigram& b) const {
            return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
        }
    };

    std::vector<Symbol> symbols_;                                          // [n_chars]
    std::priority_queue<Bigram, std::vector<Bigram>, BigramAfter> queue_;  // pending merges
};

}  // namespace wb::tokenizer
