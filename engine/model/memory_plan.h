#pragma once
// The memory planner's backend-free half: the bytes by purpose a model and
// a context need, computed from the same weight table (ModelDesc) and the
// same graph (its activation buffers) the executors run, so that the plan
// and each executor's own accounting agree; the CPU executor's plan; and
// named shapes (1B ... 70B) with an assumed weight type. The Vulkan
// engine's plan (its buffers, its attention scratch) is
// exec/vk/vk_memory_plan.h.

#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/model_desc.h"

namespace wb::model {

/// Bytes by purpose (on Vulkan, vk::Purpose; on the CPU, host buffers).
struct MemoryNeed {
    uint64_t weights = 0;      ///< weight matrices in their GGUF type + f32 norms and biases
    uint64_t kv_cache = 0;     ///< 2 * n_layer * n_ctx * kv_dim * bytes of the cache type
    uint64_t activations = 0;  ///< the graph's buffers, host inputs, attention scratch
    uint64_t staging = 0;      ///< logits read-back buffer
    uint64_t total() const { return weights + kv_cache + activations + staging; }
};

/// The ubatch the plan sizes activations for.
struct PlanShape {
    uint32_t n_ubatch = 512;  ///< tokens of the largest ubatch
    uint32_t n_outputs = 0;   ///< rows of logits per ubatch; 0 = n_seq_max (one per sequence)
};

/// Host bytes the threaded CPU executor (CpuExecModel, `--backend cpu`)
/// holds for `d` with `ctx`, as its memory_report() counts them: weights =
/// the matrices' bytes in their file types (read in place from the file's
/// mapping, so page cache rather than allocations) plus the vectors as
/// f32; kv_cache = 2 * n_layer * pool cells * kv_row_bytes(kv_type, kv_dim);
/// activations and staging 0 (not counted there either). Throws
/// std::invalid_argument when the KV type does not fit the model's head
/// dimension (kv_type_problem).
MemoryNeed plan_memory_host(const ModelDesc& d, const ContextParams& ctx);

/// Bytes a device buffer asked for `b` bytes takes: rounded up to whole
/// 4-byte words, at least one (vk::Buffer's sizing; shaders read words).
uint64_t buffer_bytes(uint64_t b);

/// Bytes of the activation buffers the graph of `d` asks for with n_tok
/// token rows and n_out output rows (f32), each sized by buffer_bytes.
uint64_t graph_activation_bytes(const ModelDesc& d, uint32_t n_tok, uint32_t n_out);

/// A model of a well-known size: the hyperparameters of Llama 3.2 1B/3B,
/// Llama 2 7B/13B, Llama 3.1 8B/70B. Names: "1B", "3B", "7B", "8B", "13B", "70B".
struct NamedShape {
    std::string name;
    std::string like;  ///< the model it copies, e.g. "Llama 3.1 8B"
    uint32_t n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff;
    bool tied;
};
const std::vector<NamedShape>& named_shapes();
/// The shape called `name` (case-insensitive), or nullptr.
const NamedShape* find_named_shape(const std::string& name);

/// A ModelDesc for a named shape with the tensor types a file of
/// `weight_type` has: a file type as `quantize --type` takes it ("q4_k_m",
/// "q4_0", "q3_k_l", "f16", ...; quant/file_types.h) gets llama-quantize's
/// mix (quant/mix_rules.h: e.g. output.weight Q6_K in a Q4_0 file), or,
/// with `pure` (llama-quantize --pure), that type's base type in every
/// matrix; a ggml type that names no file type ("q4_k", "bf16", "f32")
/// goes to every matrix. Norms stay F32. The tensors have no data: plan
/// only. Throws std::invalid_argument for an unknown type (listing the
/// file types) or a row length a pure type's blocks do not divide.
ModelDesc shape_desc(const NamedShape& s, const std::string& weight_type, bool pure = false);

}  // namespace wb::model
