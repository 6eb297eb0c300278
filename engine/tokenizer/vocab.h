#pragma once
// A model's vocabulary read from GGUF `tokenizer.ggml.*` metadata: tokens,
// types, scores, BPE merges, special ids, add_bos/add_eos, and the tokenizer
// strategy its `tokenizer.ggml.model` selects (SentencePiece-style "llama"
// or byte-level BPE "gpt2", see strategy.h).
//
// Behaviour mirrors llama.cpp (src/llama-vocab.cpp: llama_vocab::impl::load,
// tokenizer_st_partition, tokenize, token_to_piece, detokenize) so that
// token ids match llama.cpp exactly; llama.cpp's test vectors
// (tests/data/models/vocab) and golden records (tests/data/golden2/tokenizer)
// check that. WordPiece ("bert") and other kinds are refused at load time.
//
// Token ids are int32_t (llama_token); -1 means "no such token".

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/strategy.h"
#include "tokenizer/token_type.h"

namespace wb::tokenizer {

/// Vocabulary plus its tokenizer strategy. Immutable after from_gguf(); all
/// methods are const and safe to call from several threads at once.
/// Copyable and movable (copies share the strategy); it does not keep the
/// gguf::File alive. A default-constructed Vocab is empty (n_tokens() == 0):
/// tokenize() of non-empty text throws std::runtime_error and every id lookup
/// throws std::out_of_range.
class Vocab {
  public:
    /// Reads the vocabulary of `f`:
    /// - `tokenizer.ggml.model` (string, required): "llama" (SentencePiece-
    ///   style, SpmTokenizer) or "gpt2" (byte-level BPE, BpeTokenizer);
    /// - `tokenizer.ggml.tokens` (array of string, required, non-empty; an
    ///   empty text is read as "[EMPTY_<id>]" like llama.cpp);
    /// - `tokenizer.ggml.scores` (array of float32, optional, default 0.0);
    /// - `tokenizer.ggml.token_type` (array of int32, optional, default Normal);
    /// - for "gpt2": `tokenizer.ggml.merges` (array of string "left right",
    ///   required; rank = position, the first of equal pairs wins) and
    ///   `tokenizer.ggml.pre` (string, optional; selects the pre-tokenizer,
    ///   see bpe_pre_config);
    /// - `tokenizer.ggml.{bos,eos,unknown,eot,eom}_token_id` and the FIM ids
    ///   (integers, optional). Defaults as llama.cpp: SPM BOS 1, EOS 2, UNK 0;
    ///   BPE BOS 11, EOS 11, no UNK; a default outside the vocab is none. A
    ///   present id outside [0, n_tokens) (4294967295, negative, past the
    ///   end) is none, not the default (llama.cpp keeps the default), with a
    ///   load_warnings() entry naming the key; a BOS or EOS made none that
    ///   way is not added either (add_bos()/add_eos() false).
    /// - `tokenizer.ggml.add_bos_token` (default: true for SPM, per
    ///   pre-tokenizer for BPE, e.g. true for Llama 3), `add_eos_token`
    ///   (default false), `add_space_prefix` (default true for SPM, false for
    ///   BPE).
    /// End-of-turn, end-of-message and FIM tokens are also found by their text
    /// and end-of-generation tokens by llama.cpp's list ("<|eot_id|>",
    /// "<|im_end|>", "<|end|>", "<end_of_turn>", "</s>", ...); such tokens
    /// gain the Control attribute, like llama.cpp. If `general.name`
    /// contains "phi-3"/"phi3" (any case), special tokens get llama.cpp's
    /// RStrip rule (except <unk>, <s>, <|endoftext|>).
    ///
    /// Throws gguf::Error (names the file and key) for a missing or
    /// mistyped key or arrays of different lengths, and std::runtime_error
    /// ("<path>: unsupported tokenizer model 'bert' ..." or "<path>:
    /// unsupported pre-tokenizer 'x' (tokenizer.ggml.pre) ...") for kinds not
    /// implemented.
    static Vocab from_gguf(const gguf::File& f);

