// Pre-tokenizer patterns per `tokenizer.ggml.pre` and the PCRE2 splitter.
// The pattern texts are those of the models' tokenizer.json files as
// llama.cpp adapts them (src/llama-vocab.cpp, llm_tokenizer_bpe).

#include "tokenizer/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 32
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "tokenizer/byte_unicode.h"
#include "tokenizer/utf8.h"

namespace wb::tokenizer {

namespace {

// GPT-2's pattern (also the core of most others).
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
// Llama 3 (tiktoken cl100k style): case-insensitive contractions, digits in
// groups of up to 3, newlines kept with the preceding whitespace.
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen 2: as Llama 3 but every digit alone.
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// DeepSeek: CJK runs (and the range llama.cpp lists with them) kept apart.
constexpr std::string_view kDeepseekCjk =
    R"([\x{4E00}-\x{9FA5}\x{800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";
// DeepSeek LLM's letters: the cased letters of its tokenizer.json.
constexpr std::string_view kDeepseekLlmLetters =
    R"(\s?[A-Za-z\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293})"
    R"(\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A})"
    R"(\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556})"
    R"(\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF})"
    R"(\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D})"
    R"(\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D})"
    R"(\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4})"
    R"(\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4})"
    R"(\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124})"
    R"(\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F})"
    R"(\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4})"
    R"(\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F})"
    R"(\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17})"
    R"(\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3})"
    R"(\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF})"
    R"(\x{1E900}-\x{1E943}]+)";
constexpr std::string_view kDeepseekLlmPunct =
    R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)";

// llama.cpp's White_Space set, for \s and \S (PCRE2's own \s differs at U+0085).
constexpr std::string_view kWhiteSpaceItems =
    R"(\t\n\x{0B}\f\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

struct Family {
    std::string_view name;
    std::vector<std::string_view> patterns;
    bool ignore_merges;
    bool clean_spaces;
    bool add_bos;
};

// One entry per pre-tokenizer family tested against llama.cpp's ids.
const std::vector<Family>& families() {
    static const std::vector<Family> f = {
        {"default",
         {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"},
         false,
         true,
         false},
        {"llama3", {kLlama3}, true, true, true},
        {"qwen2", {kQwen2}, false, false, false},
        {"gpt-2", {kGpt2}, false, true, false},
        {"starcoder", {R"(\p{N})", kGpt2}, false, true, false},
        {"smollm", {R"(\p{N})", kGpt2}, false, false, false},
        {"falcon", {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}, false, true, false},
        {"deepseek-llm",
         {"[\r\n]", kDeepseekLlmLetters, kDeepseekLlmPunct, R"(\s+$)", kDeepseekCjk, R"(\p{N}+)"},
         false,
         false,
         false},
        {"deepseek-coder",
         {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepseekCjk, R"(\p{N})"},
         false,
         false,
         false},
    };
    return f;
}

// `tokenizer.ggml.pre` values and the family llama.cpp gives them (only
// names whose patterns and flags equal a tested family's).
struct Alias {
    std::string_view pre;
    std::string_view family;
};
constexpr std::array kAliases = {
    Alias{"default", "default"},
    Alias{"llama3", "llama3"},
    Alias{"llama-v3", "llama3"},
    Alias{"llama-bpe", "llama3"},
    Alias{"falcon3", "llama3"},
    Alias{"falcon-h1", "llama3"},
    Alias{"pixtral", "llama3"},
    Alias{"midm-2.0", "llama3"},
    Alias{"lfm2", "llama3"},
    Alias{"qwen2", "qwen2"},
    Alias{"deepseek-r1-qwen", "qwen2"},
    Alias{"hunyuan", "qwen2"},
    Alias{"solar-open", "qwen2"},
    Alias{"gpt-2", "gpt-2"},
    Alias{"phi-2", "gpt-2"},
    Alias{"mpt", "gpt-2"},
    Alias{"olmo", "gpt-2"},
    Alias{"jais", "gpt-2"},
    Alias{"gigachat", "gpt-2"},
    Alias{"exaone4", "gpt-2"},
    Alias{"mellum", "gpt-2"},
    Alias{"a.x-4.0", "gpt-2"},
    Alias{"starcoder", "starcoder"},
    Alias{"refact", "starcoder"},
    Alias{"codeshell", "starcoder"},
    Alias{"exaone", "starcoder"},
    Alias{"minerva-7b", "starcoder"},
    Alias{"smollm", "smollm"},
    Alias{"command-r", "smollm"},
    Alias{"falcon", "falcon"},
    Alias{"deepseek-llm", "deepseek-llm"},
    Alias{"deepseek-coder", "deepseek-coder"},
};

// Rewrites \s and \S into llama.cpp's White_Space set. Inside a class, \s
// becomes the set's items; \S inside a class is not used by any pattern.
std::string expand_whitespace(std::string_view pattern) {
    std::string out;
    bool in_class = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            const char e = pattern[i + 1];
            if (e == 's') {
                if (in_class) {
                    out += kWhiteSpaceItems;
                } else {
                    out += '[';
                    out += kWhiteSpaceItems;
                    out += ']';
                }
            } else if (e == 'S') {
                if (in_class) throw std::logic_error("\\S inside a character class");
                out += "[^";
                out += kWhiteSpaceItems;
                out += ']';
            } else {
                out += c;
                out += e;
            }
            ++i;
            continue;
        }
        if (c == '[' && !in_class) {
            in_class = true;
        } else if (c == ']' && in_class) {
            in_class = false;
        }
        out += c;
    }
    return out;
}

