// Vocab::from_gguf: reading tokenizer.ggml.* keys and applying llama.cpp's
// load-time defaults and adjustments (src/llama-vocab.cpp, llama_vocab::load).

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "tokenizer/vocab.h"

namespace wb::tokenizer {

namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";

// Texts llama.cpp treats as end of turn when no eot_token_id key exists
// (checked in id order here; llama.cpp walks a hash map, so with several
// matches its pick is arbitrary).
constexpr std::array<std::string_view, 9> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>",
    // DeepSeek's "<｜end▁of▁sentence｜>" (fullwidth bars, U+2581 spaces)
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>"};
// Texts llama.cpp adds to the end-of-generation set.
constexpr std::array<std::string_view, 10> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>",   "<|endoftext|>",
    "<|eom_id|>", "<EOT>",      "_<EOT>",  "<|end_of_text|>", "<end_of_utterance>"};

// "<0xNN>" (upper- or lower-case hex) -> NN, else -1.
int parse_byte_token(std::string_view t) {
    if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    const int hi = hex(t[3]), lo = hex(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
    std::string out;
    out.reserve(s.size());
    size_t pos = 0;
    for (size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
        out.append(s, pos, hit - pos);
        out.append(to);
    }
    out.append(s, pos, std::string::npos);
    return out;
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
    if (*model != "llama") {
        throw std::runtime_error(path + ": unsupported tokenizer model '" + *model +
                                 "' (tokenizer.ggml.model); only 'llama' (SentencePiece-style) "
                                 "vocabularies are implemented");
    }
    v.model_ = *model;

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
        t.score = scores ? static_cast<float>(scores->array_f[i]) : 0.0f;
        const int64_t raw_type = types ? types->array_i[i] : 1;
        t.type = raw_type >= 0 && raw_type <= 6 ? static_cast<TokenType>(raw_type)
                                                : TokenType::Undefined;
        t.attr = attr_of(t.type);
        // Later duplicates win, as llama.cpp's token_to_id[text] = id.
        v.id_of_text_.insert_or_assign(t.text, static_cast<int32_t>(i));
        v.max_token_bytes_ = std::max(v.max_token_bytes_, t.text.size());
    }

    // Special ids: SPM defaults, then keys whose value is a valid id.
    auto id_or_default = [&](std::string_view key, int32_t def) -> int32_t {
        if (def >= static_cast<int32_t>(n)) def = -1;
        const auto val = f.get_int(key);
        if (val && *val >= 0 && *val < static_cast<int64_t>(n)) return static_cast<int32_t>(*val);
        return def;
    };
    v.bos_ = id_or_default("tokenizer.ggml.bos_token_id", 1);
    v.eos_ = id_or_default("tokenizer.ggml.eos_token_id", 2);
    v.unk_ = id_or_default("tokenizer.ggml.unknown_token_id", 0);
    v.eot_ = id_or_default("tokenizer.ggml.eot_token_id", -1);
    v.eom_ = id_or_default("tokenizer.ggml.eom_token_id", -1);
    v.add_bos_ = f.get_bool("tokenizer.ggml.add_bos_token").value_or(true);
    v.add_eos_ = f.get_bool("tokenizer.ggml.add_eos_token").value_or(false);
    v.add_space_prefix_ = f.get_bool("tokenizer.ggml.add_space_prefix").value_or(true);

    // End of turn / generation found by text; such tokens act as Control.
    for (size_t i = 0; i < n; ++i) {
        Token& t = v.tokens_[i];
        const bool eot_text =
            std::find(kEotTexts.begin(), kEotTexts.end(), t.text) != kEotTexts.end();
        const bool eog_text =
            std::find(kEogTexts.begin(), kEogTexts.end(), t.text) != kEogTexts.end();
        if (eot_text && v.eot_ < 0) {
            v.eot_ = static_cast<int32_t>(i);
            t.attr = kAttrControl;
        }
        if (eog_text) {
            t.eog = true;
            t.attr = kAttrControl;
        }
    }
    for (const int32_t id : {v.eos_, v.eot_, v.eom_}) {
        if (id >= 0) v.tokens_[static_cast<size_t>(id)].eog = true;
    }

    // Special tokens cut out of the text before SPM, longest text first
    // (ties by id, so the order is deterministic).
    for (size_t i = 0; i < n; ++i) {
        if (v.tokens_[i].attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
            v.special_tokens_.push_back(static_cast<int32_t>(i));
        }
    }
    std::stable_sort(v.special_tokens_.begin(), v.special_tokens_.end(), [&](int32_t a, int32_t b) {
        return v.tokens_[static_cast<size_t>(a)].text.size() >
               v.tokens_[static_cast<size_t>(b)].text.size();
    });

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

    // Byte fallback table and precomputed pieces.
    for (size_t i = 0; i < n; ++i) {
        Token& t = v.tokens_[i];
        if (t.attr & kAttrByte) {
            const int b = parse_byte_token(t.text);
            // A byte token without the <0xNN> form shows as its text.
            t.piece = b >= 0 ? std::string(1, static_cast<char>(b)) : t.text;
        } else if (t.attr & (kAttrControl | kAttrUnknown | kAttrUserDefined)) {
            t.piece = t.text;
        } else if (t.attr & kAttrNormal) {
            t.piece = replace_all(t.text, "\xE2\x96\x81", " ");
        }  // Unused / Undefined: empty
    }
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
