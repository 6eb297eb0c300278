#pragma once
// The Vulkan engine's memory plan: the device bytes VkModel allocates for a
// model, a context and a ubatch size, by purpose, from the same weight table
// and graph it runs (model/memory_plan.h), plus its host inputs and
// split-K attention scratch. Works without a device: the attention split,
// which sizes the scratch, follows a vk::KernelConfig.

#include <cstdint>

#include "exec/vk/kernels.h"
#include "model/memory_plan.h"

namespace wb::model {

/// Bytes VkModel allocates for `d` with `ctx` once it has run a ubatch of
/// `shape` (buffers grow to the largest ubatch seen and stay). `kernels`
/// decides the attention split (vk::Kernels::config_for of the device).
/// Throws std::invalid_argument for a block KV type the head dimension
/// does not divide (kv_type_problem).
MemoryNeed plan_memory(const ModelDesc& d, const ContextParams& ctx, const PlanShape& shape,
                       const vk::KernelConfig& kernels);

/// Largest n_ctx (a multiple of 256, at most `cap`) whose plan fits in
/// `budget` bytes; 0 when not even 256 cells fit.
uint32_t largest_context(const ModelDesc& d, ContextParams ctx, const PlanShape& shape,
                         const vk::KernelConfig& kernels, uint64_t budget, uint32_t cap);

}  // namespace wb::model
