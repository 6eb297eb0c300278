#include "quant/synth_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "ggml/types.h"
#include "gguf/value.h"
#include "gguf/writer.h"
#include "quant/mix_rules.h"

namespace wb::quant {

namespace {

// ggml's GGML_QNT_VERSION, as quantize_file writes it.
constexpr uint32_t kQuantizationVersion = 2;

struct Alias {
    const char* alias;
    const char* name;
};
// Short names people type (and the memory planner's "7B"/"8B").
constexpr Alias kAliases[] = {
    {"tinyllama", "tinyllama-1.1b"}, {"7b", "llama2-7b"},      {"llama2", "llama2-7b"},
    {"mistral", "mistral-7b"},       {"8b", "llama3-8b"},      {"llama3", "llama3-8b"},
    {"qwen2.5", "qwen2.5-0.5b"},     {"0.5b", "qwen2.5-0.5b"}, {"1.5b", "qwen2.5-1.5b"},
};

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// splitmix64 (Steele, Lea, Flood 2014): a counter-based generator, so any
// row's values follow from (seed, tensor, row) alone and threads need no
// shared state.
uint64_t splitmix64(uint64_t& x) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// `n` values with mean 0 and standard deviation `std`: the sum of four
// uniforms (Irwin-Hall, close enough to normal for weights whose only job
// is to have realistic magnitudes), cheap enough for billions of weights.
void fill_row(uint64_t seed, uint64_t tensor, uint64_t row, float std, float* out, uint64_t n) {
    uint64_t state = seed ^ (tensor * 0xD1B54A32D192ED03ull) ^ (row * 0x8CB92BA72F3D8DD7ull);
    splitmix64(state);
    constexpr float kInv = 1.0f / 65536.0f;
    // Sum of 4 U(0,1) has variance 4/12; scale to `std`.
    const float scale = std * std::sqrt(3.0f);
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t r = splitmix64(state);
        float s = 0.0f;
        for (int k = 0; k < 4; ++k) s += static_cast<float>((r >> (16 * k)) & 0xFFFF) * kInv;
        out[i] = (s - 2.0f) * scale;
    }
}

struct SynthTensor {
    std::string name;
    uint32_t n_dims = 1;
    uint64_t ne0 = 0, ne1 = 1;
    enum class Fill { Random, Ones, SmallRandom } fill = Fill::Random;
};

std::vector<SynthTensor> tensor_list(const SynthShape& s) {
    const uint64_t head_dim = s.n_embd / s.n_head;
    const uint64_t q_dim = head_dim * s.n_head, kv_dim = head_dim * s.n_head_kv;
    using F = SynthTensor::Fill;
    std::vector<SynthTensor> t;
    t.push_back({"token_embd.weight", 2, s.n_embd, s.n_vocab, F::Random});
    t.push_back({"output_norm.weight", 1, s.n_embd, 1, F::Ones});
    if (!s.tied) t.push_back({"output.weight", 2, s.n_embd, s.n_vocab, F::Random});
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        t.push_back({p + "attn_norm.weight", 1, s.n_embd, 1, F::Ones});
        t.push_back({p + "attn_q.weight", 2, s.n_embd, q_dim, F::Random});
        t.push_back({p + "attn_k.weight", 2, s.n_embd, kv_dim, F::Random});
        t.push_back({p + "attn_v.weight", 2, s.n_embd, kv_dim, F::Random});
        if (s.qkv_bias) {
            t.push_back({p + "attn_q.bias", 1, q_dim, 1, F::SmallRandom});
            t.push_back({p + "attn_k.bias", 1, kv_dim, 1, F::SmallRandom});
            t.push_back({p + "attn_v.bias", 1, kv_dim, 1, F::SmallRandom});
        }
        t.push_back({p + "attn_output.weight", 2, q_dim, s.n_embd, F::Random});
        t.push_back({p + "ffn_norm.weight", 1, s.n_embd, 1, F::Ones});
        t.push_back({p + "ffn_gate.weight", 2, s.n_embd, s.n_ff, F::Random});
        t.push_back({p + "ffn_up.weight", 2, s.n_embd, s.n_ff, F::Random});
        t.push_back({p + "ffn_down.weight", 2, s.n_ff, s.n_embd, F::Random});
    }
    return t;
}