    /// What from_gguf() read but did not use, one sentence each naming the
    /// file and the GGUF key, e.g. "<path>: tokenizer.ggml.bos_token_id =
    /// 4294967295 is not a token id of this vocabulary (128256 tokens, ids
    /// 0..128255); read as no such token, so no BOS is put before prompts".
    /// Empty for a clean file. Callers show them (the CLI on stderr, the app
    /// in its status bar); they never stop a load.
    const std::vector<std::string>& load_warnings() const { return load_warnings_; }

    /// Number of tokens (n_vocab), the length of tokenizer.ggml.tokens.
    int32_t n_tokens() const { return static_cast<int32_t>(tokens_.size()); }

    /// Token ids of `text` (UTF-8 bytes; need not be valid UTF-8), exactly as
    /// llama.cpp `llama_tokenize(vocab, text, add_special, parse_special)`:
    /// - `add_special`: put BOS in front if add_bos(), EOS at the end if
    ///   add_eos(). The empty text gives [] or [BOS].
    /// - special-token texts are cut out first (longest text first):
    ///   user-defined tokens always, control and unknown tokens only when
    ///   `parse_special` is true (so a user typing "<|im_end|>" gets plain
    ///   text unless asked); each such piece becomes its id.
    /// - every remaining text piece goes to the strategy: SPM (space prefix,
    ///   "▁" escaping, merge by score, byte fallback) or BPE (pre-tokenizer,
    ///   byte encoding, merge by rank).
    /// Cost: O(n log n) in the text length (about 1.5 ms for 10 KB with the
    /// 32000-token Llama-2 vocab). Throws std::runtime_error when add_special
    /// needs a BOS/EOS the vocab does not have, or when the strategy fails
    /// (a pre-tokenizer pattern hitting its match limit).
    std::vector<int32_t> tokenize(std::string_view text, bool add_special,
                                  bool parse_special = false) const;

    /// Text of one token, as llama.cpp `llama_token_to_piece(id, lstrip=0,
    /// special)`: Control and Unknown tokens as "" unless `special` (then
    /// their text); UserDefined tokens as their text; Normal tokens decoded
    /// by the strategy (SPM: "▁" replaced by " "; BPE: byte-decoded); Byte
    /// tokens <0xNN> as that single raw byte; Unused/Undefined as "". A piece
    /// may be part of a UTF-8 character. Throws std::out_of_range for an id
    /// outside [0, n_tokens).
    std::string token_to_piece(int32_t id, bool special = false) const;

    /// Concatenated pieces of `ids`, as llama.cpp `llama_detokenize(...,
    /// remove_special=false, unparse_special=special)`: if
    /// `remove_leading_space` and add_space_prefix(), one leading space is
    /// removed from the FIRST token's piece only (a leading BOS has an empty
    /// piece, so then nothing is removed); then, if clean_spaces(), llama.cpp's
    /// clean-up: " ?", " !", " .", " ," lose the space, " ' " becomes "'",
    /// " 's", " 'm", " 're", " 've" lose the space. Bytes are returned as
    /// produced; use StreamDetokenizer for guaranteed-valid UTF-8 (and for
    /// text without the clean-up). Throws std::out_of_range for an id outside
    /// [0, n_tokens).
    std::string detokenize(std::span<const int32_t> ids, bool remove_leading_space = true,
                           bool special = false) const;

