#pragma once
// SentencePiece-style ("llama") strategy: spaces become U+2581, symbols merge
// by best score, unknown characters fall back to byte tokens (llama.cpp
// llm_tokenizer_spm).

#include "tokenizer/strategy.h"

namespace wb::tokenizer {

/// The "llama" vocabulary kind. See SpmSession for the merge itself.
class SpmTokenizer final : public Strategy {
  public:
    std::string_view name() const override { return "spm"; }
    /// Prefixes " " when vocab.add_space_prefix() and `after_special`, turns
    /// every U+0020 into "▁" and runs SpmSession. Throws std::runtime_error
    /// when byte fallback finds neither a byte token nor UNK.
    void encode(const Vocab& vocab, std::string_view text, bool after_special,
                std::vector<int32_t>& out) const override;
    /// Normal tokens with "▁" shown as " "; <0xNN> byte tokens as the byte.
    std::string piece(const Vocab& vocab, int32_t id) const override;
};

}  // namespace wb::tokenizer
