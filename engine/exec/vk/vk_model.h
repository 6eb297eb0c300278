#pragma once
// The forward pass on Vulkan: the architecture's graph (engine/model/arch/,
// the same one RefModel runs) with every op a GLSL compute shader from
// engine/exec/vk. One decode() records the whole ubatch into ONE command
// buffer, submits it once and waits on one fence. Weights stay in their
// GGUF type in device memory (dequantized in the shaders), Q|K|V and
// gate|up stacked as one matrix each where their types agree; norms and
// biases as f32; the KV cache lives in device memory, per layer
// [pool cells, n_head_kv * head_dim] (f32 or f16), with cells assigned by
// KvCells so a ubatch may mix sequences at different positions. Prefill
// (more than Kernels::vec_max_tokens() tokens) uses mat x mat, decode mat x vec.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/vk/context.h"
#include "exec/vk/kernels.h"
#include "exec/vk/recorder.h"
#include "exec/vk/vk_memory_plan.h"
#include "kv/kv_cells.h"
#include "model/model.h"
#include "model/model_desc.h"
#include "model/profile.h"

namespace wb::gguf {
class File;
}

namespace wb::model {

/// Settings of the Vulkan backend beyond ContextParams.
struct VkModelOptions {
    vk::ContextOptions device;  ///< device selector, validation, binding limit
    bool profile = false;       ///< timestamp every op (see profile())
    /// Keep each recorded step's command buffer and submit it again when a
    /// later step has the same shape (tokens, outputs, attention plans)
    /// instead of recording the graph again (env WB_VK_REPLAY=0 turns it off).
    bool replay = true;
    /// Barrier placement (vk::Recorder); Full only to compare against
    /// (env WB_VK_BARRIERS=full).
    vk::Barriers barriers = vk::Barriers::Tracked;
};

/// Host phases of decode() (model.h's HostTimes: prepare, record, submit
/// to fence, logits readback).
using VkHostTimes = HostTimes;

/// Wall time of the constructor's phases, in ms (steady clock).
struct VkLoadTimes {
    double device_ms = 0.0;  ///< Vulkan instance and device, pipeline-cache file read
    double upload_ms = 0.0;  ///< fit check, weights through staging, KV pool allocated
};

class VkModel : public Model {
  public:
    /// Creates the Vulkan context, checks that the model fits (before any
    /// upload), uploads the weights through staging and allocates the KV
    /// cache. Throws: std::runtime_error "model needs N bytes (...) but
    /// device D has M bytes available" when it does not fit (the memory
    /// plan, memory_plan.h); what ModelDesc::from_gguf throws (gguf::Error
    /// naming a missing, misshapen or unknown tensor; UnsupportedModel;
    /// ggml::UnsupportedType for weight types the shaders do not read);
    /// vk::Error for device problems; std::invalid_argument for
    /// n_ctx/n_seq_max/kv_block_size of 0, head_dim > 256, or an F16 cache with an odd KV row.
    VkModel(const gguf::File& file, const ContextParams& ctx, const VkModelOptions& opts = {});
    ~VkModel() override;

    const HParams& hparams() const override { return hp_; }
    const ContextParams& context() const override { return ctx_; }
    /// The Vulkan device name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    std::string backend_name() const override;
    void decode(const Batch& batch, std::vector<float>& logits) override;
    void seq_rm(int32_t seq_id) override { cells_.seq_rm(seq_id); }
    uint32_t n_free_cells() const override { return cells_.n_free(); }
    KvCells& kv_cells() override { return cells_; }
    const KvCells& kv_cells() const override { return cells_; }

    /// The device bytes `file` needs with `ctx` for a 512-token ubatch on
    /// a device like `kernels` (plan_memory; no device needed).
    static MemoryNeed memory_needed(const gguf::File& file, const ContextParams& ctx,
                                    const vk::KernelConfig& kernels = {});

    /// GPU time of the last decode()'s one submit (timestamp queries around
    /// the whole command buffer), ms; negative when the device has no
    /// timestamps or no decode() ran.
    double last_device_ms() const override { return last_device_ms_; }

    /// Per-op GPU times summed over decode() calls since the last
    /// clear_profile(), when profiling is on (empty otherwise or when the
    /// device has no timestamps).
    bool can_profile() const override { return true; }
    const model::Profile& profile() const override { return profile_; }
    /// Host phases of the same calls (see HostTimes).
    const HostTimes& host_times() const override { return host_times_; }
    void set_profiling(bool on) override { profiling_ = on; }
    void clear_profile() override {
        profile_.clear();
        host_times_ = HostTimes{};
    }
    /// Device bytes by purpose (the engine's accounting) and, where
    /// VK_EXT_memory_budget exists, usage/budget summed over device-local heaps.
    MemoryReport memory_report() const override;
    /// The device, spelled as DeviceFacts says (type "discrete-gpu", ...,
    /// driver version with driverInfo).
    DeviceFacts device_facts() const override;
    /// The engine's accounting and the driver's per-heap usage/budget, raw.
    vk::MemoryReport device_memory_report() const;
    const vk::DeviceInfo& device_info() const;
    /// Validation log when validation is on, else nullptr.
    const vk::ValidationLog* validation() const;
    /// The weight table and hyperparameters the model was built from.
    const ModelDesc& desc() const { return desc_; }
    /// Where the constructor's time went.
    const VkLoadTimes& load_times() const { return load_times_; }
    /// Pipelines created so far (on first use: the first ubatches create
    /// theirs) and the time that took.
    vk::Kernels::PipelineStats pipeline_stats() const;
    /// Bytes of the on-disk pipeline cache found at load (0: cold).
    uint64_t pipeline_cache_loaded_bytes() const;
    /// Pipeline barriers between ops summed over every command buffer
    /// recorded so far (a replayed step adds nothing): how many ordering
    /// points VkModelOptions::barriers put in, whether profiling is on or not.
    uint64_t barriers_recorded() const { return barriers_recorded_; }

  private:
    friend class VkOps;
    struct Impl;  // device objects (vk_model_impl.h)

    ModelDesc desc_;  // tensors' data pointers are dangling after the constructor
    const HParams& hp_ = desc_.hp;
    ContextParams ctx_;
    KvCells cells_;
    bool profiling_ = false;
    model::Profile profile_;
    HostTimes host_times_;
    double last_device_ms_ = -1.0;  // last_device_ms()
    uint64_t barriers_recorded_ = 0;
    VkLoadTimes load_times_;
    std::unique_ptr<Impl> impl_;
};

}  // namespace wb::model
