#pragma once
// The tensors a llama GGUF must hold (names as llama.cpp's LLM_TENSOR_NAMES
// for LLM_ARCH_LLAMA) with the shapes the hyperparameters imply. Checked
// once by load_model before any backend allocates memory, so a file without
// weights, or with a misshapen or uncomputable tensor, fails with the same
// clear message on every backend.

#include <cstdint>
#include <string>
#include <vector>

#include "model/hparams.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

/// One required tensor: name and shape in ggml order ([ne0, ne1], ne1 = 1
/// for vectors; ne0 = input dimension of a weight matrix).
struct TensorSpec {
    std::string name;
    uint64_t ne0 = 0;
    uint64_t ne1 = 1;
};

/// Every tensor a llama model needs: token_embd [n_embd, n_vocab],
/// output_norm [n_embd], output [n_embd, n_vocab] unless tied, and per
/// block attn_norm, attn_q [n_embd, n_embd], attn_k/attn_v [n_embd,
/// n_head_kv * head_dim], attn_output [n_embd, n_embd], ffn_norm,
/// ffn_gate/ffn_up [n_embd, n_ff], ffn_down [n_ff, n_embd].
std::vector<TensorSpec> llama_tensor_specs(const HParams& hp);

/// Throws gguf::Error naming the file and `<arch>.block_count` when the file
/// holds fewer tensors than block_count implies (checked before the spec
/// list is built, so a huge block_count costs nothing), naming the file and
/// tensor when a tensor of llama_tensor_specs(hp) is missing or has another
/// shape, and
/// ggml::UnsupportedType naming the tensor when its type is one the engine
/// cannot compute with (supported: F32, F16, BF16, Q8_0, Q4_0).
void check_llama_tensors(const gguf::File& f, const HParams& hp);

}  // namespace wb::model