// Code point stood in for by a surrogate while matching: PCRE2 rejects
// surrogates in UTF mode. Like a surrogate it is neither a letter, number,
// mark, punctuation nor white space (category Co).
constexpr uint32_t kSurrogateStandIn = 0xE000;

// Bounds one pattern's work on one piece of text; far above what any of the
// patterns above needs per code point, so only a pathological input stops.
constexpr uint32_t kMatchLimit = 50'000'000;

}  // namespace

BpePreConfig bpe_pre_config(std::string_view pre) {
    const std::string_view key = pre.empty() ? std::string_view("default") : pre;
    for (const Alias& a : kAliases) {
        if (a.pre != key) continue;
        for (const Family& f : families()) {
            if (f.name != a.family) continue;
            BpePreConfig c;
            c.family = std::string(f.name);
            for (const std::string_view p : f.patterns) c.patterns.emplace_back(p);
            c.ignore_merges = f.ignore_merges;
            c.clean_spaces = f.clean_spaces;
            c.add_bos = f.add_bos;
            return c;
        }
    }
    std::string names;
    for (const Alias& a : kAliases) {
        if (!names.empty()) names += ", ";
        names += a.pre;
    }
    throw std::invalid_argument("unsupported pre-tokenizer '" + std::string(pre) +
                                "' (tokenizer.ggml.pre); supported: " + names);
}

struct PreTokenizer::Impl {
    struct Code {
        pcre2_code* code = nullptr;
        std::string source;
    };
    std::vector<Code> codes;
    pcre2_match_context* match_context = nullptr;

    Impl() = default;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl() {
        for (Code& c : codes) pcre2_code_free(c.code);
        pcre2_match_context_free(match_context);
    }
};

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) {
    auto impl = std::make_shared<Impl>();
    impl->match_context = pcre2_match_context_create(nullptr);
    if (!impl->match_context) throw std::bad_alloc();
    pcre2_set_match_limit(impl->match_context, kMatchLimit);
    for (const std::string& p : patterns) {
        const std::string expanded = expand_whitespace(p);
        // The expanded pattern is ASCII (non-ASCII is written \x{...}).
        std::vector<PCRE2_UCHAR32> units(expanded.begin(), expanded.end());
        int error = 0;
        PCRE2_SIZE error_offset = 0;
        pcre2_code* code =
            pcre2_compile(units.data(), units.size(), PCRE2_UTF | PCRE2_DOLLAR_ENDONLY, &error,
                          &error_offset, nullptr);
        if (!code) {
            PCRE2_UCHAR32 msg[256];
            pcre2_get_error_message(error, msg, 256);
            std::string text;
            for (size_t i = 0; i < 256 && msg[i]; ++i) text.push_back(static_cast<char>(msg[i]));
            throw std::runtime_error("pre-tokenizer pattern '" + p + "' does not compile at " +
                                     std::to_string(error_offset) + ": " + text);
        }
        // JIT when available; the interpreter is the fallback.
        (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
        impl->codes.push_back({code, p});
    }
    impl_ = std::move(impl);
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    const std::vector<uint32_t> cpts = utf8_decode_lenient(text);
    std::vector<PCRE2_UCHAR32> subject(cpts.begin(), cpts.end());
    for (PCRE2_UCHAR32& c : subject) {
        if (c >= 0xD800 && c <= 0xDFFF) c = kSurrogateStandIn;
    }

    // Piece lengths in code points, as llama.cpp's bpe_offsets.
    std::vector<size_t> pieces;
    if (!cpts.empty()) pieces.push_back(cpts.size());
    std::vector<size_t> next;
    for (const Impl::Code& c : impl_->codes) {
        pcre2_match_data* md = pcre2_match_data_create_from_pattern(c.code, nullptr);
        if (!md) throw std::bad_alloc();
        next.clear();
        size_t start = 0;
        try {
            for (const size_t len : pieces) {
                const PCRE2_UCHAR32* sub = subject.data() + start;
                size_t pos = 0, last_end = 0;
                while (pos <= len) {
                    const int rc = pcre2_match(c.code, sub, len, pos, PCRE2_NO_UTF_CHECK, md,
                                               impl_->match_context);
                    if (rc == PCRE2_ERROR_NOMATCH) break;
                    if (rc < 0) {
                        PCRE2_UCHAR32 msg[256];
                        pcre2_get_error_message(rc, msg, 256);
                        std::string m;
                        for (size_t i = 0; i < 256 && msg[i]; ++i)
                            m.push_back(static_cast<char>(msg[i]));
                        throw std::runtime_error("tokenize: pre-tokenizer pattern '" + c.source +
                                                 "' failed on a piece of " + std::to_string(len) +
                                                 " characters: " + m);
                    }
                    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
                    const size_t s = ov[0], e = ov[1];
                    if (s > last_end) next.push_back(s - last_end);  // unmatched gap: its own word
                    if (e > s) next.push_back(e - s);
                    last_end = std::max(last_end, e);
                    pos = e > s ? e : s + 1;
                }
                if (last_end < len) next.push_back(len - last_end);
                start += len;
            }
        } catch (...) {
            pcre2_match_data_free(md);
            throw;
        }
        pcre2_match_data_free(md);
        pieces.swap(next);
    }

    std::vector<std::string> words;
    words.reserve(pieces.size());
    size_t start = 0;
    std::string utf8;
    for (const size_t len : pieces) {
        utf8.clear();
        for (size_t i = start; i < start + len; ++i) utf8_append_codepoint(cpts[i], utf8);
        std::string word;
        append_byte_encoded(utf8, word);
        words.push_back(std::move(word));
        start += len;
    }
    return words;
}

}  // namespace wb::tokenizer
