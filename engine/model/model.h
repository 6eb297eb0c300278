#pragma once
// The forward pass as an interface with two implementations: the CPU
// reference (engine/model/cpu_model.*, plain float math, the ground truth for
// every shader) and the Vulkan engine (engine/model/vk_model*), both running
// the architecture's graph (engine/model/arch/).

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/batch.h"
#include "model/hparams.h"

namespace wb::model {

/// Element type of the KV cache. F16 matches llama.cpp's default (and its
/// golden `top10`); F32 is exact (golden `top10_f32_kv`).
enum class KvType { F32, F16 };

/// Per-context settings.
struct ContextParams {
    uint32_t n_ctx = 2048;   ///< KV-cache cells shared by all sequences (tokens)
    uint32_t n_seq_max = 1;  ///< sequences that may live in the cache at once
    KvType kv_type = KvType::F32;
};

/// Thrown by decode() when the batch cannot be placed: not enough free KV
/// cells, a position that is not the next one of its sequence, a token id
/// outside the vocabulary, or a sequence id >= n_seq_max. The cache is left
/// as it was before the call.
class DecodeError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// A loaded model plus its KV cache.
class Model {
  public:
    virtual ~Model() = default;

    virtual const HParams& hparams() const = 0;
    virtual const ContextParams& context() const = 0;
    /// "cpu" or the Vulkan device name.
    virtual std::string backend_name() const = 0;

    /// Runs one forward pass over `batch`, appends its tokens' K/V to the
    /// cache, and writes the logits of the rows with output[i] == 1 into
    /// `logits` as [n_outputs, n_vocab] row-major, in batch order. Causal
    /// attention: a token sees the cached tokens of its own sequence with
    /// pos <= its own pos (including earlier tokens of the same batch).
    /// Throws DecodeError (see above); the cache is unchanged then.
    virtual void decode(const Batch& batch, std::vector<float>& logits) = 0;

    /// Forgets every KV cell of `seq_id` (the slot can be reused at pos 0).
    virtual void seq_rm(int32_t seq_id) = 0;

    /// KV cells not used by any sequence.
    virtual uint32_t n_free_cells() const = 0;
};

}  // namespace wb::model
