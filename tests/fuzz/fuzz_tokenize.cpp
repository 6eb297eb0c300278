// fuzz_tokenize: arbitrary bytes as prompt text for the real stories260K
// vocab (tests/data/models): tokenize (with and without special-token parsing,
// chosen by the first byte), detokenize, and the stream detokenizer fed the
// ids one by one, whose output must be valid UTF-8. The rest of the input is
// also read as raw int32 ids, which must be refused with std::out_of_range
// when out of range, never read out of bounds.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/stream_detokenizer.h"
#include "tokenizer/utf8.h"
#include "tokenizer/vocab.h"

namespace {

const wb::tokenizer::Vocab& vocab() {
    static const wb::tokenizer::Vocab v = wb::tokenizer::Vocab::from_gguf(
        wb::gguf::File::open(WB_TEST_DATA_DIR "/models/stories260K.gguf"));
    return v;
}

void require_valid_utf8(const std::string& s) {
    std::string copy;
    if (wb::tokenizer::utf8_append_valid(s, true, copy) != s.size() || copy != s) {
        std::fprintf(stderr, "stream detokenizer produced invalid UTF-8\n");
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const wb::tokenizer::Vocab& v = vocab();
    const uint8_t flags = data[0];
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

    const std::vector<int32_t> ids = v.tokenize(text, flags & 1, flags & 2);
    for (const int32_t id : ids) {
        if (id < 0 || id >= v.n_tokens()) {
            std::fprintf(stderr, "tokenize produced id %d outside [0, %d)\n", id, v.n_tokens());
            std::abort();
        }
    }
    (void)v.detokenize(ids, flags & 4);
    wb::tokenizer::StreamDetokenizer sd(v, flags & 8);
    std::string streamed;
    for (const int32_t id : ids) streamed += sd.push(id);
    streamed += sd.flush();
    require_valid_utf8(streamed);

    // The same bytes as raw ids (what a client could send as a token list).
    wb::tokenizer::StreamDetokenizer raw(v, flags & 8);
    for (size_t off = 1; off + 4 <= size; off += 4) {
        int32_t id;
        std::memcpy(&id, data + off, 4);
        const bool valid = id >= 0 && id < v.n_tokens();
        try {
            (void)raw.push(id);
            if (!valid) {
                std::fprintf(stderr, "push(%d) accepted an id outside the vocab\n", id);
                std::abort();
            }
        } catch (const std::out_of_range&) {
            if (valid) std::abort();
        }
    }
    require_valid_utf8(raw.flush());
    return 0;
}
