#pragma once
// Pre-tokenizers of byte-level BPE vocabularies: the regular expressions
// that cut text into words before BPE merges run inside each word, chosen by
// GGUF `tokenizer.ggml.pre` (llama.cpp src/llama-vocab.cpp, llm_tokenizer_bpe
// and llama_vocab::impl::load; src/unicode.cpp unicode_regex_split).
//
// The patterns run in PCRE2's 32-bit library in UTF mode, over code points,
// so \p{L}, \p{N}, \p{P}, \p{M} and lookahead work on all of Unicode. `\s`
// and `\S` are replaced by the White_Space set llama.cpp uses (tab..CR,
// space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F,
// U+205F, U+3000), and `$` matches only at the very end, as in std::regex.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wb::tokenizer {

/// What a `tokenizer.ggml.pre` value selects for a byte-level BPE vocabulary.
struct BpePreConfig {
    std::string family;  ///< canonical name of the pre-tokenizer ("llama3", "qwen2", ...)
    std::vector<std::string> patterns;  ///< applied in order, each re-splitting the previous pieces
    bool ignore_merges = false;   ///< a word that is itself a token is emitted whole (Llama 3)
    bool clean_spaces = true;     ///< detokenize drops spaces before . , ! ? and some contractions
    bool add_bos = false;         ///< add_bos when tokenizer.ggml.add_bos_token is absent
    bool no_default_bos = false;  ///< BOS has no default id (ChatGLM)
};

/// The configuration llama.cpp uses for `pre` ("" means absent and selects
/// "default", as llama.cpp does with a warning). Throws std::invalid_argument
/// "unsupported pre-tokenizer '<pre>' (tokenizer.ggml.pre); supported: ..."
/// for names whose llama.cpp behaviour is not implemented here.
BpePreConfig bpe_pre_config(std::string_view pre);

/// Compiled patterns of one pre-tokenizer. Immutable and safe to use from
/// several threads at once; copies share the compiled code.
class PreTokenizer {
  public:
    /// Compiles `patterns` (UTF-8 PCRE2 syntax, non-ASCII written as \x{...}).
    /// Throws std::runtime_error naming the pattern and PCRE2's message when
    /// one does not compile.
    explicit PreTokenizer(const std::vector<std::string>& patterns);

    /// Splits `text` (any bytes; decoded as utf8_decode_lenient) into words:
    /// the first pattern's matches and the gaps between them, then each
    /// piece re-split by the next pattern, and so on (llama.cpp
    /// unicode_regex_split_stl); each word is returned byte-encoded
    /// (append_byte_encoded of its UTF-8). Empty text gives no words. Throws
    /// std::runtime_error if PCRE2 reports an error (e.g. its match limit,
    /// set so that no input can make a pattern run for minutes).
    std::vector<std::string> split(std::string_view text) const;

  private:
    struct Impl;
    std::shared_ptr<const Impl> impl_;
};

}  // namespace wb::tokenizer
