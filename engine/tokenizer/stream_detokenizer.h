#pragma once
// Streaming detokenizer: turns generated token ids into text that is always
// whole, valid UTF-8, for chat panes and the run log.

#include <cstdint>
#include <string>

#include "tokenizer/vocab.h"

namespace wb::tokenizer {

/// Feeds token ids one at a time and returns only complete UTF-8. Byte
/// tokens (<0xNN>) carry one byte each, so one character (e.g. "€" = E2 82
/// AC, an emoji = 4 bytes) may arrive over several tokens; its bytes are held
/// back until the character is complete. Pieces are
/// Vocab::token_to_piece(id, special) with no leading-space removal, so the
/// concatenated output equals the concatenation of the pieces whenever those
/// form valid UTF-8 (llama.cpp prints generated text the same way).
///
/// Ill-formed bytes are replaced by U+FFFD, one per maximal subpart (see
/// utf8_append_valid): as soon as a sequence can no longer become valid in
/// push(), and for a trailing incomplete sequence in flush(). At most 3 bytes
/// are ever held back. Keeps a reference to the Vocab, which must outlive it.
/// Not thread-safe (one per sequence).
class StreamDetokenizer {
  public:
    /// `special`: show Control/Unknown tokens as their text (token_to_piece).
    explicit StreamDetokenizer(const Vocab& v, bool special = false);

    /// Adds token `id`; returns the text that is now complete (may be "").
    /// Throws std::out_of_range for an id outside the vocab; the state is
    /// unchanged then.
    std::string push(int32_t id);

    /// Returns whatever is still held back, an incomplete sequence as U+FFFD,
    /// and resets the held bytes. Call once at the end of a sequence.
    std::string flush();

    /// Bytes currently held back (0..3).
    size_t pending_bytes() const { return pending_.size(); }

  private:
    const Vocab* vocab_;
    bool special_;
    std::string pending_;  // [0..3] bytes of an incomplete UTF-8 sequence
};

}  // namespace wb::tokenizer
