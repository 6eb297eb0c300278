#pragma once
// Random-weight models in the shapes of published ones (TinyLlama-1.1B,
// Llama-2-7B, Mistral-7B, Llama-3-8B, Qwen2.5-0.5B/1.5B), written straight
// in a target file type, so that benchmarks run at real matrix sizes
// without downloading anything. The tensor types follow llama-quantize's
// mix rules (quant/mix_rules.h) exactly as `quantize` would choose them for
// the F32 original, so a synthesized Q4_K_M file has the tensor types,
// sizes and layout of a real Q4_K_M download; only the values are random.
//
// Values: each weight matrix row is filled from a counter-based generator
// (seed, tensor index, row), approximately normal with standard deviation
// `weight_std`, then quantized with ggml's reference quantizer; norm
// weights are 1, biases small random. The same seed gives the same file
// whatever the thread count. The vocabulary is a placeholder SentencePiece
// one of n_vocab tokens (<unk>, <s>, </s>, the 256 byte tokens, then
// "▁t<N>"), enough for the tokenizer to load and for generation and
// benchmarks to run; the text it produces is meaningless.

#include <cstdint>
#include <string>
#include <vector>

#include "quant/file_types.h"
#include "quant/quantize_model.h"

namespace wb::quant {

/// The hyperparameters of one published model (its config.json).
struct SynthShape {
    std::string name;  ///< what --shape takes: "tinyllama-1.1b"
    std::string like;  ///< the model it copies: "TinyLlama-1.1B"
    std::string arch;  ///< general.architecture: "llama" or "qwen2"
    uint32_t n_vocab = 0, n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0;
    uint32_t n_ctx_train = 0;  ///< <arch>.context_length
    float rms_eps = 1e-5f;     ///< <arch>.attention.layer_norm_rms_epsilon
    float rope_base = 1e4f;    ///< <arch>.rope.freq_base
    bool tied = false;         ///< no output.weight: the logits use token_embd
    bool qkv_bias = false;     ///< attn_q/k/v.bias (qwen2)
};

/// Every known shape, smallest first.
const std::vector<SynthShape>& synth_shapes();
/// The shape called `name` (case-insensitive; also its short aliases such
/// as "tinyllama", "7b", "8b"), or nullptr.
const SynthShape* find_synth_shape(const std::string& name);
/// "tinyllama-1.1b, qwen2.5-0.5b, ..." for messages.
std::string synth_shape_names();

struct SynthOptions {
    uint64_t seed = 1;         ///< same seed, same file
    unsigned threads = 0;      ///< quantizer threads; 0 = hardware concurrency
    float weight_std = 0.02f;  ///< standard deviation of the matrix weights
};

/// Writes a random-weight model of shape `s` in file type `target` to
/// `out_path` (general.file_type set, general.name "<like> shape, random
/// weights"). The returned report lists each tensor's plan (src_type F32,
/// the chosen dst_type and the rule) and output_bytes; input_bytes is 0.
/// `progress` is called before each tensor. Throws std::invalid_argument
/// for a shape whose sizes are zero or whose n_head does not divide n_embd
/// or n_head_kv n_head, gguf::WriteError when the file cannot be written
/// (no partial file is left).
QuantizeReport synth_model(const SynthShape& s, Target target, const std::string& out_path,
                           const QuantizeProgress& progress = {}, const SynthOptions& options = {});

}  // namespace wb::quant
