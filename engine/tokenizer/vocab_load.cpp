// Vocab::from_gguf: reading tokenizer.ggml.* keys and applying llama.cpp's
// load-time defaults and adjustments (src/llama-vocab.cpp, llama_vocab::impl::load).

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "errors/errors.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/vocab.h"

namespace wb::tokenizer {

namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

// DeepSeek's "<｜end▁of▁sentence｜>" (fullwidth bars, U+2581 spaces).
#define WB_DEEPSEEK_EOS \
    "<\xEF\xBD\x9C"     \
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"

// Texts llama.cpp takes as the end-of-turn token when no eot_token_id key
// names one (checked in id order here; llama.cpp walks a hash map, so with
// several matches its pick is arbitrary).
constexpr std::array<std::string_view, 11> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",     "<|end_of_text|>",
    "<EOT>",      "_<EOT>",     "[EOT]",   WB_DEEPSEEK_EOS, "<end_of_utterance>"};

// Texts llama.cpp adds to the end-of-generation set.
constexpr std::array<std::string_view, 22> kEogTexts = {"<|eot_id|>",
                                                        "<|im_end|>",
                                                        "<|end|>",
                                                        "<|return|>",
                                                        "<|call|>",
                                                        "<|flush|>",
                                                        "<|calls|>",
                                                        "<end_of_turn>",
                                                        "<|endoftext|>",
                                                        "</s>",
                                                        "<|eom_id|>",
                                                        "<EOT>",
                                                        "_<EOT>",
                                                        "[EOT]",
                                                        "[EOS]",
                                                        "<|end_of_text|>",
                                                        "<end_of_utterance>",
                                                        "<eos>",
                                                        "<turn|>",
                                                        "<|tool_response>",
                                                        WB_DEEPSEEK_EOS,
                                                        "[e~["};

// Fill-in-the-middle markers, found by text when no key names them.
constexpr std::array<std::string_view, 8> kFimPreTexts = {"<|fim_prefix|>",
                                                          "<fim-prefix>",
                                                          "<fim_prefix>",
                                                          "<\xEF\xBD\x9C"
                                                          "fim\xE2\x96\x81"
                                                          "begin\xEF\xBD\x9C>",
                                                          "<PRE>",
                                                          "\xE2\x96\x81<PRE>",
                                                          "<|code_prefix|>",
                                                          "<|prefix|>"};
constexpr std::array<std::string_view, 8> kFimSufTexts = {"<|fim_suffix|>",
                                                          "<fim-suffix>",
                                                          "<fim_suffix>",
                                                          "<\xEF\xBD\x9C"
                                                          "fim\xE2\x96\x81"
                                                          "hole\xEF\xBD\x9C>",
                                                          "<SUF>",
                                                          "\xE2\x96\x81<SUF>",
                                                          "<|code_suffix|>",
                                                          "<|suffix|>"};
constexpr std::array<std::string_view, 8> kFimMidTexts = {"<|fim_middle|>",
                                                          "<fim-middle>",
                                                          "<fim_middle>",
                                                          "<\xEF\xBD\x9C"
                                                          "fim\xE2\x96\x81"
                                                          "end\xEF\xBD\x9C>",
                                                          "<MID>",
                                                          "\xE2\x96\x81<MID>",
                                                          "<|code_middle|>",
                                                          "<|middle|>"};
constexpr std::array<std::string_view, 5> kFimPadTexts = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>",
                                                          "<PAD>", "[PAD]"};