    int32_t bos() const { return bos_; }  ///< beginning-of-sequence id, -1 if none
    int32_t eos() const { return eos_; }  ///< end-of-sequence id, -1 if none
    int32_t unk() const { return unk_; }  ///< unknown-token id, -1 if none
    int32_t eot() const { return eot_; }  ///< end-of-turn id (key or found by text), -1 if none
    int32_t eom() const { return eom_; }  ///< end-of-message id (<|eom_id|>), -1 if none
    bool add_bos() const { return add_bos_; }  ///< tokenize(add_special) puts BOS first
    bool add_eos() const { return add_eos_; }  ///< tokenize(add_special) puts EOS last
    /// Whether a space is put before the text (tokenizer.ggml.add_space_prefix).
    bool add_space_prefix() const { return add_space_prefix_; }
    /// Whether detokenize() applies llama.cpp's clean_up_tokenization_spaces.
    bool clean_spaces() const { return clean_spaces_; }

    /// End of generation: EOS, EOT, EOM, FIM pad/repo/separator and tokens
    /// whose text is one of llama.cpp's end markers ("<|eot_id|>",
    /// "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", ...). False
    /// for ids out of range.
    bool is_eog(int32_t id) const;
    /// Every end-of-generation id, ascending (what stops a chat turn).
    std::vector<int32_t> eog_ids() const;
    /// Control token (after load-time adjustments). False for ids out of range.
    bool is_control(int32_t id) const;

    /// Type as stored in tokenizer.ggml.token_type (before adjustments).
    /// These four accessors throw std::out_of_range for an id outside [0, n_tokens).
    TokenType type(int32_t id) const;
    /// Behaviour bits (TokenAttr) after load-time adjustments.
    uint32_t attr(int32_t id) const;
    /// SPM score (higher merges first), from tokenizer.ggml.scores.
    float score(int32_t id) const;
    /// Raw token text from tokenizer.ggml.tokens ("▁Once", "<0x0A>", "Ġthe").
    const std::string& text(int32_t id) const;

    /// Id of the token whose text is exactly `piece`, -1 if none (when a
    /// text repeats, the highest id wins).
    int32_t find(std::string_view piece) const;
    /// Id that stands for the raw byte `b` in SPM byte fallback: "<0xNN>",
    /// else the one-character token of that byte, else -1.
    int32_t byte_to_token(uint8_t b) const { return byte_tokens_[b]; }
    /// Length in bytes of the longest token text (bounds merge lookups).
    size_t max_token_bytes() const { return max_token_bytes_; }

    /// Rank of the BPE merge of `left` and `right` (its index in
    /// tokenizer.ggml.merges; lower merges first), -1 if there is none.
    int32_t merge_rank(std::string_view left, std::string_view right) const;
    /// Number of distinct merges (0 for SPM).
    size_t n_merges() const { return merge_ranks_.size(); }

    /// tokenizer.ggml.model, e.g. "llama" or "gpt2".
    const std::string& model() const { return model_; }
    /// tokenizer.ggml.pre as stored ("" if absent).
    const std::string& pre() const { return pre_; }
    /// The pre-tokenizer family in use ("llama3", "qwen2", "default", ...;
    /// "" for SPM, which has none).
    const std::string& pre_family() const { return pre_family_; }
    /// Strategy name: "spm" or "bpe" ("" for an empty Vocab).
    std::string_view kind() const;

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

    std::string model_, pre_, pre_family_;
    std::shared_ptr<const Strategy> strategy_;
    std::vector<Token> tokens_;  // [n_tokens]
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> id_of_text_;
    // "left right" merge line -> rank; a pair (l, r) is looked up as l + " " + r.
    std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> merge_ranks_;
    std::vector<int32_t> byte_tokens_ = std::vector<int32_t>(256, -1);  // [256] byte -> id
    std::vector<int32_t> special_tokens_;  // ids cut out before the strategy, longest text first
    size_t max_token_bytes_ = 0;           // longest token text
    int32_t bos_ = -1, eos_ = -1, unk_ = -1, eot_ = -1, eom_ = -1;
    std::vector<std::string> load_warnings_;  // see load_warnings()
    bool add_bos_ = true, add_eos_ = false, add_space_prefix_ = true, clean_spaces_ = false;
};

}  // namespace wb::tokenizer
