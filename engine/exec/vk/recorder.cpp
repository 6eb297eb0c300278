#include "exec/vk/recorder.h"

#include <algorithm>
#include <stdexcept>

#include "exec/vk/error.h"

namespace wb::vk {

namespace {
constexpr uint32_t kSetsPerPool = 512;

void record_dispatch(VkCommandBuffer cmd, const Pipeline& p, VkDescriptorSet set, const void* push,
                     uint32_t gx, uint32_t gy, uint32_t gz) {
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.handle());
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout(), 0, 1, &set, 0,
                            nullptr);
    if (p.push_bytes())
        vkCmdPushConstants(cmd, p.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes(), push);
    vkCmdDispatch(cmd, gx, gy, gz);
}
constexpr uint32_t kBuffersPerSet = 8;
constexpr uint32_t kTexelsPerSet = 2;   // texel-buffer bindings per set, on average
constexpr uint32_t kMaxQueries = 8192;  // timestamps per command buffer (ops + 1)
}  // namespace

Recorder::Recorder(Context& ctx, Barriers barriers) : ctx_(ctx), barriers_(barriers) {
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = ctx.command_pool();
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(vkAllocateCommandBuffers(ctx.device(), &ai, &cmd_), "vkAllocateCommandBuffers");
}

Recorder::~Recorder() {
    VkDevice dev = ctx_.device();
    for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(dev, p, nullptr);
    if (queries_) vkDestroyQueryPool(dev, queries_, nullptr);
    if (span_) vkDestroyQueryPool(dev, span_, nullptr);
    if (cmd_) vkFreeCommandBuffers(dev, ctx_.command_pool(), 1, &cmd_);
}

void Recorder::begin(bool timestamps, bool reusable) {
    for (VkDescriptorPool p : pools_)
        check(vkResetDescriptorPool(ctx_.device(), p, 0), "vkResetDescriptorPool");
    pool_index_ = 0;
    op_names_.clear();
    held_.clear();
    holding_ = false;
    n_barriers_ = 0;
    hazards_.barrier();
    ended_ = false;
    reusable_ = reusable;
    if (timestamps && ctx_.info().timestamps && !queries_) {
        VkQueryPoolCreateInfo qi{};
        qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
        qi.queryCount = kMaxQueries;
        check(vkCreateQueryPool(ctx_.device(), &qi, nullptr, &queries_), "vkCreateQueryPool");
        query_capacity_ = kMaxQueries;
    }
    check(vkResetCommandBuffer(cmd_, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = reusable ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer");
    timestamps_ = timestamps && queries_ != VK_NULL_HANDLE;
    device_ms_ = -1.0;
    if (ctx_.info().timestamps) {
        // The span of the whole recording, for the engine's busy share: two
        // timestamps cost nothing next to a step.
        if (!span_) {
            VkQueryPoolCreateInfo qi{};
            qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
            qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
            qi.queryCount = 2;
            check(vkCreateQueryPool(ctx_.device(), &qi, nullptr, &span_), "vkCreateQueryPool");
        }
        vkCmdResetQueryPool(cmd_, span_, 0, 2);
        vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, span_, 0);
    }
    if (timestamps_) {
        vkCmdResetQueryPool(cmd_, queries_, 0, query_capacity_);
        vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
    }
}

VkDescriptorSet Recorder::allocate_set(VkDescriptorSetLayout layout) {
    for (;;) {
        if (pool_index_ == pools_.size()) {
            const VkDescriptorPoolSize sizes[] = {
                {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * kBuffersPerSet},
                {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kSetsPerPool * kTexelsPerSet}};
            VkDescriptorPoolCreateInfo pi{};
            pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
            pi.maxSets = kSetsPerPool;
            pi.poolSizeCount = 2;
            pi.pPoolSizes = sizes;
            VkDescriptorPool pool = VK_NULL_HANDLE;
            check(vkCreateDescriptorPool(ctx_.device(), &pi, nullptr, &pool),
                  "vkCreateDescriptorPool");
            pools_.push_back(pool);
        }
        VkDescriptorSetAllocateInfo ai{};
        ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
        ai.descriptorPool = pools_[pool_index_];
        ai.descriptorSetCount = 1;
        ai.pSetLayouts = &layout;
        VkDescriptorSet set = VK_NULL_HANDLE;
        const VkResult r = vkAllocateDescriptorSets(ctx_.device(), &ai, &set);
        if (r == VK_SUCCESS) return set;
        if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
            check(r, "vkAllocateDescriptorSets");
        ++pool_index_;  // this pool is full: next (or a new) one
    }
}

void Recorder::record_or_hold(std::function<void(VkCommandBuffer)> cmd) {
    if (holding_) {
        held_.push_back(std::move(cmd));
    } else {
        cmd(cmd_);
    }
}

void Recorder::flush_held() {
    for (auto& cmd : held_) cmd(cmd_);  // Pipeline::handle() waits for each compile
    held_.clear();
    holding_ = false;
}

void Recorder::barrier() {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages =
        VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    record_or_hold([mb, stages](VkCommandBuffer cmd) {
        vkCmdPipelineBarrier(cmd, stages, stages, 0, 1, &mb, 0, nullptr, 0, nullptr);
    });
    hazards_.barrier();
}

void Recorder::order(const std::vector<HazardTracker::Id>& reads,
                     const std::vector<HazardTracker::Id>& writes) {
    if (barriers() != Barriers::Tracked) return;  // Full: a barrier follows every op
    if (hazards_.conflicts(reads, writes)) {
        barrier();
        ++n_barriers_;
    }
    hazards_.add(reads, writes);
}

void Recorder::after_op(const std::string& op) {
    if (timestamps_ && op_names_.size() + 1 < query_capacity_) {
        record_or_hold(
            [q = queries_, i = static_cast<uint32_t>(op_names_.size() + 1)](VkCommandBuffer cmd) {
                vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, q, i);
            });
    }
    op_names_.push_back(op);
    if (barriers() == Barriers::Full) {
        barrier();
        ++n_barriers_;
    }
}

