#include "tokenizer/bpe_tokenizer.h"

#include <optional>

#include "tokenizer/bigram_merge.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/vocab.h"

namespace wb::tokenizer {

BpeTokenizer::BpeTokenizer(const BpePreConfig& config) : config_(config), pre_(config.patterns) {}

void BpeTokenizer::encode(const Vocab& vocab, std::string_view text, bool /*after_special*/,
                          std::vector<int32_t>& out) const {
    // llama.cpp's llm_tokenizer_bpe_session: pairs merge by their rank in
    // the merges list, lowest first.
    const auto rank = [&](std::string_view l, std::string_view r) -> std::optional<double> {
        const int32_t k = vocab.merge_rank(l, r);
        return k < 0 ? std::nullopt : std::optional<double>(k);
    };
    // A final symbol without a token becomes its bytes' tokens (those that exist).
    const auto piece = [&](std::string_view s) {
        if (const int32_t id = vocab.find(s); id >= 0) {
            out.push_back(id);
            return;
        }
        for (const char c : s)
            if (const int32_t id = vocab.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    };
    BigramMerge merge;
    for (const std::string& word : pre_.split(text)) {
        if (config_.ignore_merges) {
            if (const int32_t id = vocab.find(word); id >= 0) {
                out.push_back(id);
                continue;
            }
        }
        merge.run(word, rank, piece);
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
