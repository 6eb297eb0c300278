#include "exec/vk/buffer.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>

#include "exec/vk/error.h"

namespace wb::vk {

namespace {

constexpr uint64_t kStagingChunk = 64ull << 20;  // bytes per staging round trip

/// Records `fn` into a one-time command buffer, submits it and waits.
void one_shot(Context& ctx, const std::function<void(VkCommandBuffer)>& fn) {
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = ctx.command_pool();
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    check(vkAllocateCommandBuffers(ctx.device(), &ai, &cmd), "vkAllocateCommandBuffers");
    try {
        VkCommandBufferBeginInfo bi{};
        bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
        fn(cmd);
        check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
        ctx.submit_and_wait(cmd);
    } catch (...) {
        vkFreeCommandBuffers(ctx.device(), ctx.command_pool(), 1, &cmd);
        throw;
    }
    vkFreeCommandBuffers(ctx.device(), ctx.command_pool(), 1, &cmd);
}

}  // namespace

Buffer::Buffer(Context& ctx, uint64_t bytes, Memory mem, Purpose purpose)
    : ctx_(&ctx),
      size_(std::max<uint64_t>(4, (bytes + 3) & ~uint64_t{3})),
      mem_(mem),
      purpose_(purpose) {
    // The allocation is rounded up to whole 16-byte texels plus one spare
    // texel (see texels()); accounting counts the requested bytes.
    texels_ = (size_ + 15) / 16 + 1;
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = texels_ * 16;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(ctx.device(), &bci, nullptr, &buffer_), "vkCreateBuffer");