void Recorder::dispatch(const Pipeline& p, std::initializer_list<const Buffer*> buffers,
                        const void* push, uint32_t gx, uint32_t gy, uint32_t gz,
                        const std::string& op) {
    if (buffers.size() > kBuffersPerSet) {
        throw std::invalid_argument("dispatch " + p.name() + ": " + std::to_string(buffers.size()) +
                                    " buffers given, at most " + std::to_string(kBuffersPerSet) +
                                    " fit one descriptor set");
    }
    if (buffers.size() != p.n_buffers()) {
        throw std::invalid_argument("dispatch " + p.name() + ": " + std::to_string(buffers.size()) +
                                    " buffers given, pipeline has " +
                                    std::to_string(p.n_buffers()));
    }
    const auto& maxc = ctx_.info().max_workgroup_count;
    if (gx > maxc[0] || gy > maxc[1] || gz > maxc[2]) {
        throw std::invalid_argument("dispatch " + p.name() + ": " + std::to_string(gx) + "x" +
                                    std::to_string(gy) + "x" + std::to_string(gz) +
                                    " workgroups exceed the device's maxComputeWorkGroupCount");
    }
    if (gx == 0 || gy == 0 || gz == 0) return;  // empty op (e.g. no rows in this piece)
    VkDescriptorSet set = allocate_set(p.set_layout());
    std::vector<VkDescriptorBufferInfo> infos(buffers.size());
    std::vector<VkBufferView> views(buffers.size());
    std::vector<VkWriteDescriptorSet> writes(buffers.size());
    reads_.clear();
    writes_.clear();
    uint32_t i = 0;
    for (const Buffer* b : buffers) {
        writes[i] = {};
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        const Binding kind = p.binding(i);
        if (kind == Binding::Storage) {
            infos[i] = {b->handle(), 0, VK_WHOLE_SIZE};
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
            writes[i].pBufferInfo = &infos[i];
        } else {
            views[i] = b->texel_view(kind == Binding::TexelU32x4 ? VK_FORMAT_R32G32B32A32_UINT
                                                                 : VK_FORMAT_R32G32B32A32_SFLOAT);
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
            writes[i].pTexelBufferView = &views[i];
        }
        const auto id = reinterpret_cast<HazardTracker::Id>(b->handle());
        if (p.access()[i].reads) reads_.push_back(id);
        if (p.access()[i].writes) writes_.push_back(id);
        ++i;
    }
    vkUpdateDescriptorSets(ctx_.device(), i, writes.data(), 0, nullptr);

    order(reads_, writes_);
    if (!holding_ && !p.ready()) holding_ = true;
    if (holding_) {
        const auto* bytes = static_cast<const uint8_t*>(push);
        std::vector<uint8_t> pushed(bytes, bytes + (push ? p.push_bytes() : 0));
        held_.push_back([&p, set, pushed = std::move(pushed), gx, gy, gz](VkCommandBuffer cmd) {
            record_dispatch(cmd, p, set, pushed.empty() ? nullptr : pushed.data(), gx, gy, gz);
        });
    } else {
        record_dispatch(cmd_, p, set, push, gx, gy, gz);
    }
    after_op(op);
}

