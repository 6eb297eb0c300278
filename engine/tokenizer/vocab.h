#pragma once
// A model's vocabulary read from GGUF `tokenizer.ggml.*` metadata, with the
// llama (SentencePiece-style, "SPM") tokenizer and the detokenizer.
//
// Behaviour mirrors llama.cpp's SPM path (src/llama-vocab.cpp:
// llm_tokenizer_spm, tokenizer_st_partition, token_to_piece, detokenize) so
// that token ids match llama.cpp exactly; the test vectors in
// shared/models/vocab (llama.cpp's test-tokenizer-0) and the golden prompts
// check that. Only `tokenizer.ggml.model = "llama"` is implemented; BPE
// ("gpt2"), WordPiece ("bert") and others are refused at load time.
//
// Token ids are int32_t (llama_token); -1 means "no such token".

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/token_type.h"

namespace wb::tokenizer {

/// Vocabulary and SPM tokenizer. Immutable after from_gguf(); all methods
/// are const and safe to call from several threads at once. Copyable and
/// movable; it does not keep the gguf::File alive. A default-constructed
/// Vocab is empty (n_tokens() == 0): tokenize() of non-empty text throws
/// std::runtime_error and every id lookup throws std::out_of_range.
class Vocab {
  public:
    /// Reads the vocabulary of `f`:
    /// - `tokenizer.ggml.model` (string, required): must be "llama";
    /// - `tokenizer.ggml.tokens` (array of string, required, non-empty);
    /// - `tokenizer.ggml.scores` (array of float32, optional, default 0.0);
    /// - `tokenizer.ggml.token_type` (array of int32, optional, default Normal);
    /// - `tokenizer.ggml.{bos,eos,unknown,eot,eom}_token_id` (integers,
    ///   optional). Defaults as llama.cpp for SPM: BOS 1, EOS 2, UNK 0, no
    ///   EOT/EOM; a present id outside [0, n_tokens) keeps the default, as in
    ///   llama.cpp (e.g. 4294967295 meaning "none").
    /// - `tokenizer.ggml.add_bos_token` (default true), `add_eos_token`
    ///   (default false), `add_space_prefix` (default true).
    /// EOT is also found by text ("<|eot_id|>", "<|im_end|>", "<|end|>", ...)
    /// and end-of-generation tokens become Control, like llama.cpp. If
    /// `general.name` contains "phi-3"/"phi3" (any case), special tokens get
    /// llama.cpp's RStrip rule (except <unk>, <s>, <|endoftext|>).
    ///
    /// Throws gguf::Error (names the file and key) for a missing or
    /// mistyped key or arrays of different lengths, and
    /// std::runtime_error("<path>: unsupported tokenizer model 'gpt2' ...")
    /// for any model other than "llama".
    static Vocab from_gguf(const gguf::File& f);

    /// Number of tokens (n_vocab), the length of tokenizer.ggml.tokens.
    int32_t n_tokens() const { return static_cast<int32_t>(tokens_.size()); }

    /// Token ids of `text` (UTF-8 bytes; need not be valid UTF-8), exactly as
    /// llama.cpp `llama_tokenize(vocab, text, add_special, parse_special)`:
    /// - `add_special`: put BOS in front if add_bos(), EOS at the end if
    ///   add_eos(). The empty text gives [] or [BOS].
    /// - special-token texts are cut out first (longest text first):
    ///   user-defined tokens always, control and unknown tokens only when
    ///   `parse_special` is true; each such piece becomes its id.
    /// - every remaining text piece gets a leading space if add_space_prefix()
    ///   and it starts the text or follows a special token; spaces (only
    ///   U+0020) become "▁" (U+2581); then SPM merges symbols by best score
    ///   (ties: leftmost); pieces that are not tokens fall back to <0xNN> byte
    ///   tokens (or UNK if the vocab lacks a byte token).
    /// Cost: O(n log n) in the text length (about 1.5 ms for 10 KB with the
    /// 32000-token Llama-2 vocab). Throws std::runtime_error when add_special
    /// needs a BOS/EOS the vocab does not have (UNK always exists: its
    /// default id 0 is valid in any non-empty vocab).
    std::vector<int32_t> tokenize(std::string_view text, bool add_special,
                                  bool parse_special = false) const;