    VkMemoryRequirements req{};
    vkGetBufferMemoryRequirements(ctx.device(), buffer_, &req);
    int type = -1;
    if (mem == Memory::Device) {
        type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
        if (type < 0) type = ctx.find_memory_type(req.memoryTypeBits, 0);
    } else {
        type = ctx.find_memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                            VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    }
    if (type < 0) {
        release();
        throw Error("no Vulkan memory type for a " + std::to_string(size_) + "-byte " +
                        purpose_name(purpose) + " buffer",
                    VK_ERROR_OUT_OF_DEVICE_MEMORY);
    }
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = static_cast<uint32_t>(type);
    const VkResult r = vkAllocateMemory(ctx.device(), &mai, nullptr, &memory_);
    if (r != VK_SUCCESS) {
        release();
        throw Error(std::string("vkAllocateMemory: ") + result_name(r) + " (" +
                        std::to_string(req.size) + " bytes for " + purpose_name(purpose) + ")",
                    r);
    }
    check(vkBindBufferMemory(ctx.device(), buffer_, memory_, 0), "vkBindBufferMemory");
    if (mem == Memory::Host)
        check(vkMapMemory(ctx.device(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory");
    ctx.account(purpose_, static_cast<int64_t>(size_));
}

Buffer::~Buffer() {
    release();
}

Buffer::Buffer(Buffer&& o) noexcept {
    *this = std::move(o);
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        release();
        ctx_ = o.ctx_;
        buffer_ = o.buffer_;
        memory_ = o.memory_;
        size_ = o.size_;
        mem_ = o.mem_;
        purpose_ = o.purpose_;
        mapped_ = o.mapped_;
        texels_ = o.texels_;
        views_ = o.views_;
        o.views_ = {};
        o.buffer_ = VK_NULL_HANDLE;
        o.memory_ = VK_NULL_HANDLE;
        o.mapped_ = nullptr;
        o.size_ = 0;
    }
    return *this;
}

void Buffer::release() {
    if (!ctx_) return;
    for (VkBufferView& v : views_) {
        if (v) vkDestroyBufferView(ctx_->device(), v, nullptr);
        v = VK_NULL_HANDLE;
    }
    if (memory_) {
        if (mapped_) vkUnmapMemory(ctx_->device(), memory_);
        vkFreeMemory(ctx_->device(), memory_, nullptr);
        ctx_->account(purpose_, -static_cast<int64_t>(size_));
    }
    if (buffer_) vkDestroyBuffer(ctx_->device(), buffer_, nullptr);
    buffer_ = VK_NULL_HANDLE;
    memory_ = VK_NULL_HANDLE;
    mapped_ = nullptr;
}

void Buffer::upload(const void* src, uint64_t bytes, uint64_t offset) {
    if (offset > size_ || bytes > size_ - offset) {
        throw std::out_of_range("vk::Buffer::upload: " + std::to_string(bytes) +
                                " bytes at offset " + std::to_string(offset) +
                                " past the end of a " + std::to_string(size_) + "-byte buffer");
    }
    if (bytes == 0) return;
    if (mapped_) {
        std::memcpy(static_cast<char*>(mapped_) + offset, src, bytes);
        return;
    }
    Buffer staging(*ctx_, std::min(bytes, kStagingChunk), Memory::Host, Purpose::Staging);
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t n = std::min(bytes - done, kStagingChunk);
        std::memcpy(staging.mapped(), static_cast<const char*>(src) + done, n);
        one_shot(*ctx_, [&](VkCommandBuffer cmd) {
            VkBufferCopy region{0, offset + done, n};
            vkCmdCopyBuffer(cmd, staging.handle(), buffer_, 1, &region);
        });
        done += n;
    }
}

void Buffer::download(void* dst, uint64_t bytes, uint64_t offset) const {
    if (offset > size_ || bytes > size_ - offset) {
        throw std::out_of_range("vk::Buffer::download: " + std::to_string(bytes) +
                                " bytes at offset " + std::to_string(offset) +
                                " past the end of a " + std::to_string(size_) + "-byte buffer");
    }
    if (bytes == 0) return;
    if (mapped_) {
        std::memcpy(dst, static_cast<const char*>(mapped_) + offset, bytes);
        return;
    }
    Buffer staging(*ctx_, std::min(bytes, kStagingChunk), Memory::Host, Purpose::Staging);
    for (uint64_t done = 0; done < bytes;) {
        const uint64_t n = std::min(bytes - done, kStagingChunk);
        one_shot(*ctx_, [&](VkCommandBuffer cmd) {
            VkBufferCopy region{offset + done, 0, n};
            vkCmdCopyBuffer(cmd, buffer_, staging.handle(), 1, &region);
        });
        std::memcpy(static_cast<char*>(dst) + done, staging.mapped(), n);
        done += n;
    }
}

VkBufferView Buffer::texel_view(VkFormat format) const {
    const int slot = format == VK_FORMAT_R32G32B32A32_UINT     ? 0
                     : format == VK_FORMAT_R32G32B32A32_SFLOAT ? 1
                                                               : -1;
    if (slot < 0) throw std::invalid_argument("vk::Buffer::texel_view: not a 16-byte texel format");
    if (views_[slot]) return views_[slot];
    if (texels_ > ctx_->info().max_texel_buffer_elements) {
        throw std::invalid_argument("vk::Buffer::texel_view: " + std::to_string(texels_) +
                                    " texels exceed the device's maxTexelBufferElements " +
                                    std::to_string(ctx_->info().max_texel_buffer_elements));
    }
    VkBufferViewCreateInfo vi{};
    vi.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO;
    vi.buffer = buffer_;
    vi.format = format;
    vi.offset = 0;
    vi.range = texels_ * 16;
    check(vkCreateBufferView(ctx_->device(), &vi, nullptr, &views_[slot]), "vkCreateBufferView");
    return views_[slot];
}

void Buffer::fill(uint32_t word) {
    if (mapped_) {
        auto* p = static_cast<uint32_t*>(mapped_);
        std::fill(p, p + size_ / 4, word);
        return;
    }
    one_shot(*ctx_,
             [&](VkCommandBuffer cmd) { vkCmdFillBuffer(cmd, buffer_, 0, VK_WHOLE_SIZE, word); });
}

}  // namespace wb::vk
