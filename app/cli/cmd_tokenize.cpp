// `workbench-cli tokenize [-m MODEL] -p TEXT [--no-bos] [--parse-special]
// [--pieces]`: the token ids of a text, space-separated on one line, as
// llama.cpp's llama-tokenize --ids; SentencePiece and byte-level BPE
// vocabularies.

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "common_options.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"

namespace wb::cli {

namespace {

const CommandSpec kSpec{
    "tokenize",
    "",
    "Print the token ids of a text, space-separated on one line.",
    "Tokenizes like llama.cpp's llama_tokenize(text, add_special, parse_special):\n"
    "BOS first when the model's tokenizer adds it (unless --no-bos); text that looks\n"
    "like a special token is plain text unless --parse-special. SentencePiece\n"
    "(llama) and byte-level BPE (gpt2: Llama 3, Qwen, GPT-2, ...) vocabularies; the\n"
    "BPE pre-tokenizer is the one tokenizer.ggml.pre names. Needs only the\n"
    "vocabulary, so vocab-only GGUF files work too.",
    concat(model_options(),
           {
               {"prompt", 'p', "TEXT", "text to tokenize (required)"},
               {"no-bos", 0, "", "do not add BOS/EOS (add_special = false)"},
               {"parse-special", 0, "", "turn special-token text (<|im_end|>, ...) into its id"},
               {"pieces", 0, "", "print one token per line: id, then its text as JSON"},
           }),
    0,
    0,
};

}  // namespace

int cmd_tokenize(const std::vector<std::string>& argv) {
    const ParsedArgs args = parse_args(kSpec, argv);
    if (args.help) {
        std::fputs(help_text(kSpec).c_str(), stdout);
        return 0;
    }
    const std::optional<std::string> text = args.get("prompt");
    if (!text) throw UsageError("tokenize: -p TEXT is required");
    const gguf::File f = gguf::File::open(resolve_model_path(args.get("model")));
    const tokenizer::Vocab vocab = tokenizer::Vocab::from_gguf(f);
    print_warnings(vocab.load_warnings());
    const std::vector<int32_t> ids =
        vocab.tokenize(*text, !args.has("no-bos"), args.has("parse-special"));
    if (args.has("pieces")) {
        for (const int32_t id : ids) {
            // A piece may be part of a UTF-8 character: JSON shows it safely.
            const std::string piece =
                nlohmann::json(vocab.token_to_piece(id, true))
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            std::printf("%d\t%s\n", id, piece.c_str());
        }
        return 0;
    }
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) line += ' ';
        line += std::to_string(ids[i]);
    }
    std::printf("%s\n", line.c_str());
    return 0;
}

}  // namespace wb::cli