    /// Text of one token, as llama.cpp `llama_token_to_piece(id, lstrip=0,
    /// special)`: Normal tokens with "▁" replaced by " "; Byte tokens <0xNN>
    /// as that single raw byte (so a piece may be part of a UTF-8 character);
    /// Control and Unknown tokens as "" unless `special` (then their text);
    /// UserDefined tokens as their text; Unused/Undefined as "".
    /// Throws std::out_of_range for an id outside [0, n_tokens).
    std::string token_to_piece(int32_t id, bool special = false) const;

    /// Concatenated pieces of `ids` (special = false), as llama.cpp
    /// `llama_detokenize(..., remove_special=false, unparse_special=false)`:
    /// if `remove_leading_space` and add_space_prefix(), one leading space is
    /// removed from the FIRST token's piece only (a leading BOS has an empty
    /// piece, so then nothing is removed). Bytes are returned as produced;
    /// use StreamDetokenizer for guaranteed-valid UTF-8. Throws
    /// std::out_of_range for an id outside [0, n_tokens).
    std::string detokenize(std::span<const int32_t> ids, bool remove_leading_space = true) const;

    int32_t bos() const { return bos_; }  ///< beginning-of-sequence id, -1 if none
    int32_t eos() const { return eos_; }  ///< end-of-sequence id, -1 if none
    int32_t unk() const { return unk_; }  ///< unknown-token id, -1 if none
    int32_t eot() const { return eot_; }  ///< end-of-turn id (key or found by text), -1 if none
    bool add_bos() const { return add_bos_; }  ///< tokenize(add_special) puts BOS first
    bool add_eos() const { return add_eos_; }  ///< tokenize(add_special) puts EOS last
    /// Whether a space is put before the text (tokenizer.ggml.add_space_prefix).
    bool add_space_prefix() const { return add_space_prefix_; }

    /// End of generation: EOS, EOT, EOM, and tokens whose text is one of
    /// llama.cpp's end markers ("<|eot_id|>", "<|im_end|>", "<|end|>",
    /// "<end_of_turn>", "<|endoftext|>", ...). False for ids out of range.
    bool is_eog(int32_t id) const;
    /// Control token (after load-time adjustments). False for ids out of range.
    bool is_control(int32_t id) const;

    /// Type as stored in tokenizer.ggml.token_type (before adjustments).
    /// These four accessors throw std::out_of_range for an id outside [0, n_tokens).
    TokenType type(int32_t id) const;
    /// Behaviour bits (TokenAttr) after load-time adjustments.
    uint32_t attr(int32_t id) const;
    /// SPM score (higher merges first), from tokenizer.ggml.scores.
    float score(int32_t id) const;
    /// Raw token text from tokenizer.ggml.tokens ("▁Once", "<0x0A>", "<s>").
    const std::string& text(int32_t id) const;

    /// Id of the token whose text is exactly `piece`, -1 if none (when a
    /// text repeats, the highest id wins, as in llama.cpp).
    int32_t find(std::string_view piece) const;
    /// Id that stands for the raw byte `b` in byte fallback: "<0xNN>", else
    /// the one-character token of that byte, else -1.
    int32_t byte_to_token(uint8_t b) const { return byte_tokens_[b]; }

    /// tokenizer.ggml.model, e.g. "llama".
    const std::string& model() const { return model_; }

  private:
    struct Token {
        std::string text;   ///< as in the file
        std::string piece;  ///< token_to_piece(id, special=true), precomputed
        float score = 0.0f;
        TokenType type = TokenType::Normal;
        uint32_t attr = kAttrNormal;
        bool eog = false;
    };

    // Heterogeneous lookup so a std::string_view finds a std::string key
    // without allocating.
    struct StringHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };

    const Token& at(int32_t id) const;

    std::string model_;
    std::vector<Token> tokens_;  // [n_tokens]
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> id_of_text_;
    std::vector<int32_t> byte_tokens_ = std::vector<int32_t>(256, -1);  // [256] byte -> id
    std::vector<int32_t> special_tokens_;  // ids to cut out before SPM, longest text first
    size_t max_token_bytes_ = 0;           // longest token text, bounds merge lookups
    int32_t bos_ = -1, eos_ = -1, unk_ = -1, eot_ = -1, eom_ = -1;
    bool add_bos_ = true, add_eos_ = false, add_space_prefix_ = true;

    friend class SpmSession;
};

}  // namespace wb::tokenizer