// A SentencePiece vocabulary llama.cpp's loader accepts: <unk> <s> </s>,
// the 256 byte tokens <0x00>..<0xFF>, then placeholder pieces.
void set_vocab(gguf::Writer& w, uint32_t n_vocab) {
    gguf::Value tokens, scores, types;
    tokens.type = scores.type = types.type = gguf::ValueType::Array;
    tokens.array_type = gguf::ValueType::String;
    scores.array_type = gguf::ValueType::Float32;
    types.array_type = gguf::ValueType::Int32;
    // llama.cpp's llama_token_type: 1 normal, 2 unknown, 3 control, 6 byte.
    for (uint32_t i = 0; i < n_vocab; ++i) {
        std::string piece;
        int64_t type = 1;
        if (i == 0) {
            piece = "<unk>", type = 2;
        } else if (i == 1) {
            piece = "<s>", type = 3;
        } else if (i == 2) {
            piece = "</s>", type = 3;
        } else if (i < 3 + 256) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "<0x%02X>", i - 3);
            piece = hex, type = 6;
        } else {
            piece = "\xE2\x96\x81t" + std::to_string(i);  // "▁t<i>"
        }
        tokens.array_str.push_back(std::move(piece));
        scores.array_f.push_back(-static_cast<double>(i));
        types.array_i.push_back(type);
    }
    w.set_kv("tokenizer.ggml.model", gguf::make_string("llama"));
    w.set_kv("tokenizer.ggml.tokens", std::move(tokens));
    w.set_kv("tokenizer.ggml.scores", std::move(scores));
    w.set_kv("tokenizer.ggml.token_type", std::move(types));
    w.set_kv("tokenizer.ggml.bos_token_id", gguf::make_u32(1));
    w.set_kv("tokenizer.ggml.eos_token_id", gguf::make_u32(2));
    w.set_kv("tokenizer.ggml.unknown_token_id", gguf::make_u32(0));
}

gguf::Value f32_value(float v) {
    gguf::Value x;
    x.type = gguf::ValueType::Float32;
    x.f = v;
    return x;
}

}  // namespace

const std::vector<SynthShape>& synth_shapes() {
    // Published configurations (each model's config.json): vocab, n_embd,
    // layers, heads, KV heads, n_ff, context, RMS epsilon, RoPE base.
    static const std::vector<SynthShape> shapes = {
        {"qwen2.5-0.5b", "Qwen2.5-0.5B", "qwen2", 151936, 896, 24, 14, 2, 4864, 32768, 1e-6f, 1e6f,
         true, true},
        {"tinyllama-1.1b", "TinyLlama-1.1B", "llama", 32000, 2048, 22, 32, 4, 5632, 2048, 1e-5f,
         1e4f, false, false},
        {"qwen2.5-1.5b", "Qwen2.5-1.5B", "qwen2", 151936, 1536, 28, 12, 2, 8960, 32768, 1e-6f, 1e6f,
         true, true},
        {"llama2-7b", "Llama-2-7B", "llama", 32000, 4096, 32, 32, 32, 11008, 4096, 1e-5f, 1e4f,
         false, false},
        {"mistral-7b", "Mistral-7B-v0.1", "llama", 32000, 4096, 32, 32, 8, 14336, 32768, 1e-5f,
         1e4f, false, false},
        {"llama3-8b", "Llama-3-8B", "llama", 128256, 4096, 32, 32, 8, 14336, 8192, 1e-5f, 5e5f,
         false, false},
    };
    return shapes;
}

const SynthShape* find_synth_shape(const std::string& name) {
    std::string n = lower(name);
    for (const Alias& a : kAliases)
        if (n == a.alias) n = a.name;
    for (const SynthShape& s : synth_shapes())
        if (s.name == n) return &s;
    return nullptr;
}

std::string synth_shape_names() {
    std::string s;
    for (const SynthShape& x : synth_shapes()) s += (s.empty() ? "" : ", ") + x.name;
    return s;
}

