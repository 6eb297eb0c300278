#pragma once
// vk::Recorder: records a whole ubatch (or a test's dispatches) into ONE
// command buffer — dispatches with their descriptor sets and push
// constants, barriers, optional timestamp queries around every op — then
// submits it once and waits on one fence (Kompute's record-then-submit).
//
// Barriers: by default (Barriers::Tracked) a barrier goes only before an op
// that reads or writes a buffer an earlier op since the last barrier wrote,
// or writes one it read (HazardTracker, from each shader's readonly /
// writeonly bindings); Barriers::Full puts one after every op. Timestamps
// always use Full, so each op's time is its own.
//
// Pipelines still compiling (vk::CompileQueue): from the first op whose
// pipeline is not ready, the recorder keeps the commands on the host, in
// order, and puts them into the command buffer at submit(), waiting there
// for the compiles; descriptor sets and barrier placement are done at once.
//
// Replay: a command buffer begun `reusable` can be submitted again with
// resubmit() as long as every buffer it binds still exists; its
// descriptor sets live as long as the recording (until the next begin()).

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "exec/vk/buffer.h"
#include "exec/vk/context.h"
#include "exec/vk/hazards.h"
#include "exec/vk/pipeline.h"
#include "model/profile.h"

namespace wb::vk {

/// Where the recorder puts barriers (see the file comment).
enum class Barriers { Tracked, Full };

class Recorder {
  public:
    explicit Recorder(Context& ctx, Barriers barriers = Barriers::Tracked);
    ~Recorder();
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    /// Starts a new command buffer (resets descriptor pools and queries).
    /// `timestamps`: write a timestamp after every op if the device can.
    /// `reusable`: the recording may be submitted again (resubmit()).
    void begin(bool timestamps, bool reusable = false);

    /// Binds `buffers` to bindings 0..n-1 (whole buffers: as storage
    /// buffers, or through their 16-byte texel views where the pipeline's
    /// binding kind says so; see Buffer::texel_view), pushes `push`
    /// (pipeline.push_bytes() bytes) and dispatches gx*gy*gz workgroups,
    /// after a barrier when an earlier op conflicts (see Barriers). `op`
    /// names the row in the profile. Throws std::invalid_argument on a
    /// binding-count mismatch, a group count over maxComputeWorkGroupCount,
    /// or a texel binding of a buffer larger than maxTexelBufferElements texels.
    void dispatch(const Pipeline& p, std::initializer_list<const Buffer*> buffers, const void* push,
                  uint32_t gx, uint32_t gy, uint32_t gz, const std::string& op);

    /// vkCmdCopyBuffer of `bytes` (with a barrier as for dispatch()).
    void copy(const Buffer& src, uint64_t src_off, Buffer& dst, uint64_t dst_off, uint64_t bytes);

    /// Ends, submits, waits on the fence, and (if timestamps were on) adds
    /// each op's GPU time to `profile` when it is non-null.
    void submit(model::Profile* profile = nullptr);

    /// Submits the last recording again (begun `reusable`, then submit()ed)
    /// and waits, adding timestamps to `profile` as submit() does. Throws
    /// std::logic_error when there is no such recording.
    void resubmit(model::Profile* profile = nullptr);

    /// Device time of the last submit() or resubmit(), ms: from a timestamp
    /// written before the recording's first command to one after its last
    /// (two queries, whatever `timestamps` was; the ops' order and barriers
    /// are unchanged). Negative when the device has no timestamps or
    /// nothing was submitted since begin().
    double device_ms() const { return device_ms_; }

    /// Ops recorded since begin().
    size_t n_ops() const { return op_names_.size(); }
    /// Barriers between ops recorded since begin() (not the final one that
    /// makes results visible to the host).
    size_t n_barriers() const { return n_barriers_; }
    /// The barrier mode in effect for the current recording.
    Barriers barriers() const { return timestamps_ ? Barriers::Full : barriers_; }

  private:
    VkDescriptorSet allocate_set(VkDescriptorSetLayout layout);
    /// Puts `cmd` into the command buffer now, or after the commands held
    /// back for a pipeline that is still compiling (see the file comment).
    void record_or_hold(std::function<void(VkCommandBuffer)> cmd);
    /// Writes the held-back commands (waiting for their pipelines).
    void flush_held();
    void barrier();
    /// Tracked mode: a barrier first when this op conflicts with earlier ones.
    void order(const std::vector<HazardTracker::Id>& reads,
               const std::vector<HazardTracker::Id>& writes);
    void after_op(const std::string& op);
    void read_timestamps(model::Profile* profile);
    /// Reads the span queries of the submit that just ended into device_ms_.
    void read_span();

    Context& ctx_;
    Barriers barriers_;
    VkCommandBuffer cmd_ = VK_NULL_HANDLE;
    std::vector<VkDescriptorPool> pools_;
    size_t pool_index_ = 0;
    VkQueryPool queries_ = VK_NULL_HANDLE;  // created on the first timestamped begin()
    uint32_t query_capacity_ = 0;
    bool timestamps_ = false;
    VkQueryPool span_ = VK_NULL_HANDLE;  // 2 queries: first and last command (device_ms())
    double device_ms_ = -1.0;
    bool reusable_ = false;
    bool ended_ = false;  // recorded and submitted: resubmit() may run it again
    size_t n_barriers_ = 0;
    HazardTracker hazards_;
    std::vector<HazardTracker::Id> reads_, writes_;  // scratch, per op
    std::vector<std::string> op_names_;
    bool holding_ = false;  // a pipeline was not ready: commands wait in held_
    std::vector<std::function<void(VkCommandBuffer)>> held_;
};

}  // namespace wb::vk
