#include "tokenizer/bpe_tokenizer.h"

#include <queue>

#include "tokenizer/byte_unicode.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab.h"

namespace wb::tokenizer {

namespace {

// One run of the merge over one word (llama.cpp llm_tokenizer_bpe_session).
class BpeSession {
  public:
    explicit BpeSession(const Vocab& vocab) : vocab_(vocab) {}

    // Appends the symbols `word` merges into (as byte ranges of `word`).
    void merge(std::string_view word, std::vector<std::string_view>& symbols_out) {
        word_ = word;
        symbols_.clear();
        queue_ = {};
        for (size_t offset = 0; offset < word.size();) {
            Symbol sym;
            sym.offset = offset;
            sym.n = std::min(utf8_sequence_length(static_cast<uint8_t>(word[offset])),
                             word.size() - offset);
            offset += sym.n;
            const int index = static_cast<int>(symbols_.size());
            sym.prev = index - 1;
            sym.next = offset == word.size() ? -1 : index + 1;
            symbols_.push_back(sym);
        }
        for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add_bigram(i - 1, i);

        while (!queue_.empty()) {
            const Bigram bigram = queue_.top();
            queue_.pop();
            Symbol& left = symbols_[static_cast<size_t>(bigram.left)];
            Symbol& right = symbols_[static_cast<size_t>(bigram.right)];
            // Stale: a side was merged away (n == 0) or grew since this pair
            // was queued. A symbol only grows by absorbing its right
            // neighbour, so equal sizes mean equal text.
            if (left.n == 0 || right.n == 0 || left.n + right.n != bigram.size) continue;
            left.n += right.n;
            right.n = 0;
            left.next = right.next;
            if (right.next >= 0) symbols_[static_cast<size_t>(right.next)].prev = bigram.left;
            try_add_bigram(left.prev, bigram.left);
            try_add_bigram(bigram.left, left.next);
        }
        for (const Symbol& s : symbols_) {
            if (s.n > 0) symbols_out.push_back(word_.substr(s.offset, s.n));
        }
    }

  private:
    struct Symbol {
        int prev = -1;
        int next = -1;
        size_t offset = 0;
        size_t n = 0;  // 0 once merged into its left neighbour
    };
    struct Bigram {
        int left = -1;
        int right = -1;
        int32_t rank = 0;
        size_t size = 0;  // bytes of the pair when queued
    };
    // Min-heap order: lower rank first, then lower `left`.
    struct BigramAfter {
        bool operator()(const Bigram& a, const Bigram& b) const {
            return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
        }
    };

    void try_add_bigram(int left, int right) {
        if (left == -1 || right == -1) return;
        const Symbol& l = symbols_[static_cast<size_t>(left)];
        const Symbol& r = symbols_[static_cast<size_t>(right)];
        const int32_t rank =
            vocab_.merge_rank(word_.substr(l.offset, l.n), word_.substr(r.offset, r.n));
        if (rank < 0) return;
        queue_.push(Bigram{left, right, rank, l.n + r.n});
    }

    const Vocab& vocab_;
    std::string_view word_;
    std::vector<Symbol> symbols_;  // [n_chars of the word]
    std::priority_queue<Bigram, std::vector<Bigram>, BigramAfter> queue_;
};

}  // namespace

BpeTokenizer::BpeTokenizer(const BpePreConfig& config) : config_(config), pre_(config.patterns) {}

void BpeTokenizer::encode(const Vocab& vocab, std::string_view text, bool /*after_special*/,
                          std::vector<int32_t>& out) const {
    BpeSession session(vocab);
    std::vector<std::string_view> symbols;
    for (const std::string& word : pre_.split(text)) {
        if (config_.ignore_merges) {
            if (const int32_t id = vocab.find(word); id >= 0) {
                out.push_back(id);
                continue;
            }
        }
        symbols.clear();
        session.merge(word, symbols);
        for (const std::string_view s : symbols) {
            if (const int32_t id = vocab.find(s); id >= 0) {
                out.push_back(id);
                continue;
            }
            for (const char c : s) {
                if (const int32_t id = vocab.find(std::string_view(&c, 1)); id >= 0) {
                    out.push_back(id);
                }
            }
        }
    }
}

std::string BpeTokenizer::piece(const Vocab& vocab, int32_t id) const {
    const uint32_t attr = vocab.attr(id);
    const std::string& text = vocab.text(id);
    if (attr & (kAttrControl | kAttrUnknown | kAttrUserDefined)) return text;
    if (attr & kAttrNormal) return byte_decode_text(text);
    if (attr & kAttrByte) {
        // llama.cpp reads the two hex digits of "<0xNN>" (token_to_byte).
        if (text.size() == 6 && text.compare(0, 3, "<0x") == 0) {
            try {
                return std::string(1, static_cast<char>(std::stoi(text.substr(3, 2), nullptr, 16)));
            } catch (const std::exception&) {
            }
        }
        return text;
    }
    return {};
}

}  // namespace wb::tokenizer