QuantizeReport synth_model(const SynthShape& s, Target target, const std::string& out_path,
                           const QuantizeProgress& progress, const SynthOptions& options) {
    if (!s.n_vocab || !s.n_embd || !s.n_layer || !s.n_head || !s.n_head_kv || !s.n_ff ||
        s.n_embd % s.n_head != 0 || s.n_head % s.n_head_kv != 0) {
        throw std::invalid_argument("synth: shape '" + s.name +
                                    "': sizes must be positive, n_head must divide n_embd and "
                                    "n_head_kv must divide n_head");
    }
    const std::vector<SynthTensor> list = tensor_list(s);
    // The mix rules count tensors in llama-quantize's order; write in it too.
    std::vector<std::string> names;
    for (const SynthTensor& t : list) names.push_back(t.name);
    names = llama_quantize_order(std::move(names));
    std::vector<const SynthTensor*> order;
    std::vector<MixTensor> mix;
    const uint32_t f32 = static_cast<uint32_t>(ggml::Type::F32);
    for (const std::string& n : names) {
        const auto it = std::find_if(list.begin(), list.end(),
                                     [&](const SynthTensor& t) { return t.name == n; });
        order.push_back(&*it);
        mix.push_back({it->name, f32, it->n_dims, it->ne0});
    }
    MixModel mm;
    mm.arch = s.arch;
    mm.n_layer = s.n_layer;
    mm.n_head = s.n_head;
    mm.n_head_kv = s.n_head_kv;
    const std::vector<MixChoice> choice = choose_types(mm, mix, target);

    gguf::Writer w(out_path);
    const std::string a = s.arch + ".";
    w.set_kv("general.architecture", gguf::make_string(s.arch));
    w.set_kv("general.name", gguf::make_string(s.like + " shape, random weights"));
    w.set_kv(a + "context_length", gguf::make_u32(s.n_ctx_train));
    w.set_kv(a + "embedding_length", gguf::make_u32(s.n_embd));
    w.set_kv(a + "block_count", gguf::make_u32(s.n_layer));
    w.set_kv(a + "feed_forward_length", gguf::make_u32(s.n_ff));
    w.set_kv(a + "attention.head_count", gguf::make_u32(s.n_head));
    w.set_kv(a + "attention.head_count_kv", gguf::make_u32(s.n_head_kv));
    w.set_kv(a + "attention.layer_norm_rms_epsilon", f32_value(s.rms_eps));
    w.set_kv(a + "rope.freq_base", f32_value(s.rope_base));
    w.set_kv(a + "rope.dimension_count", gguf::make_u32(s.n_embd / s.n_head));
    w.set_kv("general.quantization_version", gguf::make_u32(kQuantizationVersion));
    w.set_kv("general.file_type", gguf::make_u32(file_type_of(target)));
    set_vocab(w, s.n_vocab);

    QuantizeReport report;
    report.target = target;
    for (size_t i = 0; i < order.size(); ++i) {
        const SynthTensor& t = *order[i];
        TensorPlan p;
        p.name = t.name;
        p.src_type = f32;
        p.dst_type = choice[i].type;
        p.shape = t.n_dims == 1 ? "[" + std::to_string(t.ne0) + "]"
                                : "[" + std::to_string(t.ne0) + ", " + std::to_string(t.ne1) + "]";
        p.n_elements = t.ne0 * t.ne1;
        p.src_bytes = 4 * p.n_elements;
        p.note = choice[i].reason;
        p.dst_bytes = w.add_tensor(t.name, p.dst_type, t.n_dims, {t.ne0, t.ne1, 1, 1});
        report.tensors.push_back(std::move(p));
    }
    w.write_header();

    unsigned n_threads = options.threads ? options.threads : std::thread::hardware_concurrency();
    n_threads = std::max(1u, std::min(n_threads, 64u));
    constexpr uint64_t kChunkRows = 256;  // rows converted between writes
    std::vector<uint8_t> chunk;
    for (size_t i = 0; i < order.size(); ++i) {
        const SynthTensor& t = *order[i];
        const TensorPlan& p = report.tensors[i];
        if (progress) progress(i, order.size(), p);
        const uint64_t row_bytes = ggml::row_bytes(p.dst_type, t.ne0);
        // Index in the shape's own list (not the output order), so the
        // values do not depend on the write order.
        const uint64_t tensor_id = static_cast<uint64_t>(&t - list.data());
        const float std = t.fill == SynthTensor::Fill::Random ? options.weight_std : 0.02f;
        for (uint64_t r0 = 0; r0 < t.ne1; r0 += kChunkRows) {
            const uint64_t rows = std::min(kChunkRows, t.ne1 - r0);
            chunk.resize(rows * row_bytes);
            auto convert = [&](uint64_t first, uint64_t last) {
                std::vector<float> row(t.ne0);
                for (uint64_t r = first; r < last; ++r) {
                    if (t.fill == SynthTensor::Fill::Ones)
                        std::fill(row.begin(), row.end(), 1.0f);
                    else
                        fill_row(options.seed, tensor_id, r0 + r, std, row.data(), t.ne0);
                    ggml::quantize_row(p.dst_type, row.data(), chunk.data() + r * row_bytes, t.ne0,
                                       t.name);
                }
            };
            std::vector<std::exception_ptr> errors(n_threads);
            auto work = [&](unsigned k, uint64_t first, uint64_t last) noexcept {
                try {
                    convert(first, last);
                } catch (...) {
                    errors[k] = std::current_exception();
                }
            };
            const unsigned n = static_cast<unsigned>(std::min<uint64_t>(n_threads, rows));
            if (n <= 1) {
                convert(0, rows);
            } else {
                std::vector<std::thread> pool;
                for (unsigned k = 0; k < n; ++k)
                    pool.emplace_back(work, k, rows * k / n, rows * (k + 1) / n);
                for (std::thread& th : pool) th.join();
                for (const std::exception_ptr& e : errors)
                    if (e) std::rethrow_exception(e);
            }
            w.write_tensor_data(chunk.data(), chunk.size());
        }
    }
    w.finish();
    report.output_bytes = std::filesystem::file_size(out_path);
    return report;
}

}  // namespace wb::quant