constexpr std::array<std::string_view, 5> kFimRepTexts = {"<|fim_repo|>", "<|repo_name|>",
                                                          "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::array<std::string_view, 1> kFimSepTexts = {"<|file_sep|>"};

#undef WB_DEEPSEEK_EOS

template <size_t N>
bool one_of(const std::array<std::string_view, N>& list, std::string_view s) {
    return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

Vocab Vocab::from_gguf(const gguf::File& f) {
    Vocab v;
    const std::string& path = f.path();

    const auto model = f.get_string(kModelKey);
    if (!model) {
        throw gguf::Error(path, std::nullopt, std::string(kModelKey),
                          "missing key: the file has no tokenizer");
    }
    const bool is_bpe = *model == "gpt2";
    if (*model == "bert") {
        throw UnsupportedError("tokenizer",
                               path + ": unsupported tokenizer model 'bert' (" +
                                   std::string(kModelKey) +
                                   "): WordPiece vocabularies (BERT embedding models) are not "
                                   "implemented; supported: 'llama' (SentencePiece-style), 'gpt2' "
                                   "(byte-level BPE)",
                               std::string(kModelKey));
    }
    if (*model != "llama" && !is_bpe) {
        throw UnsupportedError("tokenizer",
                               path + ": unsupported tokenizer model '" + *model + "' (" +
                                   std::string(kModelKey) +
                                   "); supported: 'llama' (SentencePiece-style), 'gpt2' "
                                   "(byte-level BPE)",
                               std::string(kModelKey));
    }
    v.model_ = *model;
    v.pre_ = f.get_string(kPreKey).value_or("");

    // Kind defaults (llama.cpp: SPM adds BOS and a space prefix; BPE neither,
    // unless its pre-tokenizer says so, and cleans spaces when detokenizing).
    int32_t def_bos = 1, def_eos = 2, def_unk = 0;
    if (is_bpe) {
        BpePreConfig config;
        try {
            config = bpe_pre_config(v.pre_);
        } catch (const std::invalid_argument& e) {
            throw UnsupportedError("tokenizer", path + ": " + e.what(), std::string(kPreKey));
        }
        v.pre_family_ = config.family;
        v.add_bos_ = config.add_bos;
        v.add_space_prefix_ = false;
        v.clean_spaces_ = config.clean_spaces;
        def_bos = config.no_default_bos ? -1 : 11;
        def_eos = 11;
        def_unk = -1;
        v.strategy_ = std::make_shared<BpeTokenizer>(config);
    } else {
        v.add_bos_ = true;
        v.add_space_prefix_ = true;
        v.clean_spaces_ = false;
        v.strategy_ = std::make_shared<SpmTokenizer>();
    }

    const gguf::Value* tokens = f.get_array(kTokensKey, gguf::ValueType::String);
    if (!tokens) throw gguf::Error(path, std::nullopt, std::string(kTokensKey), "missing key");
    const size_t n = tokens->array_str.size();
    if (n == 0) throw gguf::Error(path, std::nullopt, std::string(kTokensKey), "empty token list");
    if (n > static_cast<size_t>(INT32_MAX)) {
        throw gguf::Error(path, std::nullopt, std::string(kTokensKey),
                          std::to_string(n) + " tokens do not fit int32 ids");
    }
    const gguf::Value* scores = f.get_array(kScoresKey, gguf::ValueType::Float32);
    const gguf::Value* types = f.get_array(kTypesKey, gguf::ValueType::Int32);
    auto check_len = [&](const gguf::Value* a, std::string_view key) {
        if (a && a->array_size() != n) {
            throw gguf::Error(path, std::nullopt, std::string(key),
                              "has " + std::to_string(a->array_size()) + " entries but " +
                                  std::string(kTokensKey) + " has " + std::to_string(n));
        }
    };
    check_len(scores, kScoresKey);
    check_len(types, kTypesKey);

    v.tokens_.resize(n);
    v.id_of_text_.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        Token& t = v.tokens_[i];
        t.text = tokens->array_str[i];
        if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp
        t.score = scores ? static_cast<float>(scores->array_f[i]) : 0.0f;
        const int64_t raw_type = types ? types->array_i[i] : 1;
        t.type = raw_type >= 0 && raw_type <= 6 ? static_cast<TokenType>(raw_type)
                                                : TokenType::Undefined;
        t.attr = attr_of(t.type);
        // Later duplicates win (llama.cpp refuses such files).
        v.id_of_text_.insert_or_assign(t.text, static_cast<int32_t>(i));
        v.max_token_bytes_ = std::max(v.max_token_bytes_, t.text.size());
    }

    if (is_bpe) {
        const gguf::Value* merges = f.get_array(kMergesKey, gguf::ValueType::String);
        if (!merges) {
            throw gguf::Error(path, std::nullopt, std::string(kMergesKey),
                              "missing key: a 'gpt2' (byte-level BPE) vocabulary needs its merges");
        }
        v.merge_ranks_.reserve(merges->array_str.size());
        for (size_t i = 0; i < merges->array_str.size(); ++i) {
            const std::string& line = merges->array_str[i];
            // llama.cpp splits at the first space from index 1; a line without
            // one makes an empty pair, which no lookup asks for.
            if (line.find(' ', 1) == std::string::npos) continue;
            if (i > static_cast<size_t>(INT32_MAX)) break;
            v.merge_ranks_.emplace(line, static_cast<int32_t>(i));  // first wins
        }
    }

    // Special ids: kind defaults (none if outside the vocab) when the key is
    // absent; a key whose value is not an id of this vocabulary (4294967295,
    // negative, past the end) is a load warning naming the key, and the
    // token is none: not the kind default, which would be some unrelated
    // token (BPE's 11 is "," in Llama 3) put before every prompt.
    std::vector<std::pair<std::string, size_t>> bad_keys;  // key, its warning's index
    auto id_or_default = [&](std::string_view key, int32_t def) -> int32_t {
        if (def >= static_cast<int32_t>(n)) def = -1;
        const gguf::Value* raw = f.find(key);
        if (!raw) return def;
        const auto val = f.get_int(key);  // throws gguf::Error when not an integer
        if (val && *val >= 0 && *val < static_cast<int64_t>(n)) return static_cast<int32_t>(*val);
        v.load_warnings_.push_back(path + ": " + std::string(key) + " = " + raw->to_display() +
                                   " is not a token id of this vocabulary (" + std::to_string(n) +
                                   " tokens, ids 0.." + std::to_string(n - 1) +
                                   "); read as no such token");
        bad_keys.emplace_back(key, v.load_warnings_.size() - 1);
        return -1;
    };
    v.bos_ = id_or_default("tokenizer.ggml.bos_token_id", def_bos);
    v.eos_ = id_or_default("tokenizer.ggml.eos_token_id", def_eos);
    v.unk_ = id_or_default("tokenizer.ggml.unknown_token_id", def_unk);
    v.eot_ = id_or_default("tokenizer.ggml.eot_token_id", -1);
    v.eom_ = id_or_default("tokenizer.ggml.eom_token_id", -1);
    int32_t fim_pre = id_or_default("tokenizer.ggml.fim_pre_token_id",
                                    id_or_default("tokenizer.ggml.prefix_token_id", -1));
    int32_t fim_suf = id_or_default("tokenizer.ggml.fim_suf_token_id",
                                    id_or_default("tokenizer.ggml.suffix_token_id", -1));
    int32_t fim_mid = id_or_default("tokenizer.ggml.fim_mid_token_id",
                                    id_or_default("tokenizer.ggml.middle_token_id", -1));
    int32_t fim_pad = id_or_default("tokenizer.ggml.fim_pad_token_id", -1);
    int32_t fim_rep = id_or_default("tokenizer.ggml.fim_rep_token_id", -1);
    int32_t fim_sep = id_or_default("tokenizer.ggml.fim_sep_token_id", -1);
    v.add_bos_ = f.get_bool("tokenizer.ggml.add_bos_token").value_or(v.add_bos_);
    v.add_eos_ = f.get_bool("tokenizer.ggml.add_eos_token").value_or(v.add_eos_);
    v.add_space_prefix_ =
        f.get_bool("tokenizer.ggml.add_space_prefix").value_or(v.add_space_prefix_);
    // A BOS/EOS that is none because its key was bad is not added either
    // (tokenize() would otherwise refuse every text); its warning says so.
    for (const auto& [key, warning] : bad_keys) {
        if (key == "tokenizer.ggml.bos_token_id" && v.add_bos_) {
            v.add_bos_ = false;
            v.load_warnings_[warning] += ", so no BOS is put before prompts";
        }
        if (key == "tokenizer.ggml.eos_token_id" && v.add_eos_) {
            v.add_eos_ = false;
            v.load_warnings_[warning] += ", so no EOS is put after prompts";
        }
    }

    // Special tokens found by text; the one chosen gains Control.
    for (size_t i = 0; i < n; ++i) {
        Token& t = v.tokens_[i];
        const auto id = static_cast<int32_t>(i);
        auto detect = [&](int32_t& slot, bool match) {
            if (slot < 0 && match) {
                slot = id;
                t.attr |= kAttrControl;
            }
        };
        detect(v.eot_, one_of(kEotTexts, t.text));
        detect(v.eom_, t.text == "<|eom_id|>");
        detect(fim_pre, one_of(kFimPreTexts, t.text));
        detect(fim_suf, one_of(kFimSufTexts, t.text));
        detect(fim_mid, one_of(kFimMidTexts, t.text));
        detect(fim_pad, one_of(kFimPadTexts, t.text));
        detect(fim_rep, one_of(kFimRepTexts, t.text));
        detect(fim_sep, one_of(kFimSepTexts, t.text));
    }
    // Control tokens named "...unused..." are unused.
    for (Token& t : v.tokens_) {
        if ((t.attr & kAttrControl) && t.text.find("unused") != std::string::npos) {
            t.attr |= kAttrUnused;
        }
    }
    // End of generation: FIM pad/repo/separator, the marker texts (which gain
    // Control), then EOS/EOT/EOM.
    for (const int32_t id : {fim_pad, fim_rep, fim_sep}) {
        if (id >= 0) v.tokens_[static_cast<size_t>(id)].eog = true;
    }
    for (Token& t : v.tokens_) {
        if (one_of(kEogTexts, t.text)) {
            t.eog = true;
            t.attr |= kAttrControl;
        }
    }
    // gpt-oss: these structure tokens are always rendered.
    for (Token& t : v.tokens_) {
        if (t.text == "<|channel|>" || t.text == "<|message|>" || t.text == "<|start|>" ||
            t.text == "<|constrain|>") {
            t.attr = kAttrUserDefined;
        }
    }
    for (const int32_t id : {v.eos_, v.eot_, v.eom_}) {
        if (id >= 0) v.tokens_[static_cast<size_t>(id)].eog = true;
    }
    // Harmony-style vocabularies (with <|return|> and <|call|>, or <|calls|>
    // and <|flush|>) continue after <|end|>; Gemma-4 style ones (with
    // <|tool_response>) after </s>.
    auto eog_with_text = [&](std::string_view text) -> int32_t {
        for (size_t i = 0; i < n; ++i) {
            if (v.tokens_[i].eog && v.tokens_[i].text == text) return static_cast<int32_t>(i);
        }
        return -1;
    };
    const int32_t end_id = eog_with_text("<|end|>");
    const bool has_call = eog_with_text("<|call|>") >= 0 || eog_with_text("<|calls|>") >= 0;
    if (end_id >= 0 && has_call &&
        (eog_with_text("<|return|>") >= 0 || eog_with_text("<|flush|>") >= 0)) {
        v.tokens_[static_cast<size_t>(end_id)].eog = false;
        v.tokens_[static_cast<size_t>(end_id)].attr = kAttrUserDefined;
    }
    const int32_t s_id = eog_with_text("</s>");
    if (s_id >= 0 && eog_with_text("<|tool_response>") >= 0) {
        v.tokens_[static_cast<size_t>(s_id)].eog = false;
        v.tokens_[static_cast<size_t>(s_id)].attr = kAttrNormal;
    }

    // Special tokens cut out of the text before the strategy, longest text
    // first (ties by id, so the order is deterministic).
    for (size_t i = 0; i < n; ++i) {
        if (v.tokens_[i].attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
            v.special_tokens_.push_back(static_cast<int32_t>(i));
        }
    }
    std::stable_sort(v.special_tokens_.begin(), v.special_tokens_.end(), [&](int32_t a, int32_t b) {
        return v.tokens_[static_cast<size_t>(a)].text.size() >
               v.tokens_[static_cast<size_t>(b)].text.size();
    });

    // Pieces (token_to_piece with special = true), before the strip rules
    // below, which do not change them.
    for (size_t i = 0; i < n; ++i) {
        v.tokens_[i].piece = v.strategy_->piece(v, static_cast<int32_t>(i));
    }

    // llama.cpp keys this rule on the model's name, not on tokenizer data.
    std::string name = f.get_string("general.name").value_or("");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (const int32_t id : v.special_tokens_)
            v.tokens_[static_cast<size_t>(id)].attr |= kAttrRStrip;
        auto set_rstrip = [&](std::string_view text, bool on) {
            const int32_t id = v.find(text);
            if (id < 0) return;
            uint32_t& a = v.tokens_[static_cast<size_t>(id)].attr;
            a = on ? (a | kAttrRStrip) : (a & ~static_cast<uint32_t>(kAttrRStrip));
        };
        set_rstrip("</s>", true);
        for (const char* t : {"<unk>", "<s>", "<|endoftext|>"}) set_rstrip(t, false);
    }

    // SPM byte fallback table.
    for (int b = 0; b < 256; ++b) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", b);
        int32_t id = v.find(hex);
        if (id < 0) id = v.find(std::string(1, static_cast<char>(b)));
        v.byte_tokens_[static_cast<size_t>(b)] = id;
    }
    return v;
}

}  // namespace wb::tokenizer
