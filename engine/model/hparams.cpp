// HParams::from_gguf: reads llama.cpp's common `<arch>.*` keys (llama.cpp
// src/llama-model.cpp load_hparams, src/llama-arch.cpp LLM_KV names) with
// the same defaults for absent optional keys, refuses options the engine
// does not implement, then lets the architecture's spec read its own keys.

#include "model/hparams.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "errors/errors.h"
#include "gguf/gguf.h"
#include "model/arch/arch.h"

namespace wb::model {

namespace {

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

[[noreturn]] void refuse(const gguf::File& f, const std::string& key, const std::string& what) {
    const gguf::Value* v = f.find(key);
    throw UnsupportedModel(
        f.path() + ": metadata key '" + key + "' = " + (v ? v->to_display() : std::string("?")) +
            ": " + what + " is not supported (supported architectures: " + supported_arch_list() +
            ")",
        "architecture option", "metadata key '" + key + "'");
}

/// Options of otherwise supported architectures that change the forward
/// pass in ways this engine does not implement: refused by key and value
/// rather than run wrong.
void refuse_unsupported_options(const gguf::File& f, const std::string& p) {
    if (f.get_int(p + "expert_count").value_or(0) > 0)
        refuse(f, p + "expert_count", "mixture of experts");
    if (f.find(p + "attention.kv_lora_rank") || f.find(p + "attention.q_lora_rank")) {
        refuse(f,
               f.find(p + "attention.kv_lora_rank") ? p + "attention.kv_lora_rank"
                                                    : p + "attention.q_lora_rank",
               "multi-head latent attention (MLA)");
    }
    for (const char* k : {"ssm.conv_kernel", "ssm.state_size", "ssm.inner_size", "wkv.head_size"}) {
        if (f.find(p + k)) refuse(f, p + k, "a recurrent (state-space / RWKV) layer");
    }
    if (std::optional<double> alibi = f.get_float(p + "attention.max_alibi_bias");
        alibi && *alibi > 0)
        refuse(f, p + "attention.max_alibi_bias", "ALiBi position bias");
    if (std::optional<bool> causal = f.get_bool(p + "attention.causal"); causal && !*causal)
        refuse(f, p + "attention.causal", "non-causal (encoder) attention");
    if (std::optional<std::string> type = f.get_string(p + "rope.scaling.type")) {
        if (*type != "none" && *type != "linear")
            refuse(f, p + "rope.scaling.type", "RoPE scaling '" + *type + "'");
    }
    if (f.find(p + "rope.dimension_sections"))
        refuse(f, p + "rope.dimension_sections", "multimodal RoPE sections");
    if (f.get_int(p + "attention.layer_indices").has_value())  // not a llama.cpp key; defensive
        refuse(f, p + "attention.layer_indices", "per-layer attention selection");
}

}  // namespace

HParams HParams::from_gguf(const gguf::File& f) {
    HParams hp;
    std::optional<std::string> arch = f.get_string("general.architecture");
    if (!arch || arch->empty()) bad_key(f, "general.architecture", "missing");
    hp.arch = *arch;
    const ArchSpec* spec = find_arch(hp.arch);
    if (!spec) {
        throw UnsupportedModel(f.path() + ": unsupported architecture '" + hp.arch +
                                   "' (general.architecture); supported: " + supported_arch_list(),
                               "architecture", "general.architecture");
    }
    hp.rope_mode = spec->rope_mode;
    hp.name = f.get_string("general.name").value_or("");

    const std::string p = hp.arch + ".";
    refuse_unsupported_options(f, p);
    hp.n_ctx_train = read_u32(f, p + "context_length", std::nullopt);
    hp.n_embd = read_u32(f, p + "embedding_length", std::nullopt);
    hp.n_layer = read_u32(f, p + "block_count", std::nullopt);
    hp.n_ff = read_u32(f, p + "feed_forward_length", std::nullopt);
    hp.n_head = read_u32(f, p + "attention.head_count", std::nullopt);
    // llama.cpp: n_head_kv defaults to n_head (no GQA), head size to
    // n_embd / n_head, n_rot to the head size.
    hp.n_head_kv = read_u32(f, p + "attention.head_count_kv", hp.n_head);
    if (!f.find(p + "attention.key_length") && hp.n_embd % hp.n_head != 0) {
        bad_key(f, p + "attention.head_count",
                std::to_string(hp.n_head) + " does not divide embedding_length " +
                    std::to_string(hp.n_embd) + " and attention.key_length is absent");
    }
    hp.head_dim = read_u32(f, p + "attention.key_length", hp.n_embd / hp.n_head);
    // In 64 bits: a uint32 product wraps (key_length 2147483649 with
    // head_count 2 would give a small "q_dim").
    if (uint64_t{hp.head_dim} * hp.n_head > (uint64_t{1} << 24)) {
        bad_key(f, p + "attention.key_length",
                std::to_string(hp.head_dim) + " * head_count " + std::to_string(hp.n_head) +
                    " is implausibly large");
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
    // llama.cpp requires the RMS epsilon for these architectures; the rope base is optional.
    std::optional<double> eps = f.get_float(p + "attention.layer_norm_rms_epsilon");
    if (!eps) bad_key(f, p + "attention.layer_norm_rms_epsilon", "missing");
    if (!(*eps > 0.0 && *eps < 1.0)) {
        bad_key(f, p + "attention.layer_norm_rms_epsilon",
                "value " + std::to_string(*eps) + " is not in (0, 1)");
    }
    hp.rms_eps = static_cast<float>(*eps);
    if (std::optional<double> base = f.get_float(p + "rope.freq_base")) {
        if (!(*base > 0.0 && std::isfinite(*base)))
            bad_key(f, p + "rope.freq_base", "must be positive");
        hp.rope_freq_base = static_cast<float>(*base);
    }
    hp.rope.freq_base = hp.rope_freq_base;
    // Linear scaling (llama.cpp: rope.scaling.factor, else the older
    // rope.scale_linear; freq_scale = 1 / factor, 1 when absent or 0).
    std::optional<double> factor = f.get_float(p + "rope.scaling.factor");
    if (!factor) factor = f.get_float(p + "rope.scale_linear");
    if (factor && *factor != 0.0) {
        if (!(*factor > 0.0 && std::isfinite(*factor)))
            bad_key(f, p + "rope.scaling.factor", "must be positive");
        hp.rope.freq_scale = static_cast<float>(1.0 / *factor);
    }
    // Sliding-window layers use the same RoPE unless the spec says otherwise.
    hp.rope_swa = hp.rope;
    hp.attn_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hp.head_dim)));
    hp.swa_layers.assign(hp.n_layer <= (1u << 20) ? hp.n_layer : 0, 0);

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
    // The one vocabulary check every surface goes through (generate, batch,
    // bench, compare, the app): a token list of another length than the
    // embedding means sampled ids without text (shorter) or prompt ids
    // without an embedding row (longer). llama.cpp refuses it at load too.
    if (const gguf::Value* toks = f.find("tokenizer.ggml.tokens");
        toks && toks->type == gguf::ValueType::Array && toks->array_size() != hp.n_vocab) {
        throw gguf::Error(f.path(), std::nullopt, "metadata key 'tokenizer.ggml.tokens'",
                          "the tokenizer has " + std::to_string(toks->array_size()) +
                              " tokens but token_embd.weight has " + std::to_string(hp.n_vocab) +
                              " rows; the two must match (a broken or mismatched file)");
    }
    hp.tied_embeddings = f.find_tensor("output.weight") == nullptr;
    spec->read_hparams(f, hp);
    return hp;
}

}  // namespace wb::model
