#pragma once
// The forward pass as an interface with three implementations, one folder
// each: the f32 reference (engine/exec/ref, plain float math, the ground
// truth for every kernel), the threaded CPU executor (engine/exec/cpu) and
// the Vulkan engine (engine/exec/vk), all running the architecture's graph
// (engine/model/arch/). Only the loader (engine/loader) knows all three.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kv/batch.h"
#include "kv/kv_cells.h"  // KvCells, DecodeError
#include "model/device_facts.h"
#include "model/hparams.h"
#include "model/profile.h"

namespace wb::model {

/// Element type of the KV cache. F16 is the default, as in llama.cpp
/// (`-ctk/-ctv f16`, and its golden `top10`): half the memory of F32 for
/// no difference users can see. F32 is exact (golden `top10_f32_kv`).
/// Q8_0 and Q4_0 (llama.cpp's `-ctk/-ctv q8_0|q4_0`) store each head's
/// row in ggml's blocks of 32 (34 and 18 bytes a block: 8.5 and 4.5 bits
/// a value); they need head_dim % 32 == 0. Every backend has all four.
enum class KvType { F32, F16, Q8_0, Q4_0 };

/// "f32" / "f16" / "q8_0" / "q4_0", as --kv-type, the run log and the
/// JSON outputs spell them.
const char* kv_type_name(KvType t);
/// Every KV type, the default (ContextParams{}.kv_type) first, then in
/// the enum's order: what the settings' combo, `--kv-type`'s help and its
/// error list.
std::vector<KvType> kv_types();
/// Parses the names kv_type_name prints; nullopt otherwise.
std::optional<KvType> parse_kv_type(std::string_view name);
/// The ggml type id of a cache element (ggml/types.def: F32 0, F16 1,
/// Q4_0 2, Q8_0 8).
uint32_t kv_ggml_type(KvType t);
/// Bytes of `n` cached values of type `t` (one cell's K or V row when n is
/// kv_dim): 4n, 2n, 34n/32, 18n/32. n must be a multiple of 32 for the
/// block types (std::invalid_argument otherwise).
uint64_t kv_row_bytes(KvType t, uint64_t n);
/// Values per block of `t`: 1 for F32/F16, 32 for Q8_0/Q4_0. A cache of
/// that type needs head_dim to be a multiple of it.
uint32_t kv_block_values(KvType t);
/// Empty when a model of head_dim `head_dim` can cache K/V as `t`, else
/// the reason, for an error a person can act on ("KV cache type q8_0
/// needs a head dimension that is a multiple of 32 ...; this model's is 8").
std::string kv_type_problem(KvType t, uint32_t head_dim);

/// Per-context settings.
struct ContextParams {
    /// Size of the KV pool in tokens, shared by all sequences (rounded up
    /// to whole blocks); also the longest sequence the scheduler runs.
    uint32_t n_ctx = 2048;
    uint32_t n_seq_max = 1;  ///< sequences that may hold KV blocks at once (ids 0..n_seq_max-1)
    KvType kv_type = KvType::F16;
    /// Cells per KV block: the unit of allocation and of prefix-cache reuse.
    uint32_t kv_block_size = KvCells::kDefaultBlockSize;
};

/// Memory a loaded model holds, by purpose, in bytes. On the Vulkan backend
/// these are device allocations (the engine's own accounting); on the CPU
/// reference, host buffers (f32 weights, the KV cache).
struct MemoryReport {
    uint64_t weights = 0;
    uint64_t kv_cache = 0;
    uint64_t activations = 0;
    uint64_t staging = 0;
    bool on_device = false;  ///< device memory (Vulkan) rather than host memory
    /// VK_EXT_memory_budget usage and budget summed over the device-local
    /// heaps; nullopt when the driver does not report them (lavapipe, CPU).
    std::optional<uint64_t> device_usage;
    std::optional<uint64_t> device_budget;
    uint64_t total() const { return weights + kv_cache + activations + staging; }
};

/// Wall-clock time of decode()'s host phases, summed over the calls since
/// clear_profile() while profiling is on, in milliseconds: where a step's
/// time goes besides the device's own work (the per-op profile).
struct HostTimes {
    uint64_t calls = 0;       ///< decode() calls summed
    uint64_t recorded = 0;    ///< of which recorded their command buffer (the rest replayed one;
                              ///< equal to calls on backends without replay)
    double prepare_ms = 0.0;  ///< cell placement, cell table, RoPE angles, input uploads
    double record_ms = 0.0;   ///< recording the command buffer (descriptor sets, dispatches),
                              ///< or finding the step's recorded one
    double submit_wait_ms = 0.0;  ///< queue submit until the fence signals, plus timestamp reads
    double readback_ms = 0.0;     ///< copying the logits to the caller
};

/// A loaded model plus its KV cache.
class Model {
  public:
    virtual ~Model() = default;

    virtual const HParams& hparams() const = 0;
    virtual const ContextParams& context() const = 0;
    /// "cpu" (the threaded executor), "cpu-ref" (the f32 reference) or the
    /// Vulkan device name: what reports and the run log name as the backend.
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

    /// KV cells new sequences could still use: cells of blocks no sequence
    /// holds (free, or kept only by the prefix cache); a multiple of the
    /// block size.
    virtual uint32_t n_free_cells() const = 0;

    /// Memory held now, by purpose. Cheap and safe to call from another
    /// thread while decode() runs (counters and a driver query).
    virtual MemoryReport memory_report() const = 0;
    /// The device the model runs on (backend "cpu" with empty fields for
    /// the CPU reference).
    virtual DeviceFacts device_facts() const = 0;

    /// Device time of the last decode() from timestamp queries (its command
    /// buffer's first command to its last), ms; negative when the backend
    /// or device has none (the CPU backends: their busy time is the
    /// calling thread's wall time in decode()). Feeds the busy share.
    virtual double last_device_ms() const { return -1.0; }

    /// Profiling: whether set_profiling(true) records per-op device times
    /// (the Vulkan backend; ops are empty when the device has no
    /// timestamps). The default is a model without profiling.
    virtual bool can_profile() const { return false; }
    /// Turns per-op timing and host-phase timing of decode() on or off.
    /// Ignored when can_profile() is false.
    virtual void set_profiling(bool on) { (void)on; }
    /// Forgets the times summed so far.
    virtual void clear_profile() {}
    /// Per-op device times summed over decode() calls since clear_profile().
    virtual const model::Profile& profile() const;
    /// Host phases of the same calls.
    virtual const HostTimes& host_times() const;
    /// The KV pool (blocks, each sequence's block table, the prefix cache).
    /// The scheduler plans admission and reuses cached prefixes through
    /// it; only the thread that calls decode() may use it.
    virtual KvCells& kv_cells() = 0;
    virtual const KvCells& kv_cells() const = 0;
};

}  // namespace wb::model
