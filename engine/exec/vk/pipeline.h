#pragma once
// vk::Pipeline: one compute pipeline from embedded SPIR-V, with N storage
// buffers at bindings 0..N-1 of set 0, a push-constant block, and
// specialization constants (ids 0..k-1, all 32-bit; id 0 is the workgroup
// size by convention of shaders/include/common.glsl). Built through the
// Context's pipeline cache.
//
// The driver's compile (vkCreateComputePipelines) may run on a worker
// thread of a CompileQueue: layouts exist at once, so a recorder can
// allocate and write descriptor sets; handle() waits for the compile. The
// first step of a model thus compiles its pipelines side by side and
// beside the recording instead of one after another (issue: cold start).

#include <vulkan/vulkan.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <semaphore>
#include <string>
#include <vector>

#include "exec/vk/context.h"
#include "exec/vk/spirv_access.h"

namespace wb::vk {

/// How a shader reads one of its buffers: a storage buffer (every
/// shader's default) or a uniform texel buffer with 16-byte texels, the
/// fast path for reads on CPU devices (see shaders/matvec_texel.comp).
enum class Binding : uint8_t {
    Storage,     ///< VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
    TexelU32x4,  ///< VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, VK_FORMAT_R32G32B32A32_UINT
    TexelF32x4,  ///< VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, VK_FORMAT_R32G32B32A32_SFLOAT
};

/// What a compute pipeline needs to be built.
struct PipelineDesc {
    std::string name;                 ///< for messages and the profile ("mul_mat_vec_q8_0")
    const uint32_t* spirv = nullptr;  ///< SPIR-V words (embedded by shaders/CMakeLists.txt)
    size_t spirv_bytes = 0;
    uint32_t n_buffers = 0;         ///< buffers at bindings 0..n_buffers-1
    std::vector<Binding> bindings;  ///< kind of each binding; empty: all Storage
    uint32_t push_bytes = 0;        ///< size of the push-constant block (<= 128)
    std::vector<uint32_t> spec;     ///< specialization constants, ids 0..spec.size()-1
};

/// Runs pipeline compiles on worker threads, at most `threads` at once
/// (Vulkan allows vkCreateComputePipelines from several threads on one
/// device and one internally synchronized VkPipelineCache).
class CompileQueue {
  public:
    /// `threads` >= 1 compiles at a time.
    explicit CompileQueue(unsigned threads);
    unsigned threads() const { return threads_; }
    /// Starts `job` on its own thread once one of the `threads` slots is
    /// free; the future holds the job's exception, if any.
    std::shared_future<void> run(std::function<void()> job);

  private:
    unsigned threads_;
    std::counting_semaphore<1024> slots_;
};

class Pipeline {
  public:
    /// Builds the shader module and layouts here; the compile runs here too
    /// when `queue` is null, else on one of the queue's threads (handle()
    /// waits for it). Throws vk::Error when a call fails (e.g. a shader the
    /// driver rejects; for a queued compile, from handle()) and
    /// std::invalid_argument when push_bytes exceeds the device limit or
    /// `bindings` is neither empty nor n_buffers long.
    Pipeline(Context& ctx, const PipelineDesc& desc, CompileQueue* queue = nullptr);
    ~Pipeline();
    Pipeline(const Pipeline&) = delete;
    Pipeline& operator=(const Pipeline&) = delete;

    const std::string& name() const { return name_; }
    uint32_t n_buffers() const { return n_buffers_; }
    uint32_t push_bytes() const { return push_bytes_; }
    /// Kind of binding i (< n_buffers()).
    Binding binding(uint32_t i) const { return bindings_[i]; }
    /// The compiled pipeline; waits for a queued compile (the wait is
    /// added to waited_ms()) and rethrows its vk::Error.
    VkPipeline handle() const;
    /// Whether handle() would return without waiting.
    bool ready() const;
    /// Wall time of the driver's compile, ms (0 until it finished).
    double compile_ms() const { return compile_ms_.load(); }
    /// Host time spent inside handle() waiting for the compile, ms.
    double waited_ms() const { return waited_ms_.load(); }
    VkPipelineLayout layout() const { return layout_; }
    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    /// [n_buffers] what the shader may do with each binding (readonly /
    /// writeonly in its source), for the recorder's barrier placement.
    const std::vector<BindingAccess>& access() const { return access_; }

  private:
    void compile(std::vector<uint32_t> spec);
    void destroy();

    Context& ctx_;
    std::string name_;
    uint32_t n_buffers_ = 0;
    uint32_t push_bytes_ = 0;
    std::vector<Binding> bindings_;
    std::vector<BindingAccess> access_;
    VkShaderModule module_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout layout_ = VK_NULL_HANDLE;
    VkPipeline pipeline_ = VK_NULL_HANDLE;   // written by compile(), before compiled_ is ready
    std::shared_future<void> compiled_;      // valid only for a queued compile
    mutable std::atomic<bool> done_{false};  // compiled_ finished without an error
    std::atomic<double> compile_ms_{0.0};
    mutable std::atomic<double> waited_ms_{0.0};
};

}  // namespace wb::vk
