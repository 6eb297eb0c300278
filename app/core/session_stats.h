#pragma once
// SessionStats: what a session is doing now and has done since it opened,
// read in O(1) for a metrics scrape (EngineSession::stats()). Qt-free.

#include <cstdint>

namespace wb::core {

/// A session's live figures (EngineSession::stats()). Counts and times are
/// since EngineSession::open (the scheduler's start); reset_metrics() does
/// not clear them.
struct SessionStats {
    int32_t running = 0;           ///< requests holding a slot
    int32_t queued = 0;            ///< requests waiting for a slot (preempted ones included)
    uint32_t kv_block_size = 0;    ///< KV cells per block
    uint32_t kv_blocks_total = 0;  ///< blocks in the KV pool
    /// Blocks held by running sequences; the rest (total - used) are free
    /// for new sequences, kv_blocks_cached of them kept by the prefix cache.
    uint32_t kv_blocks_used = 0;
    uint32_t kv_blocks_cached = 0;  ///< free blocks whose K/V the prefix cache keeps
    /// Prompt tokens of requests whose first prefill ended, and how many of
    /// them came from the prefix cache instead of being computed.
    uint64_t prompt_tokens = 0;
    uint64_t prompt_tokens_cached = 0;
    uint64_t steps = 0;  ///< forward passes (ubatches) run
    /// Time the engine was busy with the model's forward passes, ms. On the
    /// CPU backend: the wall time the engine (scheduler) thread spent in
    /// Model::decode. On Vulkan: the device's own time per step from
    /// timestamp queries around each submitted command buffer
    /// (Model::last_device_ms), at most the step's wall time; a device
    /// without timestamps falls back to the wall time.
    double busy_ms = 0.0;
    double wall_ms = 0.0;  ///< since open (EngineSession::now_ms())
    /// Bytes the loaded model holds now (model::MemoryReport): the driver's
    /// device-local usage where it reports one (VK_EXT_memory_budget), else
    /// the engine's own accounting (weights + KV cache + activations +
    /// staging).
    uint64_t memory_bytes = 0;
    bool memory_on_device = false;  ///< memory_bytes is device memory (Vulkan), not host
};

}  // namespace wb::core
