#pragma once
// Byte-level BPE strategy ("gpt2" vocabularies: Llama 3, Qwen, GPT-2,
// StarCoder, Falcon, DeepSeek, SmolLM, ...; llama.cpp llm_tokenizer_bpe).

#include <string>
#include <vector>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/strategy.h"

namespace wb::tokenizer {

/// The "gpt2" vocabulary kind: the pre-tokenizer cuts text into words, each
/// word is byte-encoded (byte_unicode.h) and split into characters, then
/// adjacent pairs merge in order of their rank in `tokenizer.ggml.merges`
/// (lowest rank first; ties: leftmost pair) until no pair has a rank.
class BpeTokenizer final : public Strategy {
  public:
    /// `config` comes from bpe_pre_config(); throws std::runtime_error if a
    /// pattern does not compile.
    explicit BpeTokenizer(const BpePreConfig& config);

    std::string_view name() const override { return "bpe"; }
    /// Words of `text` (after_special is not used: BPE adds no prefix) merged
    /// as above. With ignore_merges, a word that is itself a token is emitted
    /// whole. A final symbol that is not a token is emitted as the
    /// one-character tokens of its bytes, skipping bytes without one, as
    /// llama.cpp does. Throws std::runtime_error if the pre-tokenizer fails.
    void encode(const Vocab& vocab, std::string_view text, bool after_special,
                std::vector<int32_t>& out) const override;
    /// Normal tokens are byte-decoded (byte_decode_text), so a piece may be
    /// part of a UTF-8 character.
    std::string piece(const Vocab& vocab, int32_t id) const override;

    const BpePreConfig& config() const { return config_; }

  private:
    BpePreConfig config_;
    PreTokenizer pre_;
};

}  // namespace wb::tokenizer
