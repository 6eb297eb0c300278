// fuzz_vocab: arbitrary bytes as a .gguf file -> gguf::File -> Vocab::from_gguf
// (the SPM vocab and its load-time adjustments), then the loaded vocab
// tokenizes a fixed text with and without special-token parsing and
// detokenizes every id, as the CLI's `tokenize` does with a user's file.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "gguf/gguf.h"
#include "tokenizer/stream_detokenizer.h"
#include "tokenizer/vocab.h"

namespace {

void check(const std::string& path) {
    const wb::gguf::File f = wb::gguf::File::open(path);
    const wb::tokenizer::Vocab v = wb::tokenizer::Vocab::from_gguf(f);
    const std::string text =
        "Once upon a time <s></s><unk> \xE2\x96\x81 caf\xC3\xA9 \xF0\x9F\x98\x80\n\t";
    for (const bool special : {false, true}) {
        std::vector<int32_t> ids;
        try {
            ids = v.tokenize(text, /*add_special=*/true, special);
        } catch (const std::runtime_error&) {
            // A vocab without BOS / byte tokens / UNK refuses some text; fine.
            continue;
        }
        for (const int32_t id : ids) {
            if (id < 0 || id >= v.n_tokens()) {
                std::fprintf(stderr, "tokenize produced id %d outside [0, %d)\n", id, v.n_tokens());
                std::abort();
            }
        }
        (void)v.detokenize(ids);
        wb::tokenizer::StreamDetokenizer sd(v, special);
        for (const int32_t id : ids) (void)sd.push(id);
        (void)sd.flush();
    }
    for (int32_t id = 0; id < v.n_tokens() && id < 4096; ++id) {
        (void)v.token_to_piece(id, true);
        (void)v.is_eog(id);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return wbfuzz::check_file(data, size, ".gguf", check);
}
