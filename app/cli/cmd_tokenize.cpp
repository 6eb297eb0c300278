// `workbench-cli tokenize [-m MODEL] -p TEXT [--no-bos]`: the token ids of a
// text, space-separated on one line, as llama.cpp's llama-tokenize --ids.

#include <cstdio>
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
    "Tokenizes like llama.cpp's llama_tokenize(text, add_special, parse_special=false):\n"
    "BOS first when the model's tokenizer adds it (unless --no-bos); text that looks\n"
    "like a special token is tokenized as plain text. Needs only the vocabulary, so\n"
    "vocab-only GGUF files work too.",
    concat(model_options(),
           {
               {"prompt", 'p', "TEXT", "text to tokenize (required)"},
               {"no-bos", 0, "", "do not add BOS/EOS (add_special = false)"},
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
    const std::vector<int32_t> ids = vocab.tokenize(*text, !args.has("no-bos"));
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) line += ' ';
        line += std::to_string(ids[i]);
    }
    std::printf("%s\n", line.c_str());
    return 0;
}

}  // namespace wb::cli
