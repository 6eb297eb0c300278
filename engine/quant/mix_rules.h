#pragma once
// Which tensor type each tensor of a model gets for a target file type:
// llama.cpp's rules (src/llama-quant.cpp: tensor_allows_quantization,
// llama_tensor_get_type_impl, tensor_type_fallback), so that our Q4_K_M
// file holds the same type for every tensor as llama-quantize's (no
// importance matrix, no overrides). In short:
//  - only matrices whose name ends in "weight" (not norms, not MoE gates,
//    not position embeddings) are quantized; others are kept as stored;
//  - output.weight (or token_embd.weight when the embeddings are tied) gets
//    Q6_K unless the target is Q8_0 (Q8_0 when its rows do not split into
//    the target's blocks);
//  - attn_v (and fused attn_qkv), ffn_down and attn_output get more bits in
//    the K mixes: Q4_K_M / Q5_K_M give Q6_K to the layers use_more_bits
//    picks (the first and last eighth and every third in between), Q3_K_M
//    gives attn_v Q5_K for its first two and Q4_K after, Q2_K gives attn_v
//    Q3_K (Q4_K with 4 or more query heads per KV head), and so on;
//  - a type whose block does not divide the row length falls back: Q2_K
//    and Q3_K to Q4_0, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, then F16
//    if even 32 does not divide. (llama-quantize refuses a Q8_0/Q4_0/...
//    target on such rows; we write F16 and say so.)
// The rules count tensors in output order (llama_quantize_order), as
// llama.cpp counts them in its weight map order.

#include <cstdint>
#include <string>
#include <vector>

#include "quant/file_types.h"

namespace wb::gguf {
class File;
}

namespace wb::quant {

/// The model facts the rules read (from GGUF metadata).
struct MixModel {
    std::string arch;        ///< general.architecture
    uint32_t n_layer = 0;    ///< <arch>.block_count
    uint32_t n_head = 0;     ///< <arch>.attention.head_count (0 if absent or per-layer)
    uint32_t n_head_kv = 0;  ///< <arch>.attention.head_count_kv (n_head if absent)
    uint32_t n_expert = 0;   ///< <arch>.expert_count (0 if absent)
    /// Reads the facts above from `f`. Never throws for absent keys; throws
    /// gguf::Error for a key of the wrong type.
    static MixModel from_gguf(const gguf::File& f);
    /// n_head / n_head_kv (llama.cpp's n_gqa()), 0 when unknown.
    uint32_t n_gqa() const { return n_head && n_head_kv ? n_head / n_head_kv : 0; }
};

/// One tensor in output order: its name, ggml type, dims and row length.
struct MixTensor {
    std::string name;
    uint32_t type = 0;
    uint32_t n_dims = 0;
    uint64_t ne0 = 0;
};

/// The type chosen for one tensor and why it is not the target's default.
struct MixChoice {
    uint32_t type = 0;
    bool quantize = false;  ///< false: kept as stored (not a quantizable weight)
    std::string reason;     ///< "" when type is the default; else the rule
};

/// Types for `tensors` (in output order) for `target`. Pure function of its
/// inputs (the rules' counters run over the list). `pure` is llama-quantize
/// --pure: no mix rules, every quantizable tensor at the target's type (the
/// row-length fallbacks still apply).
std::vector<MixChoice> choose_types(const MixModel& model, const std::vector<MixTensor>& tensors,
                                    Target target, bool pure = false);

}  // namespace wb::quant
