// HParams::from_gguf: reads llama.cpp's `<arch>.*` keys (llama.cpp
// src/llama-model.cpp load_hparams, src/llama-arch.cpp LLM_KV names) and
// applies the same defaults for absent optional keys.

#include "model/hparams.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gguf/gguf.h"

namespace wb::model {

namespace {

/// RoPE pairing per architecture, as llama.cpp's llama_model_rope_type()
/// assigns it. Only "llama" is loadable today; the others are listed so the
/// mode is right the day their graphs are added.
///
/// | architectures                                               | mode   |
/// |-------------------------------------------------------------|--------|
/// | llama, baichuan, internlm2, minicpm, deepseek, deepseek2,   | Normal |
/// | command-r, granite, xverse, orion, arctic, chatglm          |        |
/// | falcon, gptneox, phi2, phi3, qwen, qwen2, qwen2moe, qwen3,  | NeoX   |
/// | stablelm, gemma, gemma2, gemma3, starcoder2, olmo2, dbrx,   |        |
/// | openelm, codeshell, nemotron, exaone, plamo, nomic-bert     |        |
struct ArchRope {
    std::string_view arch;
    RopeMode mode;
};

constexpr ArchRope kArchRope[] = {
    {"llama", RopeMode::Normal},     {"baichuan", RopeMode::Normal},
    {"internlm2", RopeMode::Normal}, {"minicpm", RopeMode::Normal},
    {"deepseek", RopeMode::Normal},  {"deepseek2", RopeMode::Normal},
    {"command-r", RopeMode::Normal}, {"granite", RopeMode::Normal},
    {"xverse", RopeMode::Normal},    {"orion", RopeMode::Normal},
    {"arctic", RopeMode::Normal},    {"chatglm", RopeMode::Normal},
    {"falcon", RopeMode::NeoX},      {"gptneox", RopeMode::NeoX},
    {"phi2", RopeMode::NeoX},        {"phi3", RopeMode::NeoX},
    {"qwen", RopeMode::NeoX},        {"qwen2", RopeMode::NeoX},
    {"qwen2moe", RopeMode::NeoX},    {"qwen3", RopeMode::NeoX},
    {"stablelm", RopeMode::NeoX},    {"gemma", RopeMode::NeoX},
    {"gemma2", RopeMode::NeoX},      {"gemma3", RopeMode::NeoX},
    {"starcoder2", RopeMode::NeoX},  {"olmo2", RopeMode::NeoX},
    {"dbrx", RopeMode::NeoX},        {"openelm", RopeMode::NeoX},
    {"codeshell", RopeMode::NeoX},   {"nemotron", RopeMode::NeoX},
    {"exaone", RopeMode::NeoX},      {"plamo", RopeMode::NeoX},
    {"nomic-bert", RopeMode::NeoX},
};

/// Architectures whose forward pass this engine implements.
constexpr std::string_view kLoadable[] = {"llama"};

[[noreturn]] void bad_key(const gguf::File& f, const std::string& key, const std::string& problem) {
    throw gguf::Error(f.path(), std::nullopt, "metadata key '" + key + "'", problem);
}

/// A positive uint32 key; `fallback` when absent (nullopt = required).
uint32_t read_u32(const gguf::File& f, const std::string& key, std::optional<uint32_t> fallback) {
    std::optional<int64_t> v = f.get_int(key);
    if (!v) {
        if (!fallback) bad_key(f, key, "missing (required for this architecture)");
        return *fallback;
    }
    if (*v <= 0 || *v > int64_t{UINT32_MAX}) {
        bad_key(f, key, "value " + std::to_string(*v) + " is not a positive 32-bit count");
    }
    return static_cast<uint32_t>(*v);
}

}  // namespace

HParams HParams::from_gguf(const gguf::File& f) {
    HParams hp;
    std::optional<std::string> arch = f.get_string("general.architecture");
    if (!arch || arch->empty()) bad_key(f, "general.architecture", "missing");
    hp.arch = *arch;
    bool loadable = false;
    for (std::string_view a : kLoadable) loadable = loadable || a == hp.arch;
    if (!loadable) {
        throw std::runtime_error(f.path() + ": unsupported architecture " + hp.arch +
                                 " (supported: llama)");
    }
    for (const ArchRope& ar : kArchRope) {
        if (ar.arch == hp.arch) hp.rope_mode = ar.mode;
    }
    hp.name = f.get_string("general.name").value_or("");

    const std::string p = hp.arch + ".";
    hp.n_ctx_train = read_u32(f, p + "context_length", std::nullopt);
    hp.n_embd = read_u32(f, p + "embedding_length", std::nullopt);
    hp.n_layer = read_u32(f, p + "block_count", std::nullopt);
    hp.n_ff = read_u32(f, p + "feed_forward_length", std::nullopt);
    hp.n_head = read_u32(f, p + "attention.head_count", std::nullopt);
    // llama.cpp: n_head_kv defaults to n_head (no GQA), head size to
    // n_embd / n_head, n_rot to the head size.
    hp.n_head_kv = read_u32(f, p + "attention.head_count_kv", hp.n_head);
    if (hp.n_embd % hp.n_head != 0) {
        bad_key(f, p + "attention.head_count",
                std::to_string(hp.n_head) + " does not divide embedding_length " +
                    std::to_string(hp.n_embd));
    }
    hp.head_dim = read_u32(f, p + "attention.key_length", hp.n_embd / hp.n_head);
    // In 64 bits: a uint32 product wraps, and key_length 2147483649 with
    // head_count 2 would then "equal" embedding_length 2.
    if (uint64_t{hp.head_dim} * hp.n_head != hp.n_embd) {
        bad_key(f, p + "attention.key_length",
                std::to_string(hp.head_dim) + " * head_count " + std::to_string(hp.n_head) +
                    " != embedding_length " + std::to_string(hp.n_embd));
    }
    if (std::optional<int64_t> vl = f.get_int(p + "attention.value_length");
        vl && *vl != int64_t{hp.head_dim}) {
        bad_key(f, p + "attention.value_length",
                std::to_string(*vl) + " differs from the key length " +
                    std::to_string(hp.head_dim) + " (not supported)");
    }
    if (hp.n_head % hp.n_head_kv != 0) {
        bad_key(f, p + "attention.head_count_kv",
                std::to_string(hp.n_head_kv) + " does not divide head_count " +
                    std::to_string(hp.n_head));
    }
    hp.n_rot = read_u32(f, p + "rope.dimension_count", hp.head_dim);
    if (hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0) {
        bad_key(f, p + "rope.dimension_count",
                std::to_string(hp.n_rot) + " must be even and <= head size " +
                    std::to_string(hp.head_dim));
    }
    // llama.cpp requires the RMS epsilon for llama; the rope base is optional.
    std::optional<double> eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
    if (!eps) bad_key(f, p + "attention.layer_norm_rms_epsilon", "missing");
    if (!(*eps > 0.0 && *eps < 1.0)) {
        bad_key(f, p + "attention.layer_norm_rms_epsilon",
                "value " + std::to_string(*eps) + " is not in (0, 1)");
    }
    hp.rms_eps = static_cast<float>(*eps);
    if (std::optional<double> base = f.get_float(p + "rope.freq_base")) {
        if (!(*base > 0.0)) bad_key(f, p + "rope.freq_base", "must be positive");
        hp.rope_freq_base = static_cast<float>(*base);
    }

    // Vocabulary size: rows of the embedding matrix; a vocab-only file (no
    // tensors) falls back to the tokenizer's token list.
    if (const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight")) {
        if (emb->ne[0] != hp.n_embd) {
            throw gguf::Error(f.path(), emb->info_offset, "tensor 'token_embd.weight'",
                              "row length " + std::to_string(emb->ne[0]) + " != embedding_length " +
                                  std::to_string(hp.n_embd));
        }
        if (emb->ne[1] == 0 || emb->ne[1] > UINT32_MAX) {
            throw gguf::Error(f.path(), emb->info_offset, "tensor 'token_embd.weight'",
                              "bad vocabulary size " + std::to_string(emb->ne[1]));
        }
        hp.n_vocab = static_cast<uint32_t>(emb->ne[1]);
    } else if (const gguf::Value* toks =
                   f.get_array("tokenizer.ggml.tokens", gguf::ValueType::String)) {
        hp.n_vocab = static_cast<uint32_t>(toks->array_size());
    }
    if (hp.n_vocab == 0) {
        throw gguf::Error(f.path(), std::nullopt, "tensor 'token_embd.weight'",
                          "missing, and no tokenizer.ggml.tokens to size the vocabulary");
    }
    hp.tied_embeddings = f.find_tensor("output.weight") == nullptr;
    return hp;
}

}  // namespace wb::model
