#pragma once
// vk::Recorder: records a whole ubatch (or a test's dispatches) into ONE
// command buffer — dispatches with their descriptor sets and push
// constants, a barrier after each, optional timestamp queries around every
// op — then submits it once and waits on one fence (Kompute's
// record-then-submit).

#include <vulkan/vulkan.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "vk/buffer.h"
#include "vk/context.h"
#include "vk/pipeline.h"
#include "vk/profile.h"

namespace wb::vk {

class Recorder {
  public:
    explicit Recorder(Context& ctx);
    ~Recorder();
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    /// Starts a new command buffer (resets descriptor pools and queries).
    /// `timestamps`: write a timestamp after every op if the device can.
    void begin(bool timestamps);

    /// Binds `buffers` to bindings 0..n-1 (whole buffers: as storage
    /// buffers, or through their 16-byte texel views where the pipeline's
    /// binding kind says so; see Buffer::texel_view), pushes `push`
    /// (pipeline.push_bytes() bytes), dispatches gx*gy*gz workgroups, then a
    /// compute->compute barrier. `op` names the row in the profile.
    /// Throws std::invalid_argument on a binding-count mismatch, a group
    /// count over maxComputeWorkGroupCount, or a texel binding of a buffer
    /// larger than maxTexelBufferElements texels.
    void dispatch(const Pipeline& p, std::initializer_list<const Buffer*> buffers, const void* push,
                  uint32_t gx, uint32_t gy, uint32_t gz, const std::string& op);

    /// vkCmdCopyBuffer of `bytes` + a barrier.
    void copy(const Buffer& src, uint64_t src_off, Buffer& dst, uint64_t dst_off, uint64_t bytes);

    /// Ends, submits, waits on the fence, and (if timestamps were on) adds
    /// each op's GPU time to `profile` when it is non-null.
    void submit(Profile* profile = nullptr);

    /// Ops recorded since begin().
    size_t n_ops() const { return op_names_.size(); }

  private:
    VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
    void barrier();

    Context& ctx_;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> pools_;
    size_t pool_index_ = 0;
    VkQueryPool queries_ = VK_NULL_HANDLE;
    uint32_t query_capacity_ = 0;
    bool timestamps_ = false;
    std::vector<std::string> op_names_;
};

}  // namespace wb::vk
