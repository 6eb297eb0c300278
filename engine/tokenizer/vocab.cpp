// Vocab: tokenize (special-token partition + SPM), pieces, detokenize.

#include "tokenizer/vocab.h"

#include <stdexcept>
#include <string>

#include "tokenizer/spm_session.h"

namespace wb::tokenizer {

namespace {

// One piece of the input after special tokens are cut out: either a token
// id or bytes [offset, offset + length) of the input text.
struct Fragment {
    int32_t token = -1;  ///< -1: raw text
    size_t offset = 0;
    size_t length = 0;
};

// C-locale isspace, as llama.cpp's LSTRIP/RSTRIP loops use.
bool is_ascii_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

const Vocab::Token& Vocab::at(int32_t id) const {
    if (id < 0 || id >= n_tokens()) {
        throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocab [0, " +
                                std::to_string(n_tokens()) + ")");
    }
    return tokens_[static_cast<size_t>(id)];
}

TokenType Vocab::type(int32_t id) const {
    return at(id).type;
}
uint32_t Vocab::attr(int32_t id) const {
    return at(id).attr;
}
float Vocab::score(int32_t id) const {
    return at(id).score;
}
const std::string& Vocab::text(int32_t id) const {
    return at(id).text;
}

bool Vocab::is_eog(int32_t id) const {
    return id >= 0 && id < n_tokens() && tokens_[static_cast<size_t>(id)].eog;
}

bool Vocab::is_control(int32_t id) const {
    return id >= 0 && id < n_tokens() && (tokens_[static_cast<size_t>(id)].attr & kAttrControl);
}

int32_t Vocab::find(std::string_view piece) const {
    const auto it = id_of_text_.find(piece);
    return it == id_of_text_.end() ? -1 : it->second;
}

std::vector<int32_t> Vocab::tokenize(std::string_view text, bool add_special,
                                     bool parse_special) const {
    // 1. Cut special-token texts out of the input, longest token first (llama.cpp
    //    tokenizer_st_partition). Control/unknown tokens only when
    //    parse_special; user-defined tokens always.
    std::vector<Fragment> fragments;
    if (!text.empty()) fragments.push_back({-1, 0, text.size()});
    std::vector<Fragment> next;
    for (const int32_t id : special_tokens_) {
        const Token& tok = tokens_[static_cast<size_t>(id)];
        if (!parse_special && (tok.attr & (kAttrControl | kAttrUnknown))) continue;
        const std::string& needle = tok.text;
        if (needle.empty()) continue;  // would match everywhere
        next.clear();
        for (const Fragment& frag : fragments) {
            if (frag.token >= 0) {
                next.push_back(frag);
                continue;
            }
            size_t offset = frag.offset;
            size_t length = frag.length;
            while (length > 0) {
                const size_t match = text.substr(0, offset + length).find(needle, offset);
                if (match == std::string_view::npos) break;
                size_t left_length = match - offset;
                if (tok.attr & kAttrLStrip) {
                    while (left_length > 0 && is_ascii_space(text[offset + left_length - 1])) {
                        --left_length;
                    }
                }
                if (left_length > 0) next.push_back({-1, offset, left_length});
                next.push_back({id, 0, 0});
                const size_t end = offset + length;
                offset = match + needle.size();
                length = end - offset;
                if (tok.attr & kAttrRStrip) {
                    while (length > 0 && is_ascii_space(text[offset])) {
                        ++offset;
                        --length;
                    }
                }
            }
            if (length > 0) next.push_back({-1, offset, length});
        }
        fragments.swap(next);
    }

    // 2. BOS, then SPM over each text fragment, then EOS (llama.cpp
    //    llama_vocab::impl::tokenize, case LLAMA_VOCAB_TYPE_SPM).
    std::vector<int32_t> out;
    out.reserve(text.size() / 2 + 2);
    if (add_special && add_bos_) {
        if (bos_ < 0) throw std::runtime_error("tokenize: add_bos is set but the vocab has no BOS");
        out.push_back(bos_);
    }
    bool prev_special = true;  // the text start counts as "after a special token"
    std::string escaped;
    SpmSession session(*this);
    for (const Fragment& frag : fragments) {
        if (frag.token >= 0) {
            out.push_back(frag.token);
            prev_special = true;
            continue;
        }
        escaped.clear();
        if (add_space_prefix_ && prev_special) escaped += "\xE2\x96\x81";
        for (const char c : text.substr(frag.offset, frag.length)) {
            if (c == ' ') {
                escaped += "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK
            } else {
                escaped.push_back(c);
            }
        }
        session.tokenize(escaped, out);
        prev_special = false;
    }
    if (add_special && add_eos_) {
        if (eos_ < 0) throw std::runtime_error("tokenize: add_eos is set but the vocab has no EOS");
        out.push_back(eos_);
    }
    return out;
}

std::string Vocab::token_to_piece(int32_t id, bool special) const {
    const Token& t = at(id);
    if (!special && (t.attr & (kAttrControl | kAttrUnknown))) return {};
    return t.piece;
}

std::string Vocab::detokenize(std::span<const int32_t> ids, bool remove_leading_space) const {
    std::string out;
    bool strip = remove_leading_space && add_space_prefix_;
    for (const int32_t id : ids) {
        const Token& t = at(id);
        if (!(t.attr & (kAttrControl | kAttrUnknown))) {
            std::string_view piece = t.piece;
            if (strip && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
            out += piece;
        }
        strip = false;  // only the first token, even if its piece is empty
    }
    return out;
}

}  // namespace wb::tokenizer
