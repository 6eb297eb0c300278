#pragma once
// The part of a tokenizer that differs between vocabulary kinds: how a piece
// of plain text becomes ids, and how one id becomes text. The Vocab holds
// the data (tokens, types, scores, merges, special ids) and the steps every
// kind shares (cutting out special tokens, BOS/EOS, detokenize); it picks
// one Strategy by `tokenizer.ggml.model` (llama.cpp llm_tokenizer_*).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wb::tokenizer {

class Vocab;

/// Tokenizer algorithm of one vocabulary kind. Implementations are immutable
/// and thread-safe; they keep no reference to a Vocab (it is passed in), so
/// a Vocab and its copies can share one Strategy.
class Strategy {
  public:
    virtual ~Strategy() = default;

    /// Short name shown to users and in the run log: "spm" or "bpe".
    virtual std::string_view name() const = 0;

    /// Appends the ids of `text`, one fragment of the input with special
    /// tokens already cut out. `after_special`: the fragment starts the input
    /// or follows a special token (SPM then adds its space prefix). Throws
    /// std::runtime_error for input the vocabulary cannot represent.
    virtual void encode(const Vocab& vocab, std::string_view text, bool after_special,
                        std::vector<int32_t>& out) const = 0;

    /// Text of token `id` as llama.cpp token_to_piece(id, special = true):
    /// control, unknown and user-defined tokens as stored; normal tokens
    /// decoded by the kind's rule; byte tokens <0xNN> as that byte; unused
    /// and undefined tokens as "". `id` must be valid.
    virtual std::string piece(const Vocab& vocab, int32_t id) const = 0;
};

}  // namespace wb::tokenizer
