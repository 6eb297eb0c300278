// Vocab: tokenize (special-token partition, then the strategy), pieces,
// detokenize.

#include "tokenizer/vocab.h"

#include <stdexcept>
#include <string>

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

// llama.cpp's clean_up_tokenization_spaces (llama_vocab::impl::detokenize),
// three in-place passes over the bytes. Each pass compares with the byte
// before the current one as it stands in the buffer, which keeps the
// reference's behaviour on overlapping patterns such as " ' ' ".
void clean_up_spaces(std::string& text) {
    char* t = text.data();
    // 1: " ?", " !", " .", " ," lose the space.
    size_t n = text.size();
    size_t total = n ? 1 : 0;
    for (size_t i = 1; i < n; ++i) {
        const char x = t[i];
        if (t[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
        t[total++] = x;
    }
    // 2: " ' " (an apostrophe between spaces) becomes "'".
    n = total;
    total = n ? 1 : 0;
    for (size_t i = 1; i < n; ++i) {
        const char x = t[i];
        if (x == '\'' && i + 1 < n && t[i - 1] == ' ' && t[i + 1] == ' ') {
            --total;     // the space before
            t[++i] = 0;  // and the one after
        }
        t[total++] = x;
    }
    // 3: " 's", " 'm", " 're", " 've" lose the space (" 't", " 'd", " 'll" keep it).
    n = total;
    total = n ? 1 : 0;
    for (size_t i = 1; i < n; ++i) {
        const char x = t[i];
        if (t[i - 1] == ' ' && x == '\'' && i + 1 < n) {
            const char x1 = t[i + 1];
            if (x1 == 's' || x1 == 'm') {
                --total;
            } else if (x1 != 't' && x1 != 'd' && i + 2 < n) {
                const char x2 = t[i + 2];
                if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
            }
        }
        t[total++] = x;
    }
    text.resize(total);
}

}  // namespace

std::string_view Vocab::kind() const {
    return strategy_ ? strategy_->name() : std::string_view();
}

int32_t Vocab::merge_rank(std::string_view left, std::string_view right) const {
    if (merge_ranks_.empty()) return -1;
    // A stored pair's left side has no space after its first byte (the
    // line is split at the first space from index 1), so such a `left`
    // has no merge even if "left right" spells a stored line.
    if (left.find(' ', 1) != std::string_view::npos) return -1;
    thread_local std::string key;
    key.assign(left);
    key.push_back(' ');
    key.append(right);
    const auto it = merge_ranks_.find(std::string_view(key));
    return it == merge_ranks_.end() ? -1 : it->second;
}

std::vector<int32_t> Vocab::eog_ids() const {
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < n_tokens(); ++i) {
        if (tokens_[static_cast<size_t>(i)].eog) ids.push_back(i);
    }
    return ids;
}

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

    // 2. BOS, then the strategy over each text fragment, then EOS (llama.cpp
    //    llama_vocab::impl::tokenize, cases SPM and BPE).
    std::vector<int32_t> out;
    out.reserve(text.size() / 2 + 2);
    if (add_special && add_bos_) {
        if (bos_ < 0) throw std::runtime_error("tokenize: add_bos is set but the vocab has no BOS");
        out.push_back(bos_);
    }
    if (!strategy_ && !fragments.empty()) {
        throw std::runtime_error("tokenize: the vocabulary is empty");
    }
    bool after_special = true;  // the text start counts as "after a special token"
    for (const Fragment& frag : fragments) {
        if (frag.token >= 0) {
            out.push_back(frag.token);
            after_special = true;
            continue;
        }
        strategy_->encode(*this, text.substr(frag.offset, frag.length), after_special, out);
        after_special = false;
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

std::string Vocab::detokenize(std::span<const int32_t> ids, bool remove_leading_space,
                              bool special) const {
    std::string out;
    bool strip = remove_leading_space && add_space_prefix_;
    for (const int32_t id : ids) {
        const Token& t = at(id);
        if (special || !(t.attr & (kAttrControl | kAttrUnknown))) {
            std::string_view piece = t.piece;
            if (strip && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
            out += piece;
        }
        strip = false;  // only the first token, even if its piece is empty
    }
    if (clean_spaces_) clean_up_spaces(out);
    return out;
}

}  // namespace wb::tokenizer
