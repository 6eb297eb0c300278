#include "tokenizer/stream_detokenizer.h"

#include "tokenizer/utf8.h"

namespace wb::tokenizer {

StreamDetokenizer::StreamDetokenizer(const Vocab& v, bool special)
    : vocab_(&v), special_(special) {}

std::string StreamDetokenizer::push(int32_t id) {
    pending_ += vocab_->token_to_piece(id, special_);  // throws before any change
    std::string out;
    const size_t used = utf8_append_valid(pending_, /*final=*/false, out);
    pending_.erase(0, used);
    return out;
}

std::string StreamDetokenizer::flush() {
    std::string out;
    utf8_append_valid(pending_, /*final=*/true, out);
    pending_.clear();
    return out;
}

}  // namespace wb::tokenizer