void Recorder::copy(const Buffer& src, uint64_t src_off, Buffer& dst, uint64_t dst_off,
                    uint64_t bytes) {
    reads_.assign(1, reinterpret_cast<HazardTracker::Id>(src.handle()));
    writes_.assign(1, reinterpret_cast<HazardTracker::Id>(dst.handle()));
    order(reads_, writes_);
    const VkBufferCopy region{src_off, dst_off, bytes};
    record_or_hold([s = src.handle(), d = dst.handle(), region](VkCommandBuffer cmd) {
        vkCmdCopyBuffer(cmd, s, d, 1, &region);
    });
    after_op("copy");
}

void Recorder::submit(model::Profile* profile) {
    flush_held();
    // Make shader/transfer writes visible to the host reading mapped memory.
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd_,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0, nullptr);
    if (span_) vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, span_, 1);
    check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    ctx_.submit_and_wait(cmd_);
    ended_ = true;
    read_span();
    read_timestamps(profile);
}

void Recorder::resubmit(model::Profile* profile) {
    if (!ended_ || !reusable_)
        throw std::logic_error("Recorder::resubmit: no reusable recording was submitted");
    ctx_.submit_and_wait(cmd_);
    read_span();
    read_timestamps(profile);
}

void Recorder::read_span() {
    device_ms_ = -1.0;
    if (!span_) return;
    uint64_t ts[2] = {0, 0};
    check(vkGetQueryPoolResults(ctx_.device(), span_, 0, 2, sizeof ts, ts, sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          "vkGetQueryPoolResults");
    const uint64_t dt = ts[1] >= ts[0] ? ts[1] - ts[0] : 0;
    const double ns_per_tick = ctx_.info().timestamp_period_ns;
    device_ms_ = static_cast<double>(dt) * ns_per_tick * 1e-6;
}

void Recorder::read_timestamps(model::Profile* profile) {
    if (!timestamps_ || !profile || op_names_.empty()) return;
    const uint32_t n =
        static_cast<uint32_t>(std::min<size_t>(op_names_.size() + 1, query_capacity_));
    std::vector<uint64_t> ts(n);
    check(
        vkGetQueryPoolResults(ctx_.device(), queries_, 0, n, n * sizeof(uint64_t), ts.data(),
                              sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
    const double ns_per_tick = ctx_.info().timestamp_period_ns;
    for (uint32_t i = 1; i < n; ++i) {
        const uint64_t dt = ts[i] >= ts[i - 1] ? ts[i] - ts[i - 1] : 0;
        profile->add(op_names_[i - 1], static_cast<double>(dt) * ns_per_tick * 1e-6);
    }
}

}  // namespace wb::vk
