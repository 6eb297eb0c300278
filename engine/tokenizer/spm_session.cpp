#include "tokenizer/spm_session.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace wb::tokenizer {

void SpmSession::tokenize(std::string_view text, std::vector<int32_t>& out) {
    // Only pairs whose text is a token may merge, the highest score first
    // (rank = -score).
    const auto rank = [&](std::string_view l, std::string_view r) -> std::optional<double> {
        const size_t size = l.size() + r.size();
        // No token is longer than max_token_bytes, so the lookup would fail.
        if (size > vocab_.max_token_bytes()) return std::nullopt;
        // Adjacent symbols are contiguous in the text.
        const int32_t id = vocab_.find(std::string_view(l.data(), size));
        if (id < 0) return std::nullopt;
        return -static_cast<double>(vocab_.score(id));
    };
    merge_.run(text, rank, [&](std::string_view piece) {
        if (const int32_t id = vocab_.find(piece); id >= 0) {
            out.push_back(id);
        } else {
            emit_bytes(piece, out);  // one character without its own token
        }
    });
}

void SpmSession::emit_bytes(std::string_view bytes, std::vector<int32_t>& out) const {
    for (const char c : bytes) {
        const auto b = static_cast<uint8_t>(c);
        int32_t id = vocab_.byte_to_token(b);
        if (id < 0) id = vocab_.unk();
        if (id < 0) {
            static constexpr char kHex[] = "0123456789ABCDEF";
            throw std::runtime_error(std::string("tokenize: byte 0x") + kHex[b >> 4] +
                                     kHex[b & 15] +
                                     " has no byte token <0xNN> and the vocab has no UNK token");
        }
        out.push_back(id);
    }
}

}  // namespace wb::tokenizer
