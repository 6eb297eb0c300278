#include "tokenizer/spm_session.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tokenizer/utf8.h"

namespace wb::tokenizer {

void SpmSession::tokenize(std::string_view text, std::vector<int32_t>& out) {
    text_ = text;
    symbols_.clear();
    queue_ = {};

    // One symbol per UTF-8 character (by lead byte, clipped at the end).
    for (size_t offset = 0; offset < text.size();) {
        Symbol sym;
        sym.offset = offset;
        sym.n = std::min(utf8_sequence_length(static_cast<uint8_t>(text[offset])),
                         text.size() - offset);
        offset += sym.n;
        const int index = static_cast<int>(symbols_.size());
        sym.prev = index - 1;
        sym.next = offset == text.size() ? -1 : index + 1;
        symbols_.push_back(sym);
    }

    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add_bigram(i - 1, i);

    while (!queue_.empty()) {
        const Bigram bigram = queue_.top();
        queue_.pop();
        Symbol& left = symbols_[static_cast<size_t>(bigram.left)];
        Symbol& right = symbols_[static_cast<size_t>(bigram.right)];
        // Stale: one side was merged away or grew since this pair was queued.
        if (left.n == 0 || right.n == 0 || left.n + right.n != bigram.size) continue;

        left.n += right.n;
        right.n = 0;
        left.next = right.next;
        if (right.next >= 0) symbols_[static_cast<size_t>(right.next)].prev = bigram.left;

        try_add_bigram(left.prev, bigram.left);
        try_add_bigram(bigram.left, left.next);
    }

    if (symbols_.empty()) return;
    for (int i = 0; i != -1; i = symbols_[static_cast<size_t>(i)].next) {
        const Symbol& sym = symbols_[static_cast<size_t>(i)];
        const std::string_view piece = text_.substr(sym.offset, sym.n);
        if (const int32_t id = vocab_.find(piece); id >= 0) {
            out.push_back(id);
        } else {
            emit_bytes(piece, out);  // one character without its own token
        }
    }
}

void SpmSession::try_add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const Symbol& l = symbols_[static_cast<size_t>(left)];
    const Symbol& r = symbols_[static_cast<size_t>(right)];
    const size_t size = l.n + r.n;
    // No token is longer than max_token_bytes_, so the lookup would fail.
    if (size > vocab_.max_token_bytes()) return;
    // Adjacent symbols are contiguous in the text.
    const std::string_view merged = text_.substr(l.offset, size);
    const int32_t id = vocab_.find(merged);
    if (id < 0) return;
    queue_.push(Bigram{left, right, vocab_.score(id), size});
}

void SpmSession::emit_bytes(std::string_view bytes, std::vector<int32_t>& out) const {
    for (const char c : bytes) {
        const auto b = static_cast<uint8_t>(c);
        int32_t id = vocab_.byte_to_token(b);
        if (id < 0) id = vocab_.unk();
        if (id < 0) {
            static constexpr char kHex[] = "0123456789ABCDEF";
            throw std::runtime_error(std::string("tokenize: byte 0x") + kHex[b >> 4] +
                                     kHex[b & 15] +
                                     " has no byte token <0xNN> and the vocab has no UNK token");
        }
        out.push_back(id);
    }
}

}  // namespace wb::tokenizer
